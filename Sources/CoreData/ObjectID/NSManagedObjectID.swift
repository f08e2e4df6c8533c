import CoreDataModel
import CoreDataStorage
import Foundation

/// The identity of a managed object across contexts: its entity, its store and its key there.
///
/// Matches Apple's `NSManagedObjectID`. A new object has a temporary ID until it is saved (or
/// `obtainPermanentIDs(for:)` is called); then it gets a permanent one. IDs are immutable and
/// safe to pass between threads and contexts; objects are not.
///
/// URI form: `x-coredata://<store UUID>/<Entity>/p<key>` for permanent IDs,
/// `x-coredata:///<Entity>/t<UUID>` for temporary ones, as on Apple platforms.
open class NSManagedObjectID: NSObject, @unchecked Sendable {
    /// The object's entity.
    public let entity: NSEntityDescription
    /// The store that holds (or will hold) the object; `nil` while the ID is temporary.
    public private(set) weak var persistentStore: NSPersistentStore?

    enum Key: Hashable {
        case permanent(storeIdentifier: String, StoreObjectID)
        case temporary(UUID)
    }

    let key: Key

    init(entity: NSEntityDescription, store: NSPersistentStore, storeID: StoreObjectID) {
        self.entity = entity
        self.persistentStore = store
        self.key = .permanent(storeIdentifier: store.identifier, storeID)
        super.init()
    }

    init(temporaryFor entity: NSEntityDescription) {
        self.entity = entity
        self.key = .temporary(UUID())
        super.init()
    }

    /// Whether the object has not been saved yet.
    public var isTemporaryID: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The store-level ID, for permanent IDs.
    var storeObjectID: StoreObjectID? {
        if case .permanent(_, let id) = key { return id }
        return nil
    }

    /// A URI that names the object; give it to `NSPersistentStoreCoordinator.managedObjectID(forURIRepresentation:)`
    /// to get the ID back.
    public func uriRepresentation() -> URL {
        let entityName = entity.name ?? ""
        let text: String
        switch key {
        case .permanent(let store, let id): text = "x-coredata://\(store)/\(entityName)/p\(id.primaryKey)"
        case .temporary(let uuid): text = "x-coredata:///\(entityName)/t\(uuid.uuidString)"
        }
        // The parts are a UUID, an entity name (an identifier) and a number, all URL-safe.
        return URL(string: text) ?? URL(fileURLWithPath: "/")
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSManagedObjectID else { return false }
        return key == other.key
    }

    /// Hashes the entity (by identity) with the primary key, or the UUID: stores number each
    /// entity from 1, so the key alone collides across entities; the store's identifier string is
    /// left out because hashing it made every context lookup cost more than the rest of it, and
    /// IDs of one entity from two stores in one table are rare.
    open override var hash: Int {
        switch key {
        case .permanent(_, let id):
            var hasher = Hasher()
            hasher.combine(ObjectIdentifier(entity))
            hasher.combine(id.primaryKey)
            return hasher.finalize()
        case .temporary(let uuid): return uuid.hashValue
        }
    }

    open override var description: String { uriRepresentation().absoluteString }
}
