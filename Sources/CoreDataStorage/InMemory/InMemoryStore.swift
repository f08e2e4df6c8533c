import CoreDataModel
import CoreDataPredicate
import Foundation

/// The in-memory store (`NSInMemoryStoreType`): rows live in dictionaries and vanish with the
/// store. Fetches evaluate predicates with the reference evaluator over one snapshot.
///
/// Threading: every method takes the store's lock for as long as it reads or swaps the state;
/// predicates and sorts run outside it on a copy-on-write snapshot, so a long fetch never blocks
/// a save. Complexity: a fetch is O(rows of the fetched entities); a save O(changed rows).
public final class InMemoryStore: PersistentStoreEngine, @unchecked Sendable {
    private struct State {
        var rows: [StoreObjectID: StoreRow] = [:]
        var nextPrimaryKey: [String: Int64] = [:]
        var metadata = StoreMetadata()
        var unique = UniquenessIndex()
        var isClosed = false
    }

    private let lock = NSLock()
    private var state = State()
    private let entities: [String: NSEntityDescription]

    /// Creates an empty store for the entities of `model` (which must be frozen).
    public init(model: NSManagedObjectModel, metadata: StoreMetadata) {
        self.entities = model.entitiesByName
        state.metadata = metadata
    }

    private func withState<T>(_ body: (inout State) throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !state.isClosed else { throw .closed }
        return try body(&state)
    }

    public func metadata() throws(StoreError) -> StoreMetadata {
        try withState { $0.metadata }
    }

    public func setMetadata(_ metadata: StoreMetadata) throws(StoreError) {
        try withState { $0.metadata = metadata }
    }

    public func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? {
        try withState { $0.rows[objectID] }
    }

    /// The rows of `objectIDs` under one lock.
    public func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        try withState { state in objectIDs.compactMap { state.rows[$0] } }
    }

    public func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] {
        try withState { state in
            let first = state.nextPrimaryKey[entityName, default: 1]
            state.nextPrimaryKey[entityName] = first + Int64(count)
            return (0..<Int64(count)).map { first + $0 }
        }
    }

    public func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        let snapshot = try withState { $0.rows }
        let matches = matchingRows(request, in: snapshot)
        switch request.resultType {
        case .count: return .count(matches.count)
        case .objectIDs: return .objectIDs(matches.map(\.objectID))
        case .rows: return .rows(matches)
        }
    }

    private func matchingRows(_ request: StoreFetchRequest, in snapshot: [StoreObjectID: StoreRow]) -> [StoreRow] {
        let names = Set(request.entityNames)
        let candidates = snapshot.values.filter { names.contains($0.objectID.entityName) }
        return StoreQuery.run(request, candidates: candidates, resolve: { snapshot[$0] }, entities: entities)
    }

    public func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        try withState { (state: inout State) throws(StoreError) -> [StoreObjectID: Int64] in
            // Work on copies: any error below leaves the store as it was.
            var rows = state.rows
            var unique = state.unique
            var versions: [StoreObjectID: Int64] = [:]
            var conflicts: [StoreVersionConflict] = []

            for (id, expected) in changes.deleted {
                guard let stored = rows[id], stored.version == expected else {
                    conflicts.append(StoreVersionConflict(objectID: id, expectedVersion: expected, storedRow: rows[id]))
                    continue
                }
                unique.remove(stored, entities: entities)
                rows[id] = nil
            }
            for update in changes.updated {
                guard let stored = rows[update.objectID], stored.version == update.version else {
                    conflicts.append(StoreVersionConflict(
                        objectID: update.objectID, expectedVersion: update.version, storedRow: rows[update.objectID]))
                    continue
                }
                unique.remove(stored, entities: entities)
                var next = update
                next.version = stored.version + 1
                rows[update.objectID] = next
                versions[update.objectID] = next.version
            }
            if !conflicts.isEmpty { throw .optimisticLockingFailure(conflicts) }
            for insert in changes.inserted {
                guard rows[insert.objectID] == nil else { throw .duplicateObjectID(insert.objectID) }
                var next = insert
                next.version = 1
                rows[insert.objectID] = next
                versions[insert.objectID] = 1
                let key = insert.objectID.primaryKey
                if key >= state.nextPrimaryKey[insert.objectID.entityName, default: 1] {
                    state.nextPrimaryKey[insert.objectID.entityName] = key + 1
                }
            }
            var constraintConflicts: [StoreConstraintConflict] = []
            for id in versions.keys.sorted() {
                guard let row = rows[id] else { continue }
                constraintConflicts += unique.add(row, entities: entities)
            }
            if !constraintConflicts.isEmpty { throw .constraintConflict(constraintConflicts) }
            try Self.checkReferences(changes, in: rows)
            state.rows = rows
            state.unique = unique
            return versions
        }
    }

    private static func checkReferences(_ changes: StoreChangeSet, in rows: [StoreObjectID: StoreRow]) throws(StoreError) {
        for row in changes.inserted + changes.updated {
            for (property, value) in row.values {
                switch value {
                case .reference(let target) where rows[target] == nil:
                    throw .danglingReference(from: row.objectID, property: property, to: target)
                case .references(let targets):
                    if let missing = targets.first(where: { rows[$0] == nil }) {
                        throw .danglingReference(from: row.objectID, property: property, to: missing)
                    }
                default:
                    continue
                }
            }
        }
    }

    public func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] {
        try withState { state in
            let matches = matchingRows(request, in: state.rows)
            for row in matches {
                state.unique.remove(row, entities: entities)
                state.rows[row.objectID] = nil
            }
            return matches.map(\.objectID)
        }
    }

    public func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] {
        try withState { (state: inout State) throws(StoreError) -> [StoreObjectID] in
            let matches = matchingRows(request, in: state.rows)
            var rows = state.rows
            var unique = state.unique
            var conflicts: [StoreConstraintConflict] = []
            for row in matches {
                unique.remove(row, entities: entities)
                var next = row
                next.values.merge(values) { _, new in new }
                next.version += 1
                rows[row.objectID] = next
                conflicts += unique.add(next, entities: entities)
            }
            if !conflicts.isEmpty { throw .constraintConflict(conflicts) }
            state.rows = rows
            state.unique = unique
            return matches.map(\.objectID)
        }
    }

    public func close() throws(StoreError) {
        try withState { $0.isClosed = true }
    }
}
