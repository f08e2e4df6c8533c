import CoreDataModel
import CoreDataStorage
import Foundation

/// The base class of a store you write yourself that loads objects on demand: from a web
/// service, another database, a dictionary.
///
/// Matches Apple's `NSIncrementalStore`. Subclass it, override the methods below, register the
/// class with ``NSPersistentStoreCoordinator/registerStoreClass(_:type:)`` and add a store with
/// that type name:
///
/// - `loadMetadata()`: set ``NSPersistentStore/metadata`` (with `NSStoreTypeKey` and
///   `NSStoreUUIDKey`; missing ones are filled in) or throw.
/// - `execute(_:with:)`: answer an ``NSFetchRequest`` (managed objects — made with
///   `context.object(with: newObjectID(for:referenceObject:))` —, object IDs, or `[count]` for
///   `.countResultType`), honouring its predicate, sort descriptors, offset and limit; and apply
///   an ``NSSaveChangesRequest`` (inserted, updated, deleted objects), returning `[]`.
/// - `newValuesForObject(with:with:)`: the values of one object, when a fault fires.
/// - `newValue(forRelationship:forObjectWith:with:)`: a relationship's destinations (an
///   `NSManagedObjectID` or `NSNull`, or a collection of IDs), when the relationship is first used.
/// - `obtainPermanentIDs(for:)`: IDs for new objects, made with `newObjectID(for:referenceObject:)`.
/// - Optionally `managedObjectContextDidRegisterObjects(with:)` and `…DidUnregisterObjects(with:)`.
///
/// Differences from Apple's, all forced by running without Objective-C or chosen to keep stores
/// away from a context's objects:
/// - The `context` passed in is a private context of the store, not the calling context; objects
///   made in it are read for their IDs (fetches) and the objects of a save request are working
///   copies with the saved values, not the saving context's instances.
/// - The objects given to `obtainPermanentIDs(for:)` are copies with the new objects' attribute
///   values and temporary IDs; their relationships are empty.
/// - Reference objects must be `Hashable` (Apple supports strings and numbers). Positive integer
///   references make IDs and URIs that hold across runs; other references (strings, UUIDs) make
///   IDs whose URIs hold while the store is open.
/// - Optimistic locking compares the versions of `newValuesForObject(with:with:)` nodes before a
///   save, as Apple's does; the versions after a save are read back from the store.
/// - Uniqueness constraints are the store's to enforce (Apple enforces them only in SQLite stores).
/// - Dictionary and batch requests never reach the store: the framework computes dictionary
///   results (columns, aggregates, grouping, `havingPredicate`, distinct) from a managed-object
///   fetch and the nodes of the objects it returns, and batch deletes and updates become a fetch
///   and a save request. Apple hands a store dictionary fetches to answer or emulate.
/// - A store may ignore `includesPropertyValues`, `returnsObjectsAsFaults`, `fetchBatchSize`
///   and `relationshipKeyPathsForPrefetching`, as Apple allows: values are read through
///   `newValuesForObject(with:with:)` when a fault fires, or right after the fetch for
///   `returnsObjectsAsFaults = false`, a batch or a prefetch.
///
/// Threading: the framework calls the store from one thread at a time (the calls of all contexts
/// are serialised), so a subclass needs no locking of its own for those calls.
open class NSIncrementalStore: NSPersistentStore, @unchecked Sendable {
    /// The engine that forwards the store protocol to this object's overrides.
    private let adapter: IncrementalStoreEngine

    /// Creates the store (the coordinator calls this for a registered class).
    public required init(persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?, at url: URL, options: [AnyHashable: Any]? = nil) {
        let adapter = IncrementalStoreEngine()
        self.adapter = adapter
        super.init(
            type: String(describing: Self.self), url: url, configurationName: name, options: options,
            engine: adapter, identifier: UUID().uuidString)
        self.persistentStoreCoordinator = root
        adapter.store = self
    }

