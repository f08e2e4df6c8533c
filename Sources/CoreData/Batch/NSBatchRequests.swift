import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

/// Deletes the objects a fetch request matches (or given object IDs) in the store, without
/// loading them into a context.
///
/// Matches Apple's `NSBatchDeleteRequest`. As on Apple platforms, contexts do not see the delete
/// until they merge it: pass the deleted IDs (`resultType = .resultTypeObjectIDs`) to
/// ``NSManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``. Delete rules and
/// validation do not run.
open class NSBatchDeleteRequest: NSPersistentStoreRequest, @unchecked Sendable {
    /// What ``NSBatchDeleteResult/result`` holds.
    public enum ResultType: UInt, Sendable {
        /// `true` when the delete ran.
        case resultTypeStatusOnly = 0
        /// The IDs of the deleted objects.
        case resultTypeObjectIDs = 1
        /// The number of deleted objects.
        case resultTypeCount = 2
    }

    /// The request selecting the objects; `nil` when deleting by object IDs.
    public let fetchRequest: NSFetchRequest<NSFetchRequestResult>?
    /// The objects to delete, when given by ID.
    public let objectIDs: [NSManagedObjectID]?
    /// What the result holds.
    public var resultType: ResultType = .resultTypeStatusOnly

    /// Deletes what `fetchRequest` matches.
    public init(fetchRequest: NSFetchRequest<NSFetchRequestResult>) {
        self.fetchRequest = fetchRequest
        self.objectIDs = nil
        super.init()
    }

    /// Deletes the objects with these IDs.
    public init(objectIDs: [NSManagedObjectID]) {
        self.fetchRequest = nil
        self.objectIDs = objectIDs
        super.init()
    }

    open override var requestType: RequestType { .batchDeleteRequestType }
}

/// Sets properties of the objects a predicate matches, in the store, without loading them.
///
/// Matches Apple's `NSBatchUpdateRequest`. Values are constants (or constant `NSExpression`s);
/// validation does not run. Contexts see the change after merging it.
open class NSBatchUpdateRequest: NSPersistentStoreRequest, @unchecked Sendable {
    /// What ``NSBatchUpdateResult/result`` holds.
    public enum ResultType: UInt, Sendable {
        case statusOnlyResultType = 0
        case updatedObjectIDsResultType = 1
        case updatedObjectsCountResultType = 2
    }

    /// The entity updated.
    public let entityName: String
    /// Which objects are updated; `nil` for all.
    public var predicate: CoreDataPredicate.NSPredicate?
    /// Whether objects of subentities are updated too.
    public var includesSubentities = true
    /// New values by property name: constants or constant `NSExpression`s.
    public var propertiesToUpdate: [AnyHashable: Any]?
    /// What the result holds.
    public var resultType: ResultType = .statusOnlyResultType

    /// Updates objects of the named entity.
    public init(entityName: String) {
        self.entityName = entityName
        super.init()
    }

    /// Updates objects of `entity` (Apple's `init(entity:)`).
    ///
    /// The entity is found by its name in the model of the context that executes the request,
    /// so a description from another copy of the model works too. An entity without a name traps.
    public convenience init(entity: NSEntityDescription) {
        guard let name = entity.name else {
            preconditionFailure("CoreData: NSBatchUpdateRequest(entity:) needs an entity with a name")
        }
        self.init(entityName: name)
    }

    open override var requestType: RequestType { .batchUpdateRequestType }
}

/// Inserts objects from dictionaries straight into the store.
///
/// Matches Apple's `NSBatchInsertRequest`: the objects come as dictionaries, or one at a time
/// from a handler that fills a dictionary or a managed object. Attribute values only;
/// validation and uniqueness are checked by the store.
open class NSBatchInsertRequest: NSPersistentStoreRequest, @unchecked Sendable {
    /// What ``NSBatchInsertResult/result`` holds.
    public enum ResultType: UInt, Sendable {
        case statusOnly = 0
        case objectIDs = 1
        case count = 2
    }

