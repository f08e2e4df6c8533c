import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

/// The store protocol on top of a user's ``NSIncrementalStore``: fetches become fetch requests,
/// rows come from `newValuesForObject(with:with:)` nodes, relationships the nodes leave out
/// from `newValue(forRelationship:forObjectWith:with:)`, saves become save requests.
///
/// Fetches answer with object IDs only; contexts make faults of them, and each fault reads its
/// node when first used, as Apple's incremental stores load lazily.
///
/// Threading: see ``CustomStoreEngine``. Complexity: one call into the user's store per fetch,
/// per fault and per relationship; a save adds one node read per updated or deleted object
/// (the version check) and per inserted or updated object (the versions after it).
final class IncrementalStoreEngine: CustomStoreEngine<NSIncrementalStore>, @unchecked Sendable {
    override func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        try withStore { store, context in
            let fetch = NSFetchRequest<NSFetchRequestResult>()
            fetch.entity = request.entity
            fetch.entityName = request.entity.name
            fetch.predicate = request.predicate
            fetch.sortDescriptors = request.sortDescriptors.isEmpty ? nil : request.sortDescriptors
            fetch.fetchOffset = request.offset
            fetch.fetchLimit = request.limit
            fetch.includesSubentities = request.includesSubentities
            switch request.resultType {
            case .count:
                fetch.resultType = .countResultType
                return .count(try count(in: store.execute(fetch, with: context), store: store))
            case .rows:
                fetch.resultType = .managedObjectResultType
            case .objectIDs:
                fetch.resultType = .managedObjectIDResultType
            }
            let result = try store.execute(fetch, with: context)
            guard let elements = Self.elements(of: result) else {
                throw coreDataError(
                    NSPersistentStoreOperationError,
                    "\(Swift.type(of: store)).execute(_:with:) returned a \(Swift.type(of: result)) for a fetch; it must return an array")
            }
            return .objectIDs(elements.compactMap { Self.storeObjectID(of: $0) })
        }
    }

    private func count(in result: Any, store: NSIncrementalStore) throws -> Int {
        let first = Self.elements(of: result)?.first ?? result
        switch first {
        case let number as NSNumber: return number.intValue
        case let number as Int: return number
        default:
            throw coreDataError(
                NSPersistentStoreOperationError,
                "\(Swift.type(of: store)).execute(_:with:) returned a \(Swift.type(of: result)) for a count fetch; it must return [NSNumber]")
        }
    }

    override func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? {
        try withStore { store, context in try node(for: objectID, store: store, context: context) }
    }

    /// The nodes of several objects, read with one store-side context under one hold of the lock.
    override func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        guard !objectIDs.isEmpty else { return [] }
        return try withStore { store, context in
            try objectIDs.compactMap { try node(for: $0, store: store, context: context) }
        }
    }

    /// The row of `id` read through `newValuesForObject(with:with:)`; `nil` when the store
    /// throws `NSManagedObjectReferentialIntegrityError` (the object does not exist).
    private func node(for id: StoreObjectID, store: NSIncrementalStore, context: NSManagedObjectContext) throws -> StoreRow? {
        guard let objectID = managedObjectID(for: id) else { return nil }
        let node: NSIncrementalStoreNode
        do {
            node = try store.newValuesForObject(with: objectID, with: context)
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectReferentialIntegrityError {
            return nil
        }
        let entity = objectID.entity
        let entityName = entity.name ?? id.entityName
        var values: [String: StoreValue] = [:]
        for (name, attribute) in entity.attributesByName where !attribute.isTransient {
            values[name] = try storeValue(node.value(for: attribute), of: attribute, entityName: entityName)
        }
        for (name, relationship) in entity.relationshipsByName where !relationship.isTransient && node.holdsValue(forKey: name) {
            values[name] = try storeValue(node.value(for: relationship), of: relationship, entityName: entityName)
        }
        return StoreRow(objectID: id, version: Int64(clamping: node.version), values: values)
    }

    override func destinations(of objectID: StoreObjectID, relationship name: String) throws(StoreError) -> StoreValue {
        try withStore { store, context in
            guard let id = managedObjectID(for: objectID), let relationship = id.entity.relationshipsByName[name] else { return .null }
            let value = try store.newValue(forRelationship: relationship, forObjectWith: id, with: context)
            return try storeValue(value, of: relationship, entityName: objectID.entityName)
        }
    }

    override func newPrimaryKeys(entityName: String, count: Int, attributeValues: (Int) -> [String: StoreValue]) throws(StoreError) -> [Int64] {
        guard count > 0 else { return [] }
        return try withStore { store, context in
            let objects = try pendingObjects(entityName: entityName, count: count, attributeValues: attributeValues, in: context)
            return try primaryKeys(of: store.obtainPermanentIDs(for: objects), entityName: entityName, expected: count)
        }
    }

    override func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        guard !changes.isEmpty else { return [:] }
        return try withStore { store, context in
            // Optimistic locking, as Apple's: the versions read against the store's nodes now.
            var stored: [StoreObjectID: StoreRow] = [:]
            var conflicts: [StoreVersionConflict] = []
            let checked = changes.updated.map { ($0.objectID, $0.version) } + changes.deleted.map { ($0.objectID, $0.version) }
            for (id, expected) in checked {
                let current = try node(for: id, store: store, context: context)
                if let current { stored[id] = current }
                if current?.version != expected {
                    conflicts.append(StoreVersionConflict(objectID: id, expectedVersion: expected, storedRow: current))
                }
            }
            if !conflicts.isEmpty { throw StoreError.optimisticLockingFailure(conflicts) }

            // Every working object first, so that relationships among them resolve to each other.
            let inserted = changes.inserted.compactMap { workingObject(for: $0, in: context, state: .inserted) }
            let updated = changes.updated.compactMap { workingObject(for: $0, in: context, state: .updated(previous: stored[$0.objectID])) }
            let deleted = changes.deleted.compactMap { entry -> NSManagedObject? in
                guard let objectID = managedObjectID(for: entry.objectID) else { return nil }
                let object = context.object(with: objectID)
                object.lifecycle.isDeleted = true
                return object
            }
            let request = NSSaveChangesRequest(inserted: Set(inserted), updated: Set(updated), deleted: Set(deleted), locked: nil)
            _ = try store.execute(request, with: context)

            // The versions the store now holds; a store that keeps no versions stays at its own.
            var versions: [StoreObjectID: Int64] = [:]
            for row in changes.inserted + changes.updated {
                versions[row.objectID] = try node(for: row.objectID, store: store, context: context)?.version ?? row.version + 1
            }
            return versions
        }
    }
}
