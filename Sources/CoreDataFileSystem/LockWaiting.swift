#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// How a writer waits for a file's exclusive lock: non-blocking tries with growing pauses for a
/// short while, then a thread blocked in the kernel (``LockAttempt``).
///
/// A lock held for one commit is usually free within the tries, and a process that keeps the
/// lock for a run of saves writes them faster than one that hands it over after each. The
/// blocking wait is woken the moment the holder lets go: polling alone would leave the lock to a
/// holder that takes it again at once (a writer saving in a loop) and starve everyone else. A
/// waiter that gives up leaves its thread to let the lock go as soon as it gets it. Both stores
/// wait this way (Formats/wal.md §9, Formats/xml-store.md §11).
package struct LockWaiting: Sendable {
    /// How long the non-blocking tries go on, in seconds.
    package var pollingTime: Double
    /// The first and the longest pause between tries, in microseconds.
    package var firstPause: UInt32
    package var longestPause: UInt32

    package init(pollingTime: Double, firstPause: UInt32, longestPause: UInt32) {
        self.pollingTime = pollingTime
        self.firstPause = firstPause
        self.longestPause = longestPause
    }

    /// Takes `file`'s exclusive lock within `timeout` seconds; `false` when another holds it
    /// all that time (`timeout` 0: one try).
    ///
    /// - Parameters:
    ///   - pending: a blocking attempt an earlier call on the same file gave up on, which this
    ///     call takes over (a second attempt would get the lock with it, and the first would let
    ///     it go for both); set when this call gives up on one.
    ///   - closingOnTimeout: whether an abandoned attempt closes the file when it ends (for a
    ///     file opened only to be locked; the caller must then not close it while `pending` is set).
    /// - Throws: the file layer's error when locking fails for another reason.
    package func lockExclusively(_ file: any StoreFile, timeout: Double, pending: inout LockAttempt?, closingOnTimeout: Bool) throws(StoreIOError) -> Bool {
        let start = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
        if let attempt = pending {
            switch attempt.wait(seconds: timeout, closingOnTimeout: closingOnTimeout) {
            case .acquired:
                pending = nil
                return true
            case .failed(let error):
                pending = nil
                throw error
            case .timedOut:
                return false
            case .spent:
                pending = nil
            }
        }
        let polling = min(max(0, timeout), pollingTime)
        var pause = firstPause
        while true {
            if try file.lock(exclusive: true, wait: false) { return true }
            guard elapsed() < polling else { break }
            usleep(pause)
            pause = min(pause * 2, longestPause)
        }
        guard timeout > elapsed() else { return false }
        let attempt = LockAttempt(file)
        switch attempt.wait(seconds: max(0, timeout - elapsed()), closingOnTimeout: closingOnTimeout) {
        case .acquired:
            return true
        case .failed(let error):
            throw error
        case .timedOut, .spent:
            pending = attempt
            return false
        }
    }
}

/// One blocking lock attempt on its own thread, which the waiter may give up on (and a later
/// waiter of the same handle take over: the lock belongs to the open file, not the thread).
package final class LockAttempt: @unchecked Sendable {
    package enum Outcome {
        case acquired
        case failed(StoreIOError)
        case timedOut
        /// It finished while nobody waited and let the lock go: try again.
        case spent
    }

    private let condition = NSCondition()
    private let file: any StoreFile
    private var result: Result<Bool, StoreIOError>?
    private var abandoned = false
    private var closeWhenAbandoned = false
    private var released = false

    package init(_ file: any StoreFile) {
        self.file = file
        let thread = Thread { [self] in
            let outcome: Result<Bool, StoreIOError>
            do throws(StoreIOError) { outcome = .success(try file.lock(exclusive: true, wait: true)) } catch { outcome = .failure(error) }
            finish(outcome)
        }
        thread.name = "CoreData store lock"
        thread.start()
    }

    private func finish(_ outcome: Result<Bool, StoreIOError>) {
        condition.lock()
        defer { condition.unlock() }
        result = outcome
        if abandoned {
            // Nobody waits for it: let the lock go, and close a file no handle owns.
            if case .success(true) = outcome { file.unlock() }
            if closeWhenAbandoned { file.close() }
            released = true
        }
        condition.broadcast()
    }

    /// Waits up to `seconds` for the lock. On a timeout the attempt goes on, abandoned (closing
    /// the file when it ends, if asked) until a later `wait` takes it over.
    package func wait(seconds: Double, closingOnTimeout: Bool) -> Outcome {
        condition.lock()
        defer { condition.unlock() }
        if released { return .spent }
        abandoned = false
        let deadline = Date().addingTimeInterval(max(0, seconds))
        while result == nil, condition.wait(until: deadline) {}
        switch result {
        case .success(true)?: return .acquired
        case .success(false)?: return .spent
        case .failure(let error)?: return .failed(error)
        case nil:
            abandoned = true
            closeWhenAbandoned = closingOnTimeout
            return .timedOut
        }
    }
}
