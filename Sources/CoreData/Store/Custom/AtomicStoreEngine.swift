import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

/// The store protocol on top of a user's ``NSAtomicStore``: it keeps the store's cache nodes,
/// answers fetches from rows built from them (with the reference evaluator, as the in-memory
/// store does), checks versions and uniqueness constraints, and turns each save into the
/// store's `newCacheNode(for:)`, `updateCacheNode(_:from:)`, `willRemoveCacheNodes(_:)` and
/// `save()` calls.
///
/// Threading: see ``CustomStoreEngine``. Complexity: a fetch is O(rows of the fetched
/// entities); a save O(changed rows) plus whatever the store's `save()` costs (usually O(all)).
final class AtomicStoreEngine: CustomStoreEngine<NSAtomicStore>, @unchecked Sendable {
    private var nodes: [StoreObjectID: NSAtomicStoreCacheNode] = [:]
    private var rows: [StoreObjectID: StoreRow] = [:]
    private var unique = UniquenessIndex()
    /// Objects whose rows must be rebuilt from their nodes before the next read.
    private var staleRows: Set<StoreObjectID> = []

    /// An atomic store's `save()` writes its whole file.
    override var savesWholeStore: Bool { true }

    // MARK: Nodes

    /// Runs the store's `load()` over an empty set of nodes.
    func load(_ body: () throws -> Void) throws {
        lock.lock()
        defer { lock.unlock() }
        nodes = [:]
        rows = [:]
        unique = UniquenessIndex()
        staleRows = []
        try body()
    }

    func allNodes() -> Set<NSAtomicStoreCacheNode> {
        lock.lock()
        defer { lock.unlock() }
        return Set(nodes.values)
    }

    func add(_ added: Set<NSAtomicStoreCacheNode>) {
        lock.lock()
        defer { lock.unlock() }
        for node in added {
            guard let id = node.objectID.storeObjectID else {
                preconditionFailure("CoreData: addCacheNodes(_:) got a node with the temporary ID \(node.objectID); make node IDs with objectID(for:withReferenceObject:)")
            }
            nodes[id] = node
            staleRows.insert(id)
        }
    }

    func node(for objectID: NSManagedObjectID) -> NSAtomicStoreCacheNode? {
        guard let id = objectID.storeObjectID else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return nodes[id]
    }

    /// Gives every node an object ID carrying the store's current identifier.
    func rebindNodeIDs() {
        lock.lock()
        defer { lock.unlock() }
        guard let store else { return }
        for (id, node) in nodes {
            node.objectID = NSManagedObjectID(entity: node.objectID.entity, store: store, storeID: id)
        }
    }

    // MARK: Rows

    private var entities: [String: NSEntityDescription] { model?.entitiesByName ?? [:] }

    /// Rebuilds the rows of nodes added or changed since the last read.
    private func refreshRows() throws(StoreError) {
        guard !staleRows.isEmpty else { return }
        let entities = entities
        for id in staleRows.sorted() {
            if let old = rows[id] { unique.remove(old, entities: entities) }
            guard let node = nodes[id] else {
                rows[id] = nil
                continue
            }
            let row = try row(of: node, id: id, version: rows[id]?.version ?? 1)
            rows[id] = row
            // Rows a store loads are taken as they are; saves are checked before they happen.
            _ = unique.add(row, entities: entities)
        }
        staleRows = []
    }

    /// A node's values as a row.
    private func row(of node: NSAtomicStoreCacheNode, id: StoreObjectID, version: Int64) throws(StoreError) -> StoreRow {
        guard let entity = entities[id.entityName] else {
            throw .failed(StoreFailure(coreDataError(
                NSPersistentStoreIncompatibleSchemaError,
                "\(Swift.type(of: store as Any)) holds a node of entity '\(id.entityName)', which the model does not have")))
        }
        var values: [String: StoreValue] = [:]
        for (name, attribute) in entity.attributesByName where !attribute.isTransient {
            values[name] = try storeValue(node.value(forKey: name), of: attribute, entityName: id.entityName)
        }
        for (name, relationship) in entity.relationshipsByName where !relationship.isTransient {
            values[name] = try storeValue(node.value(forKey: name), of: relationship, entityName: id.entityName)
        }
        return StoreRow(objectID: id, version: version, values: values)
    }

    private func readRows() throws(StoreError) -> [StoreObjectID: StoreRow] {
        guard !isClosed else { throw .closed }
        try refreshRows()
        return rows
    }

