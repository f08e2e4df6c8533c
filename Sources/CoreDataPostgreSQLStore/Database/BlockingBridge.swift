import Dispatch
import Foundation

/// Runs postgres-nio's async calls for the store's synchronous protocol methods.
///
/// The store protocol is synchronous (a context's queue calls it and waits), postgres-nio is
/// async. A caller waiting on a semaphore must not wait for work that needs the thread it blocks:
/// the tasks started here therefore run on their own executor (threads of a Dispatch queue), not on
/// Swift's cooperative pool, which a caller inside a `Task` may be holding. postgres-nio's own
/// I/O runs on its event loops; neither pool is ever blocked by a waiting caller.
///
/// Threading: safe from any thread except this executor's own (a store method is never called
/// from inside a query). Every wait is bounded by the client's own timeouts.
final class BlockingBridge: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "CoreDataPostgreSQL.bridge", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Runs `body` to its end and returns its result, blocking the calling thread meanwhile.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: self) {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        switch box.result {
        case .success(let value)?: return value
        case .failure(let error)?: throw error
        case nil: throw CancellationError()
        }
    }

    /// Starts `body` on this executor without waiting (the client's run loop, listeners).
    @discardableResult
    func start(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task(executorPreference: self) { await body() }
    }
}

/// The outcome of a bridged task: written once by the task before it signals, read once by the
/// waiter after the signal, so the semaphore orders the two accesses.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
