import CoreDataStorage
import Foundation

/// Option key: post ``Foundation/NSNotification/Name/NSPersistentStoreRemoteChange`` for every
/// save to the store, by this coordinator, another coordinator or another process (a `Bool` or
/// `NSNumber`). Apple's key.
///
/// On Linux the binary store supports it (every handle on the store learns of a save within about
/// a millisecond through the store's shared counters, `Formats/wal.md` §9), and the PostgreSQL
/// store (through `LISTEN`/`NOTIFY`, `Formats/postgresql-store.md` §9); other store types accept
/// the option and post nothing, as no other handle can change them.
public let NSPersistentStoreRemoteChangeNotificationPostOptionKey = "NSPersistentStoreRemoteChangeNotificationOptionKey"
/// `userInfo` key of a remote-change notification: the store's URL.
public let NSPersistentStoreURLKey = "storeURL"
/// `userInfo` key of a remote-change notification: an ``NSPersistentHistoryToken`` after the
/// store's latest transaction, when the store records persistent history.
public let NSPersistentHistoryTokenKey = "historyToken"

extension NSNotification.Name {
    /// Posted by a coordinator, on a background thread, after a save to one of its stores added
    /// with ``NSPersistentStoreRemoteChangeNotificationPostOptionKey``. The object is the
    /// coordinator; `userInfo` holds ``NSPersistentStoreURLKey``, `NSStoreUUIDKey` and, for a
    /// store that records history, ``NSPersistentHistoryTokenKey``. Saves
    /// that come close together may be posted once.
    public static let NSPersistentStoreRemoteChange = NSNotification.Name("NSPersistentStoreRemoteChangeNotification")
}

extension NSPersistentStoreCoordinator {
    /// Starts the store's change observation when its options ask for remote-change notifications.
    func startRemoteChangeNotifications(for store: NSPersistentStore) {
        let asked = (store.options?[NSPersistentStoreRemoteChangeNotificationPostOptionKey] as? Bool)
            ?? (store.options?[NSPersistentStoreRemoteChangeNotificationPostOptionKey] as? NSNumber)?.boolValue ?? false
        guard asked, let observing = store.engine as? any ExternalChangeObserving else { return }
        let url = store.url
        let identifier = store.identifier
        let history = (store.engine as? any StoreHistoryRecording).flatMap { $0.recordsHistory ? $0 : nil }
        observing.startObservingChanges { [weak self] in
            guard let self else { return }
            var info: [AnyHashable: Any] = [NSStoreUUIDKey: identifier]
            if let url { info[NSPersistentStoreURLKey] = url }
            if let history, let page = try? history.history(StoreHistoryQuery(afterNumber: .max, limit: 0, includesChanges: false)) {
                info[NSPersistentHistoryTokenKey] = NSPersistentHistoryToken(numbers: [identifier: page.lastNumber])
            }
            NotificationCenter.default.post(name: .NSPersistentStoreRemoteChange, object: self, userInfo: info)
        }
    }

    func stopRemoteChangeNotifications(for store: NSPersistentStore) {
        (store.engine as? any ExternalChangeObserving)?.stopObservingChanges()
    }
}
