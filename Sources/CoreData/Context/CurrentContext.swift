import Foundation

/// Apple's Objective-C name for the kinds of context queue, as Swift code written against the
/// older API spells it: `NSManagedObjectContext(concurrencyType: NSManagedObjectContextConcurrencyType.privateQueueConcurrencyType)`.
///
/// The same type as ``NSManagedObjectContext/ConcurrencyType``, with the same cases and raw values.
public typealias NSManagedObjectContextConcurrencyType = NSManagedObjectContext.ConcurrencyType

/// The context whose `perform`/`performAndWait` block the calling thread is running, innermost
/// first: what Apple's `NSFetchRequest.execute()` runs against.
///
/// Kept in a thread-specific slot as an unretained pointer, set and restored around each block;
/// the block holds the context, so the pointer never outlives it. A slot rather than a task local
/// because the blocks are synchronous and run on dispatch queues, and setting a slot costs no
/// allocation on the hot `performAndWait` path.
enum CurrentContext {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "CoreData: no thread-specific key for the current context (pthread_key_create: \(status))")
        return key
    }()

    /// The context whose block is running on this thread, if any.
    static var context: NSManagedObjectContext? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<NSManagedObjectContext>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Runs `body` with `context` as the current context, restoring the previous one after
    /// (blocks nest: a `performAndWait` inside another context's block).
    static func with<T>(_ context: NSManagedObjectContext, _ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(context).toOpaque())
        defer { pthread_setspecific(key, previous) }
        return try body()
    }
}

extension NSFetchRequest {
    /// Runs the request against the context whose `perform` or `performAndWait` block is
    /// running, and returns the results.
    ///
    /// Matches Apple's `execute()`: the same as `try context.fetch(self)` inside
    /// `context.perform { … }`. Blocks nest: inside a `performAndWait` of one context within a
    /// block of another, the inner context is used.
    ///
    /// Outside any context's block there is no context to use (a main-queue context used
    /// directly on the main thread included): the call throws.
    /// - Throws: `NSCoreDataError` (134060) when no context's block is running on this thread;
    ///   otherwise the errors of ``NSManagedObjectContext/fetch(_:)``.
    public func execute() throws -> [ResultType] {
        guard let context = CurrentContext.context else {
            throw coreDataError(
                NSCoreDataError,
                "NSFetchRequest.execute() was called outside a managed object context's perform or performAndWait block; "
                    + "call it inside context.perform { } or use context.fetch(_:)")
        }
        return try context.fetch(self)
    }
}
