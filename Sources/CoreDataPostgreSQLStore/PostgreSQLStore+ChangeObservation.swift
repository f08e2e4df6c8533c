import CoreDataStorage
import Dispatch
import Foundation

/// Remote-change notifications through PostgreSQL's `LISTEN`/`NOTIFY` (`Formats/postgresql-store.md`
/// §9): every save, batch delete and batch update of any server notifies the store's channel when
/// it commits, and an observing store holds one pooled connection listening on it.
extension PostgreSQLStore: ExternalChangeObserving {
    /// Starts listening; returns once the server has registered the listener, so a save that
    /// commits after this call returns is always reported (one before it may be too).
    public func startObservingChanges(_ onChange: @escaping @Sendable () -> Void) {
        stopObservingChanges()
        let ready = DispatchSemaphore(value: 0)
        let task = database.listen(channel: notificationChannel, ready: ready, onChange)
        setListener(task)
        // Not answering within the connect timeout leaves the listener trying in the background.
        _ = ready.wait(timeout: .now() + configuration.connectTimeout + 1)
    }

    public func stopObservingChanges() {
        setListener(nil)?.cancel()
    }
}