    /// The entity inserted.
    public let entityName: String
    /// The objects, as property values by name.
    public var objectsToInsert: [[String: Any]]?
    /// Called with a dictionary to fill until it returns `true` (done).
    public var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// Called with a new managed object of the entity to fill until it returns `true` (done);
    /// see ``init(entityName:managedObjectHandler:)``.
    public var managedObjectHandler: ((NSManagedObject) -> Bool)?
    /// The entity the request was made with, when it was made with a description (Apple's
    /// `entity`); requests made with a name leave it `nil`.
    public private(set) var entity: NSEntityDescription?
    /// What the result holds.
    public var resultType: ResultType = .statusOnly

    /// Inserts `objects` into the named entity.
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.objectsToInsert = objects
        super.init()
    }

    /// Inserts objects the handler fills, one per call, until it returns `true`.
    public init(entityName: String, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entityName
        self.dictionaryHandler = handler
        super.init()
    }

    /// Inserts objects the handler fills, one per call, until it returns `true`.
    ///
    /// Each call gets a new object of the entity, of its class (so `object as! MyEntity` works),
    /// in no context; the handler sets its attributes. When the handler returns `true` the
    /// object it was given is not inserted and the request finishes. Attributes left unset get
    /// their default values; relationships are not inserted (batch inserts hold attributes
    /// only, as Apple's). The objects are not registered in any context afterwards: fetch them.
    public init(entityName: String, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        self.entityName = entityName
        self.managedObjectHandler = handler
        super.init()
    }

    /// Inserts `objects` into `entity`.
    ///
    /// The entity is found by its name in the model of the context that executes the request.
    public convenience init(entity: NSEntityDescription, objects: [[String: Any]]) {
        self.init(entityName: Self.name(of: entity), objects: objects)
        self.entity = entity
    }

    /// Inserts objects of `entity` the handler fills as dictionaries, until it returns `true`.
    public convenience init(entity: NSEntityDescription, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.init(entityName: Self.name(of: entity), dictionaryHandler: handler)
        self.entity = entity
    }

    /// Inserts objects of `entity` the handler fills as managed objects, until it returns
    /// `true`; see ``init(entityName:managedObjectHandler:)``.
    public convenience init(entity: NSEntityDescription, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        self.init(entityName: Self.name(of: entity), managedObjectHandler: handler)
        self.entity = entity
    }

    private static func name(of entity: NSEntityDescription) -> String {
        guard let name = entity.name else {
            preconditionFailure("CoreData: NSBatchInsertRequest(entity:…) needs an entity with a name")
        }
        return name
    }

    open override var requestType: RequestType { .batchInsertRequestType }
}

/// The result of ``NSManagedObjectContext/execute(_:)``.
open class NSPersistentStoreResult: NSObject, @unchecked Sendable {}

/// The result of a batch delete: `true`, the deleted IDs or their count, per the request's result type.
open class NSBatchDeleteResult: NSPersistentStoreResult, @unchecked Sendable {
    /// What the request's result type asked for.
    public let result: Any?
    // Counts and statuses as Apple's `NSNumber`, so that `as? Int64` works as well as `as? Int`.
    init(result: Any?) { self.result = result.map { FoundationBridge.scalar($0) } }
}

/// The result of a batch update.
open class NSBatchUpdateResult: NSPersistentStoreResult, @unchecked Sendable {
    /// What the request's result type asked for.
    public let result: Any?
    // Counts and statuses as Apple's `NSNumber`, so that `as? Int64` works as well as `as? Int`.
    init(result: Any?) { self.result = result.map { FoundationBridge.scalar($0) } }
}

/// The result of a batch insert.
open class NSBatchInsertResult: NSPersistentStoreResult, @unchecked Sendable {
    /// What the request's result type asked for.
    public let result: Any?
    // Counts and statuses as Apple's `NSNumber`, so that `as? Int64` works as well as `as? Int`.
    init(result: Any?) { self.result = result.map { FoundationBridge.scalar($0) } }
}