    /// A new identifier for a store at `storeURL`: a new UUID string.
    open class func identifierForNewStore(at storeURL: URL) -> Any { UUID().uuidString }

    // MARK: Overrides

    /// Loads the store's metadata into ``NSPersistentStore/metadata``; throw if the store cannot
    /// be opened. The default sets nothing (the coordinator fills in the type and UUID).
    open func loadMetadata() throws {}

    /// Answers a fetch request or applies a save request (see the class description).
    ///
    /// - Throws: an `NSError`; it reaches the caller of `fetch(_:)` or `save()` unchanged.
    ///   The default throws `NSPersistentStoreInvalidTypeError`: every store must override it.
    open func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        throw mustOverride("execute(_:with:)")
    }

    /// The values of the object `objectID` names; throw `NSManagedObjectReferentialIntegrityError`
    /// (133000) when it does not exist. The default throws: every store must override it.
    open func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
        throw mustOverride("newValuesForObject(with:with:)")
    }

    /// The destinations of `relationship` of the object `objectID` names: an `NSManagedObjectID`
    /// or `NSNull` for a to-one relationship, a collection of `NSManagedObjectID`s for a to-many
    /// one. The default throws: a store whose nodes leave out relationships must override it.
    open func newValue(forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID, with context: NSManagedObjectContext?) throws -> Any {
        throw mustOverride("newValue(forRelationship:forObjectWith:with:)")
    }

    /// Permanent IDs for new objects, one per object, in order, made with
    /// ``newObjectID(for:referenceObject:)``. The default throws: every store must override it.
    open func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        throw mustOverride("obtainPermanentIDs(for:)")
    }

    /// A context started holding the objects with these IDs: one it fetched or faulted in, or
    /// one it saved (once the object's ID is permanent). Every context that holds an object
    /// says so, so the same ID can arrive once per context; count the calls rather than keep a
    /// set. Does nothing by default.
    open func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) {}

    /// A context let go of the objects with these IDs: it was reset or released, or it saved
    /// their deletion. Balances one ``managedObjectContextDidRegisterObjects(with:)`` call of
    /// the same context. Does nothing by default.
    open func managedObjectContextDidUnregisterObjects(with objectIDs: [NSManagedObjectID]) {}

    // MARK: Object IDs (not overridable, as on Apple platforms)

    /// The permanent ID of the object of `entity` that the store knows by `data`, a `Hashable`
    /// value unique among the store's objects of the entity (a string, a number, a UUID).
    ///
    /// Complexity: O(1). Traps when `data` is not `Hashable`.
    public func newObjectID(for entity: NSEntityDescription, referenceObject data: Any) -> NSManagedObjectID {
        adapter.objectID(for: entity, reference: data)
    }

    /// The reference object `objectID` was made from. Traps for an ID this store did not make.
    public func referenceObject(for objectID: NSManagedObjectID) -> Any {
        adapter.referenceObject(for: objectID)
    }

    // MARK: Framework

    override func prepareToAdd(freshMetadata fresh: StoreMetadata) throws {
        try adapter.setMetadata(fresh)
        let previous = identifier
        try loadMetadata()
        adapter.completeMetadata(with: fresh)
        if let uuid = metadata?[NSStoreUUIDKey] as? String, uuid != previous { identifier = uuid }
    }

    override var observesRegistrations: Bool { true }

    override func contextDidRegister(_ objectIDs: [NSManagedObjectID]) {
        adapter.lock.lock()
        defer { adapter.lock.unlock() }
        managedObjectContextDidRegisterObjects(with: objectIDs)
    }

    override func contextDidUnregister(_ objectIDs: [NSManagedObjectID]) {
        adapter.lock.lock()
        defer { adapter.lock.unlock() }
        managedObjectContextDidUnregisterObjects(with: objectIDs)
    }

    private func mustOverride(_ method: String) -> NSError {
        coreDataError(NSPersistentStoreInvalidTypeError, "\(Swift.type(of: self)) must override NSIncrementalStore.\(method)")
    }
}
