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

    /// Runs `body` as ``run(_:)`` does, giving up after `timeout` seconds with
    /// ``BridgeTimeout``: the pool waits for a server that does not answer as long as its own
    /// retries last, which is far too long for opening a store.
    func run<T: Sendable>(timeout: Double, _ body: @escaping @Sendable () async throws -> T) throws -> T {
        try run {
            try await withThrowingTaskGroup(of: T.self) { group in
                group.addTask { try await body() }
                group.addTask {
                    try await Task.sleep(nanoseconds: UInt64(max(0, timeout) * 1_000_000_000))
                    throw BridgeTimeout(seconds: timeout)
                }
                defer { group.cancelAll() }
                guard let first = try await group.next() else { throw CancellationError() }
                return first
            }
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

/// A bridged call that did not finish in time.
struct BridgeTimeout: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "no answer within \(seconds) s" }
}