extension NSManagedObjectContext {
    /// Runs a batch request in the stores, without loading objects; or starts an
    /// ``NSAsynchronousFetchRequest`` and returns its ``NSAsynchronousFetchResult`` at once.
    ///
    /// After a batch delete, update or insert, the derived attributes of the objects it wrote,
    /// and of the objects one relationship away whose derivations read through that relationship,
    /// are recomputed in the store as a save would (a second store write; see the Derived
    /// attributes paragraph of <doc:DifferencesFromApple>). The result lists only the objects the
    /// request itself wrote.
    ///
    /// - Throws: `NSError`s: an unknown entity, a property that is not an attribute of the
    ///   entity, a value of the wrong type, store errors.
    @discardableResult
    public func execute(_ request: NSPersistentStoreRequest) throws -> NSPersistentStoreResult {
        assertOnQueue()
        guard let coordinator = persistentStoreCoordinator else {
            preconditionFailure("CoreData: execute(_:) on a context with no persistentStoreCoordinator")
        }
        switch request {
        case let delete as NSBatchDeleteRequest:
            let deleted = try batchDelete(delete, coordinator: coordinator)
            switch delete.resultType {
            case .resultTypeStatusOnly: return NSBatchDeleteResult(result: true)
            case .resultTypeObjectIDs: return NSBatchDeleteResult(result: deleted)
            case .resultTypeCount: return NSBatchDeleteResult(result: deleted.count)
            }
        case let update as NSBatchUpdateRequest:
            let updated = try batchUpdate(update, coordinator: coordinator)
            switch update.resultType {
            case .statusOnlyResultType: return NSBatchUpdateResult(result: true)
            case .updatedObjectIDsResultType: return NSBatchUpdateResult(result: updated)
            case .updatedObjectsCountResultType: return NSBatchUpdateResult(result: updated.count)
            }
        case let insert as NSBatchInsertRequest:
            let inserted = try batchInsert(insert, coordinator: coordinator)
            switch insert.resultType {
            case .statusOnly: return NSBatchInsertResult(result: true)
            case .objectIDs: return NSBatchInsertResult(result: inserted)
            case .count: return NSBatchInsertResult(result: inserted.count)
            }
        case let history as NSPersistentHistoryChangeRequest:
            return try executeHistory(history, coordinator: coordinator)
        case let asynchronous as AsynchronousFetchStarting:
            return asynchronous.start(in: self)
        default:
            throw coreDataError(NSPersistentStoreInvalidTypeError, "execute(_:) does not support \(type(of: request)); use fetch(_:) for fetch requests")
        }
    }

