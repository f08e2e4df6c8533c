import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

extension NSManagedObjectContext {
    /// Runs a fetch request and returns its results.
    ///
    /// With `includesPendingChanges` (the default) the results reflect this context's unsaved
    /// inserts, updates and deletes. Objects already in the context are returned as they are
    /// (with their unsaved changes); new ones are registered, as faults when
    /// `returnsObjectsAsFaults` (their values arrive with the fetch, so touching them costs no
    /// further store read).
    ///
    /// - Throws: `NSError` `NSPersistentStoreInvalidTypeError`-family codes for a request without
    ///   a known entity or with a key path the entity does not have (the message names both),
    ///   and store errors.
    /// Complexity: what the store's fetch costs, plus O(n log n) for merging pending changes.
    public func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        assertOnQueue()
        let results = try fetchResults(request)
        return results.map { result in
            guard let typed = result as? T else {
                preconditionFailure("CoreData: a fetch of \(request.entityName ?? "?") returned \(type(of: result)), which is not \(T.self)")
            }
            return typed
        }
    }

    /// The number of objects a fetch request would return (ignoring `resultType`).
    public func count<T>(for request: NSFetchRequest<T>) throws -> Int {
        assertOnQueue()
        let entity = try resolveEntity(of: request)
        if parent == nil, !(request.includesPendingChanges && touchesPendingChanges(entity)) {
            let storeRequest = try makeStoreRequest(request, entity: entity, resultType: .count, paged: true)
            var total = 0
            for store in stores(for: entity) {
                if case .count(let n) = try mapStoreError({ () throws(StoreError) -> StoreFetchResult in try store.engine.execute(storeRequest) }) {
                    total += n
                }
            }
            return total
        }
        return try matchingObjects(request, entity: entity).count
    }

    private func fetchResults<T>(_ request: NSFetchRequest<T>) throws -> [AnyObject] {
        let entity = try resolveEntity(of: request)
        if request.resultType == .countResultType {
            return [NSNumber(value: try count(for: request))]
        }
        let objects = try matchingObjects(request, entity: entity)
        switch request.resultType {
        case .managedObjectIDResultType:
            return objects.map(\.objectID)
        case .dictionaryResultType:
            return try dictionaries(of: objects, request: request, entity: entity)
        default:
            return objects
        }
    }

    func resolveEntity<T>(of request: NSFetchRequest<T>) throws -> NSEntityDescription {
        if let entity = request.entity { return entity }
        guard let model = persistentStoreCoordinator?.managedObjectModel else {
            preconditionFailure("CoreData: fetch on a context with no persistentStoreCoordinator")
        }
        guard let name = request.entityName, let entity = model.entitiesByName[name] else {
            throw coreDataError(
                NSPersistentStoreInvalidTypeError,
                "the fetch request's entity '\(request.entityName ?? "nil")' is not in the model (entities: \(model.entitiesByName.keys.sorted().joined(separator: ", ")))")
        }
        return entity
    }

    private func stores(for entity: NSEntityDescription) -> [NSPersistentStore] {
        guard let coordinator = persistentStoreCoordinator else { return [] }
        var names = Set<ObjectIdentifier>()
        var result: [NSPersistentStore] = []
        var pending = [entity]
        while let next = pending.popLast() {
            if let store = coordinator.store(for: next), names.insert(ObjectIdentifier(store)).inserted { result.append(store) }
            pending.append(contentsOf: next.subentities)
        }
        return result
    }

    private func touchesPendingChanges(_ entity: NSEntityDescription) -> Bool {
        let all = Array(pendingInserted.values) + Array(pendingUpdated.values) + Array(pendingDeleted.values)
        return all.contains { $0.entity.isKindOf(entity: entity) }
    }

    private func makeStoreRequest<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription, resultType: StoreFetchRequest.ResultType, paged: Bool) throws -> StoreFetchRequest {
        if let predicate = request.predicate {
            try PredicateKeyPathCheck.check(predicate, entity: entity)
        }
        for descriptor in request.sortDescriptors ?? [] {
            if let key = descriptor.key { try PredicateKeyPathCheck.check(keyPath: key, entity: entity, context: "sort descriptor") }
        }
        return StoreFetchRequest(
            entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate,
            sortDescriptors: request.sortDescriptors ?? [], offset: paged ? request.fetchOffset : 0,
            limit: paged ? request.fetchLimit : 0, resultType: resultType)
    }

    /// The objects a request selects, with pending changes merged when asked to.
    private func matchingObjects<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription) throws -> [NSManagedObject] {
        let pending = request.includesPendingChanges && touchesPendingChanges(entity)
        let targetStores = parent == nil ? stores(for: entity) : []
        // Several stores or pending changes: page and sort after merging, in memory.
        let paged = !pending && (parent != nil || targetStores.count <= 1)
        let storeRequest = try makeStoreRequest(request, entity: entity, resultType: .rows, paged: paged)
        var objects: [NSManagedObject] = []
        if parent != nil {
            objects = try objectIDsFromParent(request, entity: entity, paged: paged).map { id in
                registered[id] ?? makeObject(for: id, row: nil)
            }
        }
        for store in targetStores {
            let result = try mapStoreError { () throws(StoreError) -> StoreFetchResult in try store.engine.execute(storeRequest) }
            switch result {
            case .rows(let rows):
                for row in rows {
                    objects.append(try register(row, store: store, asFault: request.returnsObjectsAsFaults))
                }
            case .objectIDs(let ids):
                // A store that fulfils faults lazily: the objects read their rows on first use.
                for id in ids {
                    objects.append(try register(id, store: store))
                }
            case .count:
                continue
            }
        }
        guard !paged else { return objects }

        if pending {
            let predicate = request.predicate
            func matches(_ object: NSManagedObject) -> Bool {
                guard request.includesSubentities ? object.entity.isKindOf(entity: entity) : object.entity === entity else { return false }
                return predicate?.evaluate(with: object) ?? true
            }
            var seen = Set<ObjectIdentifier>()
            objects = objects.filter { object in
                guard seen.insert(ObjectIdentifier(object)).inserted, !object.isDeleted else { return false }
                // A changed object matches by its in-memory values, not the stored ones.
                return object.hasChanges ? matches(object) : true
            }
            for object in pendingUpdated.values.sorted(by: Self.stableOrder) where !seen.contains(ObjectIdentifier(object)) && !object.isDeleted && matches(object) {
                objects.append(object)
                seen.insert(ObjectIdentifier(object))
            }
            for object in pendingInserted.values.sorted(by: Self.stableOrder) where matches(object) {
                objects.append(object)
            }
        }
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            objects.sort { lhs, rhs in
                for descriptor in descriptors {
                    switch descriptor.compare(lhs, to: rhs) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return false
            }
        }
        let start = min(max(0, request.fetchOffset), objects.count)
        let end = request.fetchLimit > 0 ? min(objects.count, start + request.fetchLimit) : objects.count
        return Array(objects[start..<end])
    }

    /// The context's object for a fetched row: the registered one if any, else a new one.
    private func register(_ row: StoreRow, store: NSPersistentStore, asFault: Bool) throws -> NSManagedObject {
        // Rows come from files; a row of an entity the model lacks is damage, reported, not trapped.
        guard let entity = store.persistentStoreCoordinator?.managedObjectModel.entitiesByName[row.objectID.entityName] else {
            throw coreDataError(
                NSPersistentStoreInvalidFileError,
                "the store \(store.identifier) returned \(row.objectID), but the model has no entity '\(row.objectID.entityName)'")
        }
        let objectID = NSManagedObjectID(entity: entity, store: store, storeID: row.objectID)
        if let existing = registered[objectID] {
            if existing.isFaultState { existing.prefetchedRow = row }
            return existing
        }
        let object = makeObject(for: objectID, row: asFault ? nil : row)
        if asFault { object.prefetchedRow = row }
        return object
    }

    /// The context's object for a fetched ID: the registered one if any, else a new fault.
    private func register(_ id: StoreObjectID, store: NSPersistentStore) throws -> NSManagedObject {
        guard let entity = store.persistentStoreCoordinator?.managedObjectModel.entitiesByName[id.entityName] else {
            throw coreDataError(
                NSPersistentStoreInvalidFileError,
                "the store \(store.identifier) returned \(id), but the model has no entity '\(id.entityName)'")
        }
        let objectID = NSManagedObjectID(entity: entity, store: store, storeID: id)
        return registered[objectID] ?? makeObject(for: objectID, row: nil)
    }

    private func dictionaries<T>(of objects: [NSManagedObject], request: NSFetchRequest<T>, entity: NSEntityDescription) throws -> [AnyObject] {
        let keys: [String] = (request.propertiesToFetch ?? entity.properties.filter { $0 is NSAttributeDescription }).compactMap { item in
            if let name = item as? String { return name }
            if let property = item as? NSPropertyDescription { return property.name }
            return nil
        }
        for key in keys { try PredicateKeyPathCheck.check(keyPath: key, entity: entity, context: "propertiesToFetch") }
        var rows: [[String: Any]] = []
        for object in objects {
            var row: [String: Any] = [:]
            for key in keys {
                let value = object.value(forKeyPath: key)
                if let related = value as? NSManagedObject { row[key] = related.objectID } else if let value { row[key] = value }
            }
            rows.append(row)
        }
        if request.returnsDistinctResults {
            var seen: [NSDictionary] = []
            rows = rows.filter { row in
                let dictionary = NSDictionary(dictionary: row)
                if seen.contains(where: { $0.isEqual(dictionary) }) { return false }
                seen.append(dictionary)
                return true
            }
        }
        return rows.map { NSDictionary(dictionary: $0) }
    }
}
