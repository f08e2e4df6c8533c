import CoreDataModel
import Foundation

/// The result of an ``NSAsynchronousFetchRequest``: the request and, once it has finished,
/// its results.
///
/// Matches Apple's `NSAsynchronousFetchResult`.
/// Threading: every property may be read from any thread; the objects in ``finalResult``
/// belong to the context's queue, as any fetched objects do.
open class NSAsynchronousFetchResult<ResultType: NSFetchRequestResult>: NSPersistentStoreAsynchronousResult, @unchecked Sendable {
    private let resultLock = NSLock()
    private var storedResult: [ResultType]?

    /// The request that produced this result.
    public let fetchRequest: NSAsynchronousFetchRequest<ResultType>

    init(fetchRequest: NSAsynchronousFetchRequest<ResultType>, context: NSManagedObjectContext, progress: Progress) {
        self.fetchRequest = fetchRequest
        super.init(context: context, progress: progress)
    }

    /// The fetched results; `nil` until the fetch has finished, and after a failure or
    /// cancellation.
    public var finalResult: [ResultType]? {
        resultLock.lock()
        defer { resultLock.unlock() }
        return storedResult
    }

    /// Runs the fetch; called on the context's queue.
    func run() {
        let context = managedObjectContext
        let tracker = FetchProgress(progress ?? Progress(totalUnitCount: 1))
        do {
            try tracker.checkCancelled(force: true)
            let results = try context.fetchResults(fetchRequest.fetchRequest, progress: tracker)
            try tracker.checkCancelled(force: true)
            let typed = results.compactMap { $0 as? ResultType }
            resultLock.lock()
            storedResult = typed
            resultLock.unlock()
            tracker.finish(count: typed.count)
        } catch {
            setOperationError(error)
        }
        fetchRequest.completionBlock?(self)
    }
}
