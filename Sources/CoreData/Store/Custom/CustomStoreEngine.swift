import CoreDataModel
import CoreDataStorage
import Foundation

/// The engine behind a store class a user wrote (``NSIncrementalStore``, ``NSAtomicStore``): it
/// conforms to the store protocol and forwards to the user's overrides, so contexts and the
/// coordinator talk to a user's store exactly as to a built-in one.
///
/// The user's code sees managed objects, as Apple's API promises, but stores never see a
/// context's objects: each call into the user's store gets a private, store-side context
/// (Apple passes the calling context) whose objects are working copies built from the rows the
/// protocol carries. Objects returned from it are only read for their IDs and values.
///
/// Threading: every call takes one recursive lock, so the user's store is entered by one thread
/// at a time (Apple's coordinator serialises store calls the same way) and may call back into
/// the framework (`newObjectID`, `cacheNode(for:)`, faults of its working objects).
class CustomStoreEngine<Store: NSPersistentStore>: PersistentStoreEngine, @unchecked Sendable {
    /// Guards everything below and every call into the user's store.
    let lock = NSRecursiveLock()
    /// The store served; the store owns its engine, so the link back is weak.
    weak var store: Store?
    private var storedMetadata = StoreMetadata()
    private var references = ReferenceObjectTable()
    private(set) var isClosed = false
    /// The store-side context of the call in progress, shared by nested calls.
    private var workingContext: NSManagedObjectContext?

    init() {}

    // MARK: Locking and the store-side context

    /// Runs `body` under the lock.
    func locked<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Runs `body` under the lock with the store and a store-side context; errors the user's
    /// code throws become ``StoreError/failed(_:)`` unless they are already ``StoreError``s.
    func withStore<T>(_ body: (Store, NSManagedObjectContext) throws -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed, let store, let coordinator = store.persistentStoreCoordinator else { throw .closed }
        let outermost = workingContext == nil
        let context: NSManagedObjectContext
        if let workingContext {
            context = workingContext
        } else {
            context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.name = "store-side context of \(Swift.type(of: store))"
            context.isStoreSide = true
            // The working copies of one call refer to each other by ID; they live for the call.
            context.retainsRegisteredObjects = true
            context.persistentStoreCoordinator = coordinator
            workingContext = context
        }
        defer { if outermost { workingContext = nil } }
        do {
            return try body(store, context)
        } catch let error as StoreError {
            throw error
        } catch {
            throw .failed(StoreFailure(error as NSError))
        }
    }

    /// The model of the coordinator the store belongs to.
    var model: NSManagedObjectModel? { store?.persistentStoreCoordinator?.managedObjectModel }

    // MARK: Metadata

    func metadata() throws(StoreError) -> StoreMetadata {
        try locked { () throws(StoreError) -> StoreMetadata in
            guard !isClosed else { throw .closed }
            return storedMetadata
        }
    }

    func setMetadata(_ metadata: StoreMetadata) throws(StoreError) {
        try locked { () throws(StoreError) in
            guard !isClosed else { throw .closed }
            storedMetadata = metadata
        }
    }

    /// Adds the keys a store's metadata must have (type, UUID, the model's version hashes when
    /// the store recorded none) from the metadata a new store starts with.
    func completeMetadata(with fresh: StoreMetadata) {
        lock.lock()
        defer { lock.unlock() }
        for key in [NSStoreTypeKey, NSStoreUUIDKey] where storedMetadata[key] == nil {
            storedMetadata[key] = fresh[key]
        }
    }

    // MARK: Object IDs and reference objects

    /// Apple's `newObjectID(for:referenceObject:)`: the permanent ID of the object `reference`
    /// names. Traps when `reference` is not `Hashable` (Apple supports only strings and numbers).
    func objectID(for entity: NSEntityDescription, reference: Any) -> NSManagedObjectID {
        guard let store else {
            preconditionFailure("CoreData: newObjectID(for:referenceObject:) on a store that is gone")
        }
        guard let hashable = reference as? AnyHashable else {
            preconditionFailure("CoreData: a reference object must be Hashable (a String, a number, a UUID); \(type(of: reference)) is not")
        }
        guard let name = entity.name else {
            preconditionFailure("CoreData: newObjectID(for:referenceObject:) needs an entity with a name")
        }
        lock.lock()
        let number = entity.entityNumber
        let key = references.key(for: hashable, entityName: name, entity: number)
        lock.unlock()
        return NSManagedObjectID(entity: entity, store: store, storeID: StoreObjectID(entity: number, primaryKey: key))
    }

    /// Apple's `referenceObject(for:)`: the reference object an ID was made from. Traps for a
    /// temporary ID or an ID of another store, as Apple's raises.
    func referenceObject(for objectID: NSManagedObjectID) -> Any {
        guard let id = objectID.storeObjectID, objectID.persistentStore === store || objectID.persistentStore == nil else {
            preconditionFailure("CoreData: referenceObject(for:) needs a permanent ID of this store; \(objectID) is not one")
        }
        lock.lock()
        defer { lock.unlock() }
        guard let reference = references.reference(for: id) else {
            preconditionFailure("CoreData: referenceObject(for:) got \(objectID), which this store never handed out")
        }
        return reference
    }

