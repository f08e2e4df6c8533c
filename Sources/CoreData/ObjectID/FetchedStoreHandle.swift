/// The store of fetched objects that have not made their `NSManagedObjectID` yet, held weakly
/// as the ID would hold it: a fetched object must not keep a removed store (an in-memory store's
/// whole table, say) alive. One per store, shared by all its objects, so an object pays a
/// retain of the handle, not a weak reference of its own.
///
/// Threading: the reference is weak, so reading it from any thread is safe.
/// It keeps the store's identifier too, so that an ID made after the store is gone names the
/// store as an ID made at once would have (with no store).
final class FetchedStoreHandle: Sendable {
    weak let store: NSPersistentStore?
    let identifier: String
    /// ``identifier``'s number (``StoreIdentifierNumbers``).
    let number: UInt32

    init(_ store: NSPersistentStore) {
        self.store = store
        self.identifier = store.identifier
        self.number = store.identifierNumber
    }
}