    override func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        let (snapshot, entities) = try locked { () throws(StoreError) in (try readRows(), self.entities) }
        let names = Set(request.entityNames)
        let candidates = snapshot.values.filter { names.contains($0.objectID.entityName) }
        let matches = StoreQuery.run(request, candidates: candidates, resolve: { snapshot[$0] }, entities: entities)
        switch request.resultType {
        case .count: return .count(matches.count)
        case .objectIDs: return .objectIDs(matches.map(\.objectID))
        case .rows: return .rows(matches)
        }
    }

    override func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? {
        try locked { () throws(StoreError) in try readRows()[objectID] }
    }

    override func newPrimaryKeys(entityName: String, count: Int, attributeValues: (Int) -> [String: StoreValue]) throws(StoreError) -> [Int64] {
        guard count > 0 else { return [] }
        return try withStore { store, context in
            let objects = try pendingObjects(entityName: entityName, count: count, attributeValues: attributeValues, in: context)
            let ids = objects.map { objectID(for: $0.entity, reference: store.newReferenceObject(for: $0)) }
            return try primaryKeys(of: ids, entityName: entityName, expected: count)
        }
    }

    // MARK: Saves

    override func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        guard !changes.isEmpty else { return [:] }
        return try withStore { store, context in
            let entities = entities
            try refreshRows()
            try check(changes, entities: entities)

            let inserted = changes.inserted.compactMap { workingObject(for: $0, in: context, state: .inserted) }
            let updated = changes.updated.compactMap { workingObject(for: $0, in: context, state: .updated(previous: rows[$0.objectID])) }
            let deletedIDs = changes.deleted.map(\.objectID)

            // What to put back if the store's save fails.
            let updatedCaches = changes.updated.compactMap { row in
                nodes[row.objectID].map { ($0, $0.propertyCache?.mutableCopy() as? NSMutableDictionary) }
            }
            let removed = deletedIDs.compactMap { id in nodes[id].map { (id, $0) } }
            var added: [StoreObjectID] = []
            do {
                for object in inserted {
                    guard let id = object.objectID.storeObjectID else { continue }
                    let node = store.newCacheNode(for: object)
                    if node.objectID.storeObjectID != id { node.objectID = object.objectID }
                    nodes[id] = node
                    added.append(id)
                }
                for object in updated {
                    guard let id = object.objectID.storeObjectID, let node = nodes[id] else { continue }
                    store.updateCacheNode(node, from: object)
                }
                if !removed.isEmpty { store.willRemoveCacheNodes(Set(removed.map(\.1))) }
                for id in deletedIDs { nodes[id] = nil }
                try store.save()
            } catch {
                for id in added { nodes[id] = nil }
                for (node, cache) in updatedCaches { node.propertyCache = cache }
                for (id, node) in removed { nodes[id] = node }
                throw error
            }

            // The rows as the store now keeps them.
            for id in deletedIDs {
                if let row = rows.removeValue(forKey: id) { unique.remove(row, entities: entities) }
            }
            var versions: [StoreObjectID: Int64] = [:]
            for saved in changes.inserted + changes.updated {
                let id = saved.objectID
                let version = (rows[id]?.version ?? 0) + 1
                if let old = rows[id] { unique.remove(old, entities: entities) }
                var row = saved
                row.version = version
                // A node whose values cannot be read back keeps the saved row.
                if let node = nodes[id], let fromNode = try? self.row(of: node, id: id, version: version) { row = fromNode }
                rows[id] = row
                _ = unique.add(row, entities: entities)
                versions[id] = version
            }
            return versions
        }
    }

    /// Refuses a save whose objects changed since they were read (optimistic locking), that
    /// reinserts a stored object, or that breaks a uniqueness constraint.
    private func check(_ changes: StoreChangeSet, entities: [String: NSEntityDescription]) throws(StoreError) {
        var conflicts: [StoreVersionConflict] = []
        let checked = changes.updated.map { ($0.objectID, $0.version) } + changes.deleted.map { ($0.objectID, $0.version) }
        for (id, expected) in checked where rows[id]?.version != expected {
            conflicts.append(StoreVersionConflict(objectID: id, expectedVersion: expected, storedRow: rows[id]))
        }
        if !conflicts.isEmpty { throw .optimisticLockingFailure(conflicts) }
        if let duplicate = changes.inserted.first(where: { rows[$0.objectID] != nil }) {
            throw .duplicateObjectID(duplicate.objectID)
        }
        var index = unique
        for id in changes.deleted.map(\.objectID) + changes.updated.map(\.objectID) {
            if let row = rows[id] { index.remove(row, entities: entities) }
        }
        var constraintConflicts: [StoreConstraintConflict] = []
        for row in (changes.inserted + changes.updated).sorted(by: { $0.objectID < $1.objectID }) {
            constraintConflicts += index.add(row, entities: entities)
        }
        if !constraintConflicts.isEmpty { throw .constraintConflict(constraintConflicts) }
    }
}