    /// The object ID of a stored object of this store, or `nil` when the model lacks its entity.
    func managedObjectID(for id: StoreObjectID) -> NSManagedObjectID? {
        guard let store, let entity = model?.entitiesByName[id.entityName] else { return nil }
        return NSManagedObjectID(entity: entity, store: store, storeID: id)
    }

    // MARK: Working objects

    /// How a working object takes part in a save.
    enum WorkingState {
        case stored
        case inserted
        case updated(previous: StoreRow?)
    }

    /// Registers in `context` an object holding `row`'s values: a saved object, a new one, or a
    /// changed one whose `changedValues()` are the keys that differ from `previous` and whose
    /// committed values are `previous`. Relationships the row carries are materialised from it;
    /// the ones it leaves out load from the store on first use.
    func workingObject(for row: StoreRow, in context: NSManagedObjectContext, state: WorkingState) -> NSManagedObject? {
        guard let objectID = managedObjectID(for: row.objectID) else { return nil }
        let object = context.registeredObject(for: objectID) ?? context.makeObject(for: objectID, row: nil)
        object.fill(from: row)
        for name in object.entity.relationshipsByName.keys where row.values[name] != nil {
            guard let relationship = object.entity.relationshipsByName[name] else { continue }
            object.materialise(relationship)
        }
        switch state {
        case .stored:
            break
        case .inserted:
            object.committedRow = nil
            object.lifecycle.isInserted = true
            object.changedKeys = Set(row.values.filter { !$0.value.isNull }.keys)
        case .updated(let previous):
            object.committedRow = previous
            let before = previous?.values ?? [:]
            object.changedKeys = Set(row.values.filter { before[$0.key] != $0.value }.keys)
        }
        return object
    }

    /// New, unsaved objects of an entity holding the given attribute values, for a user's store
    /// to name (`obtainPermanentIDs(for:)`, `newReferenceObject(for:)`). Their IDs are temporary
    /// and their relationships empty.
    func pendingObjects(
        entityName: String, count: Int, attributeValues: (Int) -> [String: StoreValue], in context: NSManagedObjectContext
    ) throws(StoreError) -> [NSManagedObject] {
        guard let entity = model?.entitiesByName[entityName] else {
            throw .failed(StoreFailure(coreDataError(NSPersistentStoreIncompatibleSchemaError, "the model has no entity '\(entityName)'")))
        }
        let type = EntityClassRegistry.objectClass(for: entity)
        return (0..<count).map { index in
            // With no context the initializer neither inserts nor calls awakeFromInsert.
            let object = type.init(entity: entity, insertInto: nil)
            object.managedObjectContext = context
            object.lifecycle.isInserted = true
            for (name, value) in attributeValues(index) {
                guard let attribute = entity.attributesByName[name] else { continue }
                object.attributeValues[name] = value.attributeValue(as: attribute.attributeType)
            }
            object.materialisedRelationships = Set(entity.relationshipsByName.keys)
            return object
        }
    }

    /// The primary keys of the IDs a user's store handed out for new objects of `entityName`.
    func primaryKeys(of objectIDs: [NSManagedObjectID], entityName: String, expected count: Int) throws(StoreError) -> [Int64] {
        guard objectIDs.count == count else {
            throw .failed(StoreFailure(coreDataError(
                NSPersistentStoreOperationError,
                "\(Swift.type(of: store as Any)) handed out \(objectIDs.count) permanent IDs for \(count) new objects of \(entityName)")))
        }
        var keys: [Int64] = []
        for objectID in objectIDs {
            guard let id = objectID.storeObjectID, id.entityName == entityName else {
                throw .failed(StoreFailure(coreDataError(
                    NSPersistentStoreOperationError,
                    "\(Swift.type(of: store as Any)) handed out \(objectID) for a new object of \(entityName); make permanent IDs with the object's entity")))
            }
            keys.append(id.primaryKey)
        }
        return keys
    }

    // MARK: Values

    /// A value a user's store gave for an attribute, as a store value.
    func storeValue(_ value: Any?, of attribute: NSAttributeDescription, entityName: String) throws(StoreError) -> StoreValue {
        guard let value, !(value is NSNull) else { return .null }
        if attribute.attributeType == .transformableAttributeType {
            if let data = TransformableValues.storedData(for: value, attribute) { return .data(data) }
            let name = attribute.valueTransformerName ?? "NSSecureUnarchiveFromData"
            if let transformer = ValueTransformer.valueTransformer(forName: NSValueTransformerName(rawValue: name)),
               let data = transformer.transformedValue(value) as? Data {
                return .data(data)
            }
        } else if let stored = StoreValue(attributeValue: value, type: attribute.attributeType) {
            return stored
        }
        throw .failed(StoreFailure(coreDataError(
            NSPersistentStoreOperationError,
            "\(Swift.type(of: store as Any)) returned a \(Swift.type(of: value)) for '\(attribute.name)' of \(entityName), a \(attribute.attributeType.xcodeName) attribute")))
    }

