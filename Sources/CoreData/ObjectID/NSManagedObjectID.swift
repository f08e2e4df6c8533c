import CoreDataModel
import CoreDataStorage
import Foundation
import Synchronization

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
        case temporary(UInt64)
    }

    let key: Key

    /// Whether the ID's store asked to hear of the objects contexts register and release
    /// (`NSIncrementalStore`). Kept here, where it costs no space, because an object's
    /// registration and release check it: reading it through the weak ``persistentStore``
    /// cost a weak load and a release per object.
    let storeObservesRegistrations: Bool
    /// The number of the store's identifier (``StoreIdentifierNumbers``) as the ID was made;
    /// 0 for a temporary ID. Part of ``registryKey``.
    let storeNumber: UInt32

    init(entity: NSEntityDescription, store: NSPersistentStore, storeID: StoreObjectID) {
        self.entity = entity
        self.persistentStore = store
        self.key = .permanent(storeIdentifier: store.identifier, storeID)
        self.storeObservesRegistrations = store.observesRegistrations
        self.storeNumber = store.identifierNumber
        super.init()
    }

    /// The ID of a fetched object made after the fetch (``NSManagedObject/objectID``), from the
    /// store's handle: `store` is `nil` once the store is gone, as a weak reference would be.
    init(entity: NSEntityDescription, handle: FetchedStoreHandle, storeID: StoreObjectID) {
        self.entity = entity
        self.persistentStore = handle.store
        self.key = .permanent(storeIdentifier: handle.identifier, storeID)
        // Objects of stores that listen are given their IDs when fetched.
        self.storeObservesRegistrations = false
        self.storeNumber = handle.number
        super.init()
    }

    init(temporaryFor entity: NSEntityDescription) {
        self.entity = entity
        self.key = .temporary(TemporaryIDs.next())
        self.storeObservesRegistrations = false
        self.storeNumber = 0
        super.init()
    }

    /// The ID's key in a context's registry: equal for IDs `isEqual(_:)` calls equal (the
    /// registry, like ``hash`` and `isEqual(_:)`, tells entities apart by name).
    var registryKey: RegisteredObjects.IDKey {
        switch key {
        case .permanent(_, let id): return RegisteredObjects.IDKey(entity: id.entity, primaryKey: id.primaryKey, store: storeNumber)
        case .temporary(let number): return RegisteredObjects.IDKey(entity: entity, temporary: number)
        }
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
        case .temporary(let number): text = "x-coredata:///\(entityName)/t\(TemporaryIDs.processPrefix)\(number)"
        }
        // The parts are a UUID, an entity name (an identifier) and a number, all URL-safe.
        return URL(string: text) ?? URL(fileURLWithPath: "/")
    }

    open override func isEqual(_ object: Any?) -> Bool {
        // A class reference first (``classReference(_:)``): a cast from `Any` costs more than
        // the comparison, and sets of IDs compare at every collision.
        guard let object, let reference = classReference(object) else { return false }
        if reference === self { return true }
        guard let other = reference as? NSManagedObjectID else { return false }
        return key == other.key
    }

    /// Mixes the entity (by its name's number, as `isEqual(_:)` compares names) with the primary key, or the temporary number: stores
    /// number each entity from 1, so the key alone collides across entities; the store's
    /// identifier string is left out because hashing it made every context lookup cost more than
    /// the rest of it, and IDs of one entity from two stores in one table are rare. A multiply
    /// and an xor, not a `Hasher`: the dictionaries that hold IDs hash this value again.
    open override var hash: Int {
        switch key {
        case .permanent(_, let id):
            let entityBits = UInt64(id.entity.rawValue)
            return Int(truncatingIfNeeded: (UInt64(bitPattern: id.primaryKey) &* 0x9E37_79B9_7F4A_7C15) ^ entityBits)
        case .temporary(let number): return Int(truncatingIfNeeded: number &* 0xC2B2_AE3D_27D4_EB4F)
        }
    }

    open override var description: String { uriRepresentation().absoluteString }
}

/// Numbers for temporary IDs: one counter for the process, so that making an inserted object's ID
/// costs an atomic add instead of a random UUID. Its URI shows the number after a UUID made once per
/// process, the shape of Apple's (`t` + UUID + number), so URIs of two processes never collide.
enum TemporaryIDs {
    private static let counter = Atomic<UInt64>(0)

    /// The UUID every temporary ID's URI of this process starts with.
    static let processPrefix = UUID().uuidString

    static func next() -> UInt64 { counter.add(1, ordering: .relaxed).newValue }
}

/// A temporary ID's identity in predicates: equal only to the same temporary ID.
struct TemporaryObjectIdentity: Hashable {
    let number: UInt64
}
