import CoreDataModel
import Foundation

/// A fetch that runs in the background of its context's queue and reports its progress.
///
/// Matches Apple's `NSAsynchronousFetchRequest`. Execute it with
/// `NSManagedObjectContext.execute(_:)`, which returns at once with an
/// ``NSAsynchronousFetchResult``; the fetch then runs on the context's queue, after the work
/// already queued there, and `completionBlock` is called on that queue with the same result,
/// its ``NSAsynchronousFetchResult/finalResult`` filled in:
///
/// ```swift
/// let request = NSAsynchronousFetchRequest(fetchRequest: Book.fetchRequest()) { result in
///     let books = result.finalResult ?? []
/// }
/// let running = try context.execute(request) as? NSAsynchronousFetchResult<NSFetchRequestResult>
/// running?.progress   // a Foundation Progress; cancel() stops the fetch
/// ```
///
/// Threading: build it anywhere; execute it on the context's queue.
open class NSAsynchronousFetchRequest<ResultType: NSFetchRequestResult>: NSPersistentStoreRequest, @unchecked Sendable {
    /// The fetch to run.
    public let fetchRequest: NSFetchRequest<ResultType>
    /// Called on the context's queue when the fetch has finished, failed or been cancelled.
    public let completionBlock: ((NSAsynchronousFetchResult<ResultType>) -> Void)?
    /// How many results are expected, to size the progress before the count is known; 0 when
    /// unknown.
    public var estimatedResultCount: Int = 0

    /// Creates a request for `request`, calling `blk` with the result when it is done.
    public init(fetchRequest request: NSFetchRequest<ResultType>, completionBlock blk: ((NSAsynchronousFetchResult<ResultType>) -> Void)? = nil) {
        self.fetchRequest = request
        self.completionBlock = blk
        super.init()
    }

    open override var requestType: RequestType { .fetchRequestType }
}

/// An asynchronous fetch the context can start without knowing its result type.
protocol AsynchronousFetchStarting {
    /// Schedules the fetch on `context`'s queue and returns its result object at once.
    func start(in context: NSManagedObjectContext) -> NSPersistentStoreResult
}

extension NSAsynchronousFetchRequest: AsynchronousFetchStarting {
    func start(in context: NSManagedObjectContext) -> NSPersistentStoreResult {
        // Created before anything runs, so that a Progress current on this thread becomes its
        // parent (Foundation's implicit progress composition), as on Apple platforms.
        let progress = Progress(totalUnitCount: Int64(max(1, estimatedResultCount)))
        let result = NSAsynchronousFetchResult<ResultType>(fetchRequest: self, context: context, progress: progress)
        context.perform { result.run() }
        return result
    }
}
