import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

extension BinaryStore: ExternalChangeObserving {
    /// Polls the store's shared counters every millisecond (a memory load each, Formats/wal.md
    /// §9), or its files every 10 ms where the file layer has no shared memory, on a thread of
    /// its own; reads what changed before calling `onChange`, so a fetch made in the callback
    /// sees it.
    public func startObservingChanges(_ onChange: @escaping @Sendable () -> Void) {
        let observer = ChangeObserver()
        observerLock.withLock {
            changeObserver?.stop()
            changeObserver = observer
        }
        // The baseline is read before this returns: read on the thread, it would miss a save
        // made between this call and the thread's first turn (seen under load in CI).
        let baseline = changeState()
        let thread = Thread { [weak self] in
            defer { observer.finished.signal() }
            var last = Optional(baseline)
            while !observer.isStopped {
                guard let self else { return }
                usleep(self.trustedCounters == nil ? 10_000 : 1_000)
                if observer.isStopped { return }
                let now = self.changeState()
                guard now != last else { continue }
                // The counters moved; read the files (errors surface at the next fetch).
                try? self.refresh()
                last = self.changeState()
                if !observer.isStopped { onChange() }
            }
        }
        thread.name = "CoreData remote-change observer"
        observer.thread = thread
        thread.start()
    }

    /// Stops the observation and waits (up to a second) until its thread has left the store
    /// alone, so a close that follows never races it; from the observer's own callback it only
    /// asks the thread to stop.
    public func stopObservingChanges() {
        let observer = observerLock.withLock { () -> ChangeObserver? in
            let current = changeObserver
            current?.stop()
            changeObserver = nil
            return current
        }
        guard let observer, let thread = observer.thread, Thread.current !== thread else { return }
        _ = observer.finished.wait(timeout: .now() + 1)
    }

    /// What tells that the store changed: the shared counters while they can be trusted, else
    /// the published log end and root generation as the files say.
    private func changeState() -> [UInt64] {
        // The first word names the source, so a switch from counters to files (an unheard
        // writer marked NAME-shm) is never taken for equal values.
        if let counters = trustedCounters { return [0, counters.load(SharedCounter.commits.rawValue), counters.load(SharedCounter.roots.rawValue)] }
        try? refresh()
        return rw.withReadLock { [1, publishedLogEnd, root.generation] }
    }
}

/// The stop flag of one observation.
final class ChangeObserver: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private var observing: Thread?
    /// The observing thread, set before it starts.
    var thread: Thread? {
        get { lock.withLock { observing } }
        set { lock.withLock { observing = newValue } }
    }
    /// Signalled when the thread has left its loop.
    let finished = DispatchSemaphore(value: 0)
    var isStopped: Bool { lock.withLock { stopped } }
    func stop() { lock.withLock { stopped = true } }
}