    /// A value a user's store gave for a relationship (object IDs, objects or cache nodes, one or
    /// a collection), as a store value.
    func storeValue(_ value: Any?, of relationship: NSRelationshipDescription, entityName: String) throws(StoreError) -> StoreValue {
        guard let value, !(value is NSNull) else { return relationship.isToMany ? .references([]) : .null }
        if !relationship.isToMany, let id = Self.storeObjectID(of: value) { return .reference(id) }
        if relationship.isToMany, let elements = Self.elements(of: value) {
            var ids: [StoreObjectID] = []
            for element in elements {
                guard let id = Self.storeObjectID(of: element) else { continue }
                if !ids.contains(id) { ids.append(id) }
            }
            // An unordered relationship's order is the store's: by object ID, so it is stable.
            return .references(relationship.isOrdered ? ids : ids.sorted())
        }
        throw .failed(StoreFailure(coreDataError(
            NSPersistentStoreOperationError,
            "\(Swift.type(of: store as Any)) returned a \(Swift.type(of: value)) for the to-\(relationship.isToMany ? "many" : "one") relationship '\(relationship.name)' of \(entityName)")))
    }

    /// The stored object an element of a relationship value names.
    static func storeObjectID(of element: Any) -> StoreObjectID? {
        switch element {
        case let id as NSManagedObjectID: return id.storeObjectID
        case let object as NSManagedObject: return object.objectID.storeObjectID
        case let node as NSAtomicStoreCacheNode: return node.objectID.storeObjectID
        default: return nil
        }
    }

    /// The elements of a collection value (array, set, ordered set, their NS forms), in order.
    static func elements(of value: Any) -> [Any]? {
        switch value {
        case let ordered as NSOrderedSet: return ordered.array
        case let set as NSSet: return set.allObjects
        case let array as [Any]: return array
        case let set as Set<AnyHashable>: return Array(set)
        case let array as NSArray: return array.map { $0 }
        default: return nil
        }
    }

    // MARK: Protocol requirements every user store answers the same way

    func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] {
        try newPrimaryKeys(entityName: entityName, count: count) { _ in [:] }
    }

    func newPrimaryKeys(entityName: String, count: Int, attributeValues: (Int) -> [String: StoreValue]) throws(StoreError) -> [Int64] {
        preconditionFailure("CoreData: \(Swift.type(of: self)) must implement newPrimaryKeys(entityName:count:attributeValues:)")
    }

    func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        preconditionFailure("CoreData: \(Swift.type(of: self)) must implement execute(_:)")
    }

    func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        preconditionFailure("CoreData: \(Swift.type(of: self)) must implement save(_:)")
    }

    func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? {
        preconditionFailure("CoreData: \(Swift.type(of: self)) must implement row(for:)")
    }

    /// The rows of several objects under one hold of the lock, so that a batch (batch faulting,
    /// prefetching, a dictionary fetch) reads one state of the user's store, with no save between
    /// two of its rows.
    func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        try locked { () throws(StoreError) -> [StoreRow] in
            var rows: [StoreRow] = []
            rows.reserveCapacity(objectIDs.count)
            for id in objectIDs {
                if let row = try row(for: id) { rows.append(row) }
            }
            return rows
        }
    }

    func destinations(of objectID: StoreObjectID, relationship: String) throws(StoreError) -> StoreValue { .null }

    /// Batch deletes run as a fetch of the matching IDs and a save that deletes them: a user's
    /// store sees an ordinary save request (or cache-node removal).
    func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] {
        try locked { () throws(StoreError) -> [StoreObjectID] in
            var changes = StoreChangeSet()
            for id in try matchingIDs(request) {
                guard let row = try row(for: id) else { continue }
                changes.deleted.append((id, row.version))
            }
            _ = try save(changes)
            return changes.deleted.map(\.objectID)
        }
    }

    /// Batch updates run as a fetch and a save of the changed rows.
    func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] {
        try locked { () throws(StoreError) -> [StoreObjectID] in
            var changes = StoreChangeSet()
            for id in try matchingIDs(request) {
                guard var row = try row(for: id) else { continue }
                row.values.merge(values) { _, new in new }
                changes.updated.append(row)
            }
            _ = try save(changes)
            return changes.updated.map(\.objectID)
        }
    }

    private func matchingIDs(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] {
        var idRequest = request
        idRequest.resultType = .objectIDs
        switch try execute(idRequest) {
        case .objectIDs(let ids): return ids
        case .rows(let rows): return rows.map(\.objectID)
        case .count: return []
        }
    }

    /// An incremental store saves what changed; ``AtomicStoreEngine`` overrides this.
    var savesWholeStore: Bool { false }

    func close() throws(StoreError) {
        lock.lock()
        defer { lock.unlock() }
        isClosed = true
    }
}
