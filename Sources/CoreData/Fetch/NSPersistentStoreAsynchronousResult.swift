import CoreDataModel
import Foundation

/// The result of an asynchronous request: its context, its progress, its error, and
/// cancellation.
///
/// Matches Apple's `NSPersistentStoreAsynchronousResult`.
/// Threading: every property may be read from any thread.
open class NSPersistentStoreAsynchronousResult: NSPersistentStoreResult, @unchecked Sendable {
    private let lock = NSLock()
    private var storedError: Error?

    /// The context the request runs in.
    public let managedObjectContext: NSManagedObjectContext
    /// The request's progress: its total is the number of results once known, and
    /// `cancel()` on it cancels the request. A child of the `Progress` that was current on the
    /// thread that executed the request, if there was one.
    public let progress: Progress?

    init(context: NSManagedObjectContext, progress: Progress) {
        self.managedObjectContext = context
        self.progress = progress
        super.init()
    }

    /// Why the request failed: the fetch's error, or `NSUserCancelledError` (3072) in
    /// `NSCocoaErrorDomain` when it was cancelled; `nil` while running and after success.
    public var operationError: Error? {
        lock.lock()
        defer { lock.unlock() }
        return storedError
    }

    func setOperationError(_ error: Error) {
        lock.lock()
        storedError = error
        lock.unlock()
    }

    /// Cancels the request. A fetch that has not started does not run; a running one stops
    /// between objects. Either way `finalResult` stays `nil`, `operationError` is
    /// `NSUserCancelledError`, and the completion block is still called (so it always learns
    /// that the request is over). Cancelling a finished request does nothing.
    open func cancel() {
        progress?.cancel()
    }
}
