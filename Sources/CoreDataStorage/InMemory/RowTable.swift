import CoreDataModel
import CoreDataPredicate

/// The rows of a store held in memory, with the rules every such store applies: version checks
/// (optimistic locking), uniqueness constraints, references that must point at stored rows,
/// primary keys that are never handed out twice, and fetches through ``StoreQuery``.
///
/// The in-memory store keeps one for its whole life; the XML store loads one from its file and
/// writes it back after each change. The table is a value: a store applies a change to a copy and
/// keeps the copy only when the change (and, for a file store, its write) succeeded.
///
/// Complexity: a save is O(all rows), since it changes a copy of the table (the copy is what
/// makes a failed save change nothing); a fetch is O(rows of the fetched entities).
package struct RowTable {
    /// How primary keys are numbered.
    package enum KeyScope: Sendable {
        /// Each entity counts from 1 (the in-memory and binary stores).
        case perEntity
        /// One count for the whole store, so a key alone names an object (the XML store, whose
        /// `id="z…"` attributes are unique in the file: `Formats/xml-store.md §5`).
        case storeWide
    }

    package private(set) var rows: [StoreObjectID: StoreRow] = [:]
    package let keyScope: KeyScope
    private var unique = UniquenessIndex()
    private var nextKeys: [String: Int64] = [:]
    /// For ``KeyScope/storeWide``: the entity that holds each key.
    private var keyOwners: [Int64: EntityNumber] = [:]
    private let entities: [String: NSEntityDescription]
    /// Persistent history, when the store records it: part of the table so that a change and
    /// its transaction are kept or dropped together.
    package private(set) var history: StoreHistoryLog?
    /// Counts the changes applied: names the table's state for query generations.
    package private(set) var generation: UInt64 = 0
    private let recorder: StoreHistoryRecorder?

    /// An empty table for the entities of a frozen model.
    ///
    /// - Parameter recordsHistory: whether every change is recorded as a persistent-history
    ///   transaction (``history``).
    package init(entities: [String: NSEntityDescription], keyScope: KeyScope, recordsHistory: Bool = false) {
        self.entities = entities
        self.keyScope = keyScope
        self.history = recordsHistory ? StoreHistoryLog() : nil
        self.recorder = recordsHistory ? StoreHistoryRecorder(entities: entities) : nil
    }

    /// Deletes the oldest history transactions up to `cutoff`; returns how many.
    package mutating func deleteHistory(_ cutoff: StoreHistoryCutoff) -> Int {
        history?.delete(cutoff) ?? 0
    }

    /// Records `changes` as a transaction when the table keeps history; `before` is the table
    /// as it was before the change (for tombstones).
    private mutating func record(_ changes: StoreChangeSet, before: [StoreObjectID: StoreRow]) throws(StoreError) {
        guard let recorder, history != nil else { return }
        let recorded = try recorder.changes(for: changes) { id throws(StoreError) in before[id] }
        history?.append(changes.history, changes: recorded)
    }

    private func counter(for entityName: String) -> String {
        keyScope == .storeWide ? "" : entityName
    }

    /// The next key ``reserveKeys(entityName:count:)`` would hand out.
    package func nextKey(entityName: String = "") -> Int64 {
        nextKeys[counter(for: entityName), default: 1]
    }

    /// Makes sure no key up to `key` is handed out (a file records the counter it reached).
    package mutating func advanceKeys(pastOrTo key: Int64, entityName: String = "") {
        let name = counter(for: entityName)
        if key >= nextKeys[name, default: 1] { nextKeys[name] = key &+ 1 }
    }

    /// Hands out `count` new primary keys for `entityName`.
    package mutating func reserveKeys(entityName: String, count: Int) -> [Int64] {
        let name = counter(for: entityName)
        let first = nextKeys[name, default: 1]
        nextKeys[name] = first + Int64(count)
        return (0..<Int64(count)).map { first + $0 }
    }

    /// Adds rows read from a file, as they are (versions kept). Used while a store opens.
    ///
    /// - Throws: ``StoreError/duplicateObjectID(_:)`` for a key held twice,
    ///   ``StoreError/constraintConflict(_:)`` when the rows break a uniqueness constraint.
    package mutating func load(_ loaded: [StoreRow]) throws(StoreError) {
        var conflicts: [StoreConstraintConflict] = []
        for row in loaded {
            guard rows[row.objectID] == nil else { throw .duplicateObjectID(row.objectID) }
            try claimKey(of: row.objectID)
            rows[row.objectID] = row
            advanceKeys(pastOrTo: row.objectID.primaryKey, entityName: row.objectID.entityName)
            conflicts += unique.add(row, entities: entities)
        }
        if !conflicts.isEmpty { throw .constraintConflict(conflicts) }
    }

    private mutating func claimKey(of id: StoreObjectID) throws(StoreError) {
        guard keyScope == .storeWide else { return }
        if let owner = keyOwners[id.primaryKey], owner != id.entity { throw .duplicateObjectID(id) }
        keyOwners[id.primaryKey] = id.entity
    }

    /// The rows that match `request`, in its order, paged.
    package func matching(_ request: StoreFetchRequest) -> [StoreRow] {
        // By number: hashing an entity number costs less than hashing its name, once per row.
        let wanted = Set(request.entityNames.map(EntityNumber.init))
        let candidates = rows.values.filter { wanted.contains($0.objectID.entity) }
        let snapshot = rows
        return StoreQuery.run(request, candidates: candidates, resolve: { snapshot[$0] }, entities: entities)
    }

    /// Applies a change set all or nothing (on any error the table is unchanged).
    ///
    /// - Returns: the new version of every inserted and updated object.
    /// - Throws: ``StoreError/optimisticLockingFailure(_:)``, ``StoreError/duplicateObjectID(_:)``,
    ///   ``StoreError/constraintConflict(_:)``, ``StoreError/danglingReference(from:property:to:)``.
    package mutating func apply(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        var next = self
        let versions = try next.applyInPlace(changes)
        try next.record(changes, before: rows)
        next.generation += 1
        self = next
        return versions
    }

    private mutating func applyInPlace(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        var versions: [StoreObjectID: Int64] = [:]
        var conflicts: [StoreVersionConflict] = []
        for (id, expected) in changes.deleted {
            guard let stored = rows[id], stored.version == expected else {
                conflicts.append(StoreVersionConflict(objectID: id, expectedVersion: expected, storedRow: rows[id]))
                continue
            }
            unique.remove(stored, entities: entities)
            rows[id] = nil
            if keyScope == .storeWide { keyOwners[id.primaryKey] = nil }
        }
        for update in changes.updated {
            guard let stored = rows[update.objectID], stored.version == update.version else {
                conflicts.append(StoreVersionConflict(
                    objectID: update.objectID, expectedVersion: update.version, storedRow: rows[update.objectID]))
                continue
            }
            unique.remove(stored, entities: entities)
            var row = update
            row.version = stored.version + 1
            rows[update.objectID] = row
            versions[update.objectID] = row.version
        }
        if !conflicts.isEmpty { throw .optimisticLockingFailure(conflicts) }
        for insert in changes.inserted {
            guard rows[insert.objectID] == nil else { throw .duplicateObjectID(insert.objectID) }
            try claimKey(of: insert.objectID)
            var row = insert
            row.version = 1
            rows[insert.objectID] = row
            versions[insert.objectID] = 1
            advanceKeys(pastOrTo: insert.objectID.primaryKey, entityName: insert.objectID.entityName)
        }
        var constraintConflicts: [StoreConstraintConflict] = []
        for id in versions.keys.sorted() {
            guard let row = rows[id] else { continue }
            constraintConflicts += unique.add(row, entities: entities)
        }
        if !constraintConflicts.isEmpty { throw .constraintConflict(constraintConflicts) }
        if changes.checksReferences { try checkReferences(changes) }
        return versions
    }

    private func checkReferences(_ changes: StoreChangeSet) throws(StoreError) {
        for row in changes.inserted + changes.updated {
            for (slot, value) in row.slots.enumerated() {
                switch value {
                case .reference(let target)? where rows[target] == nil:
                    throw .danglingReference(from: row.objectID, property: row.layout.names[slot], to: target)
                case .references(let targets)?:
                    if let missing = targets.first(where: { rows[$0] == nil }) {
                        throw .danglingReference(from: row.objectID, property: row.layout.names[slot], to: missing)
                    }
                default:
                    continue
                }
            }
        }
    }

    /// Deletes the rows a fetch matches; returns their IDs.
    package mutating func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] {
        let matches = matching(request)
        if !matches.isEmpty {
            var changes = StoreChangeSet(deleted: matches.map { ($0.objectID, $0.version) })
            changes.history = request.history
            try record(changes, before: rows)
            generation += 1
        }
        for row in matches {
            unique.remove(row, entities: entities)
            rows[row.objectID] = nil
            if keyScope == .storeWide { keyOwners[row.objectID.primaryKey] = nil }
        }
        return matches.map(\.objectID)
    }

    /// Sets `values` on the rows a fetch matches, all or nothing; returns their IDs.
    ///
    /// - Throws: ``StoreError/constraintConflict(_:)`` when the new values break a constraint.
    package mutating func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] {
        let matches = matching(request)
        var next = self
        var conflicts: [StoreConstraintConflict] = []
        for row in matches {
            next.unique.remove(row, entities: entities)
            var changed = row
            changed.values.merge(values) { _, new in new }
            changed.version += 1
            next.rows[row.objectID] = changed
            conflicts += next.unique.add(changed, entities: entities)
        }
        if !conflicts.isEmpty { throw .constraintConflict(conflicts) }
        if !matches.isEmpty {
            var changes = StoreChangeSet(updated: matches)
            var context = request.history ?? StoreHistoryContext()
            let names = values.keys.sorted()
            for row in matches { context.updatedProperties[row.objectID] = names }
            changes.history = context
            try next.record(changes, before: rows)
            next.generation += 1
        }
        self = next
        return matches.map(\.objectID)
    }
}
