import Foundation

/// Carries an asynchronous fetch's `Progress` into the fetch: the number of objects to
/// register once the store has answered, one unit per registered object, and cancellation.
///
/// Progress objects lock on every update, so completed units are published every
/// ``reportInterval`` objects and at the end.
final class FetchProgress {
    static let reportInterval = 64

    private let progress: Progress
    private var expected = 0
    private var done = 0

    init(_ progress: Progress) {
        self.progress = progress
    }

    /// `count` more objects are coming.
    func expect(_ count: Int) {
        expected += count
        progress.totalUnitCount = Int64(max(1, expected))
    }

    /// One more object is registered.
    func advance() {
        done += 1
        if done % Self.reportInterval == 0 { progress.completedUnitCount = Int64(done) }
    }

    /// Throws `NSUserCancelledError` when the progress was cancelled; checked every
    /// ``reportInterval`` objects unless `force`.
    func checkCancelled(force: Bool = false) throws {
        guard force || done % Self.reportInterval == 0 else { return }
        if progress.isCancelled {
            throw coreDataError(NSUserCancelledError, "the asynchronous fetch was cancelled")
        }
    }

    /// The fetch is complete with `count` results.
    func finish(count: Int) {
        progress.totalUnitCount = Int64(max(1, count))
        progress.completedUnitCount = progress.totalUnitCount
    }
}