    private func entity(named name: String?, _ coordinator: NSPersistentStoreCoordinator) throws -> NSEntityDescription {
        guard let name, let entity = coordinator.managedObjectModel.entitiesByName[name] else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, "the batch request's entity '\(name ?? "nil")' is not in the model")
        }
        return entity
    }

    /// Store row IDs as object IDs of `store`; IDs of entities the model lacks are dropped.
    private func managedObjectIDs(_ ids: [StoreObjectID], in store: NSPersistentStore, _ coordinator: NSPersistentStoreCoordinator) -> [NSManagedObjectID] {
        ids.compactMap { id in
            coordinator.managedObjectModel.entitiesByName[id.entityName].map { NSManagedObjectID(entity: $0, store: store, storeID: id) }
        }
    }

    private func batchDelete(_ request: NSBatchDeleteRequest, coordinator: NSPersistentStoreCoordinator) throws -> [NSManagedObjectID] {
        let recomputation = DerivedValueRecomputation(coordinator: coordinator, history: historyContext())
        if let ids = request.objectIDs {
            // The objects that name the deleted ones (among them those whose derivations read
            // through a relationship to them), found before the rows are gone.
            let backReferences = BatchDeleteBackReferences(coordinator: coordinator, history: historyContext())
            let holders = backReferences.holders(of: ids.filter { !$0.isTemporaryID && BatchDeleteBackReferences.applies(to: $0.entity) })
            var deleted: [NSManagedObjectID] = []
            for (storeKey, group) in Dictionary(grouping: ids.filter { !$0.isTemporaryID }, by: { $0.persistentStore.map(ObjectIdentifier.init) }) {
                guard storeKey != nil, let store = group.first?.persistentStore else { continue }
                var changes = StoreChangeSet()
                changes.history = historyContext()
                for id in group {
                    guard let storeID = id.storeObjectID,
                          let row = try mapStoreError({ () throws(StoreError) -> StoreRow? in try store.engine.row(for: storeID) })
                    else { continue }
                    changes.deleted.append((storeID, row.version))
                    deleted.append(id)
                }
                _ = try mapStoreError { () throws(StoreError) -> [StoreObjectID: Int64] in try store.engine.save(changes) }
            }
            try backReferences.forget(Set(deleted), in: holders)
            try recomputation?.recompute(holders)
            return deleted
        }
        guard let fetch = request.fetchRequest else { return [] }
        let entity = try fetch.entity ?? entity(named: fetch.entityName, coordinator)
        if let predicate = fetch.predicate { try PredicateKeyPathCheck.check(predicate, entity: entity) }
        guard let store = coordinator.store(for: entity) else { return [] }
        var storeRequest = StoreFetchRequest(
            entity: entity, includesSubentities: fetch.includesSubentities, predicate: fetch.predicate,
            sortDescriptors: fetch.sortDescriptors ?? [], offset: fetch.fetchOffset, limit: fetch.fetchLimit, resultType: .objectIDs)
        storeRequest.history = historyContext()
        var holders: [NSManagedObjectID] = []
        let backReferences = BatchDeleteBackReferences(coordinator: coordinator, history: historyContext())
        if BatchDeleteBackReferences.applies(to: entity) {
            // The same fetch, read first: the objects it deletes name the objects that refer to
            // them (among them those whose derivations read through a relationship to them).
            var matching = storeRequest
            matching.history = nil
            let result = try mapStoreError { () throws(StoreError) -> StoreFetchResult in try store.engine.execute(matching) }
            let matched: [StoreObjectID]
            switch result {
            case .objectIDs(let ids): matched = ids
            case .rows(let rows): matched = rows.map(\.objectID)
            case .count: matched = []
            }
            holders = backReferences.holders(of: managedObjectIDs(matched, in: store, coordinator))
        }
        let ids = try mapStoreError { () throws(StoreError) -> [StoreObjectID] in try store.engine.batchDelete(storeRequest) }
        let deleted = managedObjectIDs(ids, in: store, coordinator)
        try backReferences.forget(Set(deleted), in: holders)
        try recomputation?.recompute(holders)
        return deleted
    }

    private func batchUpdate(_ request: NSBatchUpdateRequest, coordinator: NSPersistentStoreCoordinator) throws -> [NSManagedObjectID] {
        let entity = try entity(named: request.entityName, coordinator)
        if let predicate = request.predicate { try PredicateKeyPathCheck.check(predicate, entity: entity) }
        var values: [String: StoreValue] = [:]
        for (key, raw) in request.propertiesToUpdate ?? [:] {
            let name = (key.base as? String) ?? (key.base as? NSPropertyDescription)?.name ?? "\(key)"
            guard let attribute = entity.attributesByName[name], !attribute.isTransient else {
                throw coreDataError(NSPersistentStoreInvalidTypeError, "batch update: '\(name)' is not a stored attribute of \(entity.name ?? "?")")
            }
            let value = (raw as? CoreDataPredicate.NSExpression)?.expressionValue(with: nil, context: nil) ?? raw
            guard let stored = StoreValue(attributeValue: value is NSNull ? nil : value, type: attribute.attributeType) else {
                throw coreDataError(NSManagedObjectValidationError, "batch update: \(type(of: value)) is not a valid \(attribute.attributeType.xcodeName) for '\(name)'")
            }
            values[name] = stored
        }
        guard let store = coordinator.store(for: entity) else { return [] }
        var storeRequest = StoreFetchRequest(entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate, resultType: .objectIDs)
        storeRequest.history = historyContext()
        let ids = try mapStoreError { () throws(StoreError) -> [StoreObjectID] in try store.engine.batchUpdate(storeRequest, values: values) }
        let updated = managedObjectIDs(ids, in: store, coordinator)
        try recomputeDerivedValues(after: updated, of: entity, coordinator: coordinator)
        return updated
    }

    private func batchInsert(_ request: NSBatchInsertRequest, coordinator: NSPersistentStoreCoordinator) throws -> [NSManagedObjectID] {
        let entity = try entity(named: request.entityName, coordinator)
        guard let store = coordinator.store(for: entity), let name = entity.name else {
            throw coreDataError(NSPersistentStoreIncompatibleSchemaError, "no store holds entity '\(request.entityName)'")
        }
        var objects = request.objectsToInsert ?? []
        if let handler = request.dictionaryHandler {
            while true {
                let dictionary = NSMutableDictionary()
                if handler(dictionary) { break }
                var object: [String: Any] = [:]
                for (key, value) in dictionary { if let key = key as? String { object[key] = value } }
                objects.append(object)
            }
        }
        if let handler = request.managedObjectHandler {
            let objectClass = EntityClassRegistry.objectClass(for: entity)
            while true {
                // In no context: the object is a form to fill, never saved itself.
                let object = objectClass.init(entity: entity, insertInto: nil)
                if handler(object) { break }
                var values: [String: Any] = [:]
                for (attributeName, attribute) in entity.attributesByName where !attribute.isTransient {
                    if let value = object.value(forKey: attributeName) { values[attributeName] = value }
                }
                objects.append(values)
            }
        }
        var rows: [[String: StoreValue]] = []
        rows.reserveCapacity(objects.count)
        for object in objects {
            var values: [String: StoreValue] = [:]
            for (attributeName, attribute) in entity.attributesByName where !attribute.isTransient {
                let value = object[attributeName] ?? attribute.defaultValue
                guard let stored = StoreValue(attributeValue: value is NSNull ? nil : value, type: attribute.attributeType) else {
                    throw coreDataError(NSManagedObjectValidationError, "batch insert: \(type(of: value as Any)) is not a valid \(attribute.attributeType.xcodeName) for '\(attributeName)'")
                }
                if stored.isNull && !attribute.isOptional {
                    throw coreDataError(NSValidationMissingMandatoryPropertyError, "batch insert: '\(attributeName)' of \(name) is a required value")
                }
                values[attributeName] = stored
            }
            rows.append(values)
        }
        let keys = try mapStoreError { () throws(StoreError) -> [Int64] in
            try store.engine.newPrimaryKeys(entityName: name, count: rows.count) { rows[$0] }
        }
        var changes = StoreChangeSet()
        changes.history = historyContext()
        let number = EntityNumber(name)
        for (values, key) in zip(rows, keys) {
            changes.inserted.append(StoreRow(objectID: StoreObjectID(entity: number, primaryKey: key), version: 0, values: values))
        }
        _ = try mapStoreError { () throws(StoreError) -> [StoreObjectID: Int64] in try store.engine.save(changes) }
        let inserted = changes.inserted.map { NSManagedObjectID(entity: entity, store: store, storeID: $0.objectID) }
        try recomputeDerivedValues(after: inserted, of: entity, coordinator: coordinator)
        return inserted
    }

    /// Derived attributes after a batch update or insert, as a save would leave them: the
    /// objects written, and the objects whose derivations read through a relationship to them.
    /// Not counted in the request's result, as Apple's triggers are not.
    private func recomputeDerivedValues(after written: [NSManagedObjectID], of entity: NSEntityDescription, coordinator: NSPersistentStoreCoordinator) throws {
        guard !written.isEmpty, let recomputation = DerivedValueRecomputation(coordinator: coordinator, history: historyContext()),
              recomputation.isAffected(by: entity)
        else { return }
        try recomputation.recompute(written + recomputation.dependents(of: written))
    }
}
