import CoreDataModel

/// Turns a change set into the changes persistent history records for it, the same way for
/// every store: inserts, then updates (with the properties the save changed), then deletes (with
/// a tombstone of the attributes the model marks `preservesValueInHistoryOnDeletion`).
///
/// Threading: immutable; safe from any thread.
public struct StoreHistoryRecorder: Sendable {
    /// Per entity name, the attributes whose values a delete keeps (inherited ones included).
    private let preserved: [String: [String]]

    /// A recorder for the entities of a frozen model.
    public init(entities: [String: NSEntityDescription]) {
        var preserved: [String: [String]] = [:]
        for (name, entity) in entities {
            let names = entity.slotAttributesByName.values.filter(\.preservesValueInHistoryOnDeletion).map(\.name).sorted()
            if !names.isEmpty { preserved[name] = names }
        }
        self.preserved = preserved
    }

    /// Whether deleting an object of the entity records values, so the store must read the
    /// object's row before it deletes it.
    public func keepsValues(of entityName: String) -> Bool { preserved[entityName] != nil }

    /// The changes of `changes`.
    ///
    /// - Parameter deletedRow: the stored row of a deleted object, asked only for entities that
    ///   ``keepsValues(of:)``.
    /// Complexity: O(changed objects + updated properties).
    public func changes(
        for changes: StoreChangeSet, deletedRow: (StoreObjectID) throws(StoreError) -> StoreRow?
    ) throws(StoreError) -> [StoreHistoryChange] {
        var result: [StoreHistoryChange] = []
        result.reserveCapacity(changes.inserted.count + changes.updated.count + changes.deleted.count)
        for row in changes.inserted { result.append(StoreHistoryChange(kind: .insert, objectID: row.objectID)) }
        let named = changes.history?.updatedProperties ?? [:]
        for row in changes.updated {
            let properties = named[row.objectID] ?? row.slots.indices.filter { row.slots[$0] != nil }.map { row.layout.names[$0] }
            result.append(StoreHistoryChange(kind: .update, objectID: row.objectID, updatedProperties: properties))
        }
        for (id, _) in changes.deleted {
            var tombstone: [String: StoreValue] = [:]
            if let names = preserved[id.entityName], let row = try deletedRow(id) {
                for name in names {
                    let value = row[name]
                    if !value.isNull { tombstone[name] = value }
                }
            }
            result.append(StoreHistoryChange(kind: .delete, objectID: id, tombstone: tombstone))
        }
        return result
    }
}
