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
    /// further store read; a user's `NSIncrementalStore` answers with IDs only, and its objects
    /// read their values when first used, or right away without `returnsObjectsAsFaults`).
    /// `fetchBatchSize`, `includesPropertyValues` and
    /// `relationshipKeyPathsForPrefetching` decide when values are read (see ``NSFetchRequest``);
    /// dictionary results follow ``NSFetchRequest/propertiesToFetch``,
    /// ``NSFetchRequest/propertiesToGroupBy`` and ``NSFetchRequest/havingPredicate`` and reflect
    /// the store only.
    ///
    /// Threading: call on the context's queue.
    /// - Throws: `NSError` `NSPersistentStoreInvalidTypeError`-family codes for a request without
    ///   a known entity or with a key path the entity does not have (the message names both),
    ///   invalid dictionary columns, and store errors.
    /// Complexity: what the store's fetch costs, plus O(n log n) for merging pending changes.
    public func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        assertOnQueue()
        if request.resultType == .managedObjectResultType {
            let objects = try fetchObjects(request, entity: try resolveEntity(of: request), progress: nil)
            // The common `NSFetchRequest<NSManagedObject>` needs no per-object cast (nor the
            // `[AnyObject]` copy): two passes over every result, a tenth of a fetched object's cost.
            if T.self == NSManagedObject.self { return unsafeBitCast(objects, to: [T].self) }
            return Self.typed(objects, request)
        }
        return Self.typed(try fetchResults(request, progress: nil), request)
    }

    /// `results` as the request's result type; a result of another type is the caller's misuse
    /// (a request typed for results its `resultType` does not give), which traps as Apple's does.
    private static func typed<T, Element>(_ results: [Element], _ request: NSFetchRequest<T>) -> [T] {
        results.map { result in
            guard let typed = result as? T else {
                preconditionFailure("CoreData: a fetch of \(request.entityName ?? "?") returned \(type(of: result)), which is not \(T.self)")
            }
            return typed
        }
    }

    /// The number of objects a fetch request would return (ignoring `resultType`, except that a
    /// grouped or distinct dictionary request counts its dictionaries).
    ///
    /// Threading: call on the context's queue.
    /// - Throws: the errors of ``fetch(_:)``.
    /// Complexity: a store count when no pending changes are involved; otherwise a fetch.
    public func count<T>(for request: NSFetchRequest<T>) throws -> Int {
        assertOnQueue()
        let entity = try resolveEntity(of: request)
        if request.resultType == .dictionaryResultType {
            return try fetchResults(request, progress: nil).count
        }
        if parent == nil, !(request.includesPendingChanges && touchesPendingChanges(entity)) {
            let storeRequest = try makeStoreRequest(request, entity: entity, resultType: .count, paged: true)
            var total = 0
            for store in stores(for: entity) {
                if case .count(let n) = try mapStoreError({ () throws(StoreError) -> StoreFetchResult in try readEngine(for: store).execute(storeRequest) }) {
                    total += n
                }
            }
            return total
        }
        return try matchingObjects(request, entity: entity, progress: nil).count
    }

    /// The results of any request kind, untyped; `progress` (asynchronous fetches) is told how
    /// many objects there are and is advanced as they are registered.
    func fetchResults<T>(_ request: NSFetchRequest<T>, progress: FetchProgress?) throws -> [AnyObject] {
        let entity = try resolveEntity(of: request)
        switch request.resultType {
        case .countResultType:
            return [NSNumber(value: try count(for: request))]
        case .dictionaryResultType:
            try checkKeyPaths(of: request, entity: entity)
            let fetch = try DictionaryFetch(request, entity: entity)
            guard let model = persistentStoreCoordinator?.managedObjectModel else { return [] }
            let rows = try fetch.run(request, stores: stores(for: entity), model: model) { self.readEngine(for: $0) }
            progress?.finish(count: rows.count)
            return rows
        case .managedObjectIDResultType:
            if let ids = try objectIDsFromStores(request, entity: entity) {
                progress?.finish(count: ids.count)
                return ids
            }
            return try matchingObjects(request, entity: entity, progress: progress).map(\.objectID)
        default:
            return try fetchObjects(request, entity: entity, progress: progress)
        }
    }

    /// The managed objects a `.managedObjectResultType` request matches, prefetched and batched
    /// as it asks.
    private func fetchObjects<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription, progress: FetchProgress?) throws -> [NSManagedObject] {
        let objects = try matchingObjects(request, entity: entity, progress: progress)
        if let keyPaths = request.relationshipKeyPathsForPrefetching, !keyPaths.isEmpty {
            try prefetch(keyPaths, of: objects, entity: entity)
        }
        if request.fetchBatchSize > 0, parent == nil {
            assignFaultBatches(objects, size: request.fetchBatchSize)
        }
        return objects
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

    /// Fails the fetch, naming the entity and the key, when the predicate or a sort descriptor
    /// uses a key the entity does not have.
    private func checkKeyPaths<T>(of request: NSFetchRequest<T>, entity: NSEntityDescription) throws {
        if let predicate = request.predicate {
            try PredicateKeyPathCheck.check(predicate, entity: entity)
        }
        for descriptor in request.sortDescriptors ?? [] {
            if let key = descriptor.key { try PredicateKeyPathCheck.check(keyPath: key, entity: entity, context: "sort descriptor") }
        }
    }

    private func makeStoreRequest<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription, resultType: StoreFetchRequest.ResultType, paged: Bool) throws -> StoreFetchRequest {
        try checkKeyPaths(of: request, entity: entity)
        return StoreFetchRequest(
            entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate,
            sortDescriptors: request.sortDescriptors ?? [], offset: paged ? request.fetchOffset : 0,
            limit: paged ? request.fetchLimit : 0, resultType: resultType)
    }

    /// Object IDs straight from the one store, registering nothing; `nil` when pending changes,
    /// a parent context or several stores need the object path.
    private func objectIDsFromStores<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription) throws -> [NSManagedObjectID]? {
        let targetStores = stores(for: entity)
        guard parent == nil, targetStores.count <= 1, !(request.includesPendingChanges && touchesPendingChanges(entity)) else { return nil }
        guard let store = targetStores.first, let model = persistentStoreCoordinator?.managedObjectModel else { return [] }
        let storeRequest = try makeStoreRequest(request, entity: entity, resultType: .objectIDs, paged: true)
        let ids: [StoreObjectID]
        switch try mapStoreError({ () throws(StoreError) -> StoreFetchResult in try readEngine(for: store).execute(storeRequest) }) {
        case .objectIDs(let found): ids = found
        // A store may answer with more than was asked for; the rows' IDs are the answer.
        case .rows(let rows): ids = rows.map(\.objectID)
        case .count: ids = []
        }
        return try ids.map { id in
            guard let idEntity = model.entitiesByName[id.entityName] else { throw unknownEntity(id, store: store) }
            return NSManagedObjectID(entity: idEntity, store: store, storeID: id)
        }
    }

    /// The objects a request selects, with pending changes merged when asked to.
    private func matchingObjects<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription, progress: FetchProgress?) throws -> [NSManagedObject] {
        let pending = request.includesPendingChanges && touchesPendingChanges(entity)
        let targetStores = parent == nil ? stores(for: entity) : []
        // Several stores or pending changes: page and sort after merging, in memory.
        let paged = !pending && (parent != nil || targetStores.count <= 1)
        // Without property values, or with batches, the store returns identities only.
        let identitiesOnly = !request.includesPropertyValues || request.fetchBatchSize > 0
        let storeRequest = try makeStoreRequest(request, entity: entity, resultType: identitiesOnly ? .objectIDs : .rows, paged: paged)
        var objects: [NSManagedObject] = []
        if parent != nil {
            let ids = try objectIDsFromParent(request, entity: entity, paged: paged)
            progress?.expect(ids.count)
            for id in ids {
                try progress?.checkCancelled()
                let object = registered[id] ?? makeObject(for: id, row: nil)
                if request.shouldRefreshRefetchedObjects { refreshRefetched(object, row: nil) }
                objects.append(object)
                progress?.advance()
            }
        }
        // The staleness interval's clock starts before the store reads, so that a row's age
        // is never counted short by the read's own time.
        let keepsRows = request.returnsObjectsAsFaults && stalenessInterval != 0
        let readStarted: UInt64? = keepsRows && stalenessInterval >= 0 ? Self.monotonicNanoseconds() : nil
        for store in targetStores {
            let answer = try mapStoreError { () throws(StoreError) -> StoreFetchRuns in try readEngine(for: store).executeInRuns(storeRequest) }
            var runs: [[StoreRow]]
            switch consume answer {
            case .rows(let found): runs = found
            case .other(.rows(let rows)): runs = [rows]
            case .other(.objectIDs(let ids)):
                try registerIdentities(ids, store: store, fills: storeRequest.resultType == .rows && !request.returnsObjectsAsFaults,
                                       refresh: request.shouldRefreshRefetchedObjects, into: &objects, progress: progress)
                continue
            case .other(.count):
                continue
            }
            let total = runs.reduce(0) { $0 + $1.count }
            progress?.expect(total)
            // Rows already past the staleness interval go before this fetch's are noted, so
            // that its rows count from this read, not from the expired fetch's time.
            if let readStarted {
                _ = prefetchedRowsAreFresh()
                if oldestPrefetch == 0 { oldestPrefetch = readStarted }
            }
            objects.reserveCapacity(objects.count + total)
            // Only into an empty registry: a refetch of registered objects must not double it.
            if registered.count == 0 { registered.reserveCapacity(total) }
            var entities = EntityLookup(store: store)
            for index in runs.indices {
                // A run is freed once its objects are made, so the fetch never holds every row
                // beside every object (objects keep a row's values, not the row).
                let run = runs[index]
                runs[index] = []
                for row in run {
                    try progress?.checkCancelled()
                    objects.append(try register(row, store: store, entities: &entities, asFault: request.returnsObjectsAsFaults, keepsRow: keepsRows, refresh: request.shouldRefreshRefetchedObjects))
                    progress?.advance()
                }
            }
            reportReleasesIfMany()
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

    /// Registers a store's answer of identities only: asked for, or the answer of a store that
    /// loads lazily (a user's NSIncrementalStore). Objects the request wants filled (`fills`)
    /// are read a chunk at a time, so that cancellation and awakeFromFetch interleave as with rows.
    private func registerIdentities(
        _ ids: [StoreObjectID], store: NSPersistentStore, fills: Bool, refresh: Bool,
        into objects: inout [NSManagedObject], progress: FetchProgress?
    ) throws {
        var unfilled: [NSManagedObject] = []
        progress?.expect(ids.count)
        for id in ids {
            try progress?.checkCancelled()
            let object = try registerFault(id, store: store)
            if refresh { refreshRefetched(object, row: nil) }
            objects.append(object)
            if fills {
                unfilled.append(object)
                if unfilled.count >= FetchProgress.reportInterval {
                    try fill(unfilled, from: store)
                    unfilled = []
                }
            }
            progress?.advance()
        }
        try fill(unfilled, from: store)
    }

    /// The entities of a fetch's rows, remembering the last one: a fetch's rows are mostly of
    /// one entity, and comparing an entity number costs less than hashing a name.
    private struct EntityLookup {
        let entitiesByName: [String: NSEntityDescription]
        var last: NSEntityDescription?
        var lastNumber: EntityNumber?
        /// The class of ``last``'s objects: finding it takes a lock and two lookups by name.
        var lastClass: NSManagedObject.Type = NSManagedObject.self

        init(store: NSPersistentStore) {
            entitiesByName = store.persistentStoreCoordinator?.managedObjectModel.entitiesByName ?? [:]
        }

        mutating func entity(_ number: EntityNumber) -> NSEntityDescription? {
            if let last, number == lastNumber { return last }
            last = entitiesByName[number.name]
            lastNumber = number
            if let last { lastClass = EntityClassRegistry.objectClass(for: last) }
            return last
        }
    }

    /// The context's object for a fetched row: the registered one if any, else a new one.
    /// A registered fault gets the row's values: cached for later, or filled in at once when the
    /// request does not want faults.
    ///
    /// `keepsRow`: a fault keeps the row to fill from when fired; not with a staleness interval
    /// of `0`, where any row kept would be too old (and expiring them would cost every fetch a
    /// pass over the registered objects).
    private func register(_ row: StoreRow, store: NSPersistentStore, entities: inout EntityLookup, asFault: Bool, keepsRow: Bool, refresh: Bool) throws -> NSManagedObject {
        // Rows come from files; a row of an entity the model lacks is damage, reported, not trapped.
        guard let entity = entities.entity(row.objectID.entity) else {
            throw unknownEntity(row.objectID, store: store)
        }
        // A store that listens to registrations is told of IDs: its objects get theirs at once.
        let listens = store.observesRegistrations
        let objectID = listens ? NSManagedObjectID(entity: entity, store: store, storeID: row.objectID) : nil
        let key = objectID?.registryKey ?? RegisteredObjects.IDKey(entity: row.objectID.entity, primaryKey: row.objectID.primaryKey, store: store.identifierNumber)
        if let existing = registered[key, objectID] {
            if existing.isFaultState {
                if asFault {
                    if keepsRow {
                        existing.prefetchedRow = row
                        notePrefetch()
                    }
                } else {
                    existing.fill(from: row)
                    existing.awakeFromFetch()
                }
            } else if refresh {
                refreshRefetched(existing, row: row)
            }
            return existing
        }
        let object = if let objectID {
            makeObject(for: objectID, row: asFault ? nil : row, reportingReleases: false, objectClass: entities.lastClass)
        } else {
            makeObject(fetched: entity, store: store, primaryKey: row.objectID.primaryKey, key: key, row: asFault ? nil : row, objectClass: entities.lastClass)
        }
        if asFault, keepsRow {
            object.prefetchedRow = row
            notePrefetch()
        }
        return object
    }

    /// `shouldRefreshRefetchedObjects`: gives an object the context held before the fetch the
    /// store's current values (`row`, else read again from the store or parent context), with
    /// its unsaved changes applied over them, as `refresh(_:mergeChanges: true)` does. Faults
    /// get current values when they fire anyway; unsaved inserts and pending deletes are left
    /// alone.
    private func refreshRefetched(_ object: NSManagedObject, row: StoreRow?) {
        guard !object.isFaultState, !object.isInserted, !object.isDeleted else { return }
        object.withObservedChanges { refreshRefetchedValues(object, row: row) }
    }

    private func refreshRefetchedValues(_ object: NSManagedObject, row: StoreRow?) {
        let changes = object.hasChanges ? object.storedChangedValues() : [:]
        if let row {
            object.fetchedPropertyValues = [:]
            object.fill(from: row)
            if !isStoreSide { object.awakeFromFetch() }
        } else {
            object.turnIntoFault()
            fulfillFault(object)
        }
        for (key, value) in changes { object.kvcSetPrimitiveValue(value is NSNull ? nil : value, forKey: key) }
    }

    /// The context's object for a fetched ID: the registered one, or a new fault with no values.
    private func registerFault(_ id: StoreObjectID, store: NSPersistentStore) throws -> NSManagedObject {
        guard let entity = store.persistentStoreCoordinator?.managedObjectModel.entitiesByName[id.entityName] else {
            throw unknownEntity(id, store: store)
        }
        return registeredOrFault(entity: entity, store: store, id: id)
    }

    /// Fills the faults among `objects` (all of `store`) with their rows, read in one
    /// ``PersistentStoreEngine/rows(for:)`` call, for a request that does not want faults.
    /// An object whose row is gone (deleted since the fetch) stays a fault.
    ///
    /// - Throws: the store's error, as an `NSError`.
    private func fill(_ objects: [NSManagedObject], from store: NSPersistentStore) throws {
        var faults: [StoreObjectID: NSManagedObject] = [:]
        var ids: [StoreObjectID] = []
        for object in objects where object.isFaultState {
            if fillFromFreshPrefetchedRow(object) {
                if !isStoreSide { object.awakeFromFetch() }
            } else if let id = object.storeLocation?.id, faults.updateValue(object, forKey: id) == nil {
                ids.append(id)
            }
        }
        guard !ids.isEmpty else { return }
        let rows = try mapStoreError { () throws(StoreError) -> [StoreRow] in try readEngine(for: store).rows(for: ids) }
        var byID: [StoreObjectID: StoreRow] = [:]
        for row in rows where faults[row.objectID] != nil { byID[row.objectID] = row }
        // In result order, so that awakeFromFetch sees the objects as the fetch returns them.
        for id in ids {
            guard let row = byID.removeValue(forKey: id), let object = faults[id], object.isFaultState else { continue }
            object.fill(from: row)
            if !isStoreSide { object.awakeFromFetch() }
        }
    }

    private func unknownEntity(_ id: StoreObjectID, store: NSPersistentStore) -> NSError {
        coreDataError(
            NSPersistentStoreInvalidFileError,
            "the store \(store.identifier) returned \(id), but the model has no entity '\(id.entityName)'")
    }
}
