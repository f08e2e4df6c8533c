import CoreDataModel

/// The values of every uniqueness constraint, so that a save finds a duplicate in O(1) per row
/// instead of scanning the entity. A constraint declared on an entity covers its subentities.
/// Rows with a `nil` in a constrained property are not indexed: like SQL, nil never equals nil.
package struct UniquenessIndex: Sendable {
    package init() {}

    private struct Key: Hashable {
        var declaringEntity: String
        var constraint: [String]
        var values: [StoreValue]
    }

    private var owners: [Key: StoreObjectID] = [:]

    private func keys(for row: StoreRow, entities: [String: NSEntityDescription]) -> [Key] {
        guard let entity = entities[row.objectID.entityName] else { return [] }
        var keys: [Key] = []
        var current: NSEntityDescription? = entity
        var seen = Set<ObjectIdentifier>()
        while let declaring = current, seen.insert(ObjectIdentifier(declaring)).inserted {
            for constraint in declaring.uniquenessConstraintNames where !constraint.isEmpty {
                let values = constraint.map { row[$0] }
                if values.contains(where: \.isNull) { continue }
                keys.append(Key(declaringEntity: declaring.name ?? "", constraint: constraint, values: values))
            }
            current = declaring.superentity
        }
        return keys
    }

    package mutating func remove(_ row: StoreRow, entities: [String: NSEntityDescription]) {
        for key in keys(for: row, entities: entities) where owners[key] == row.objectID {
            owners[key] = nil
        }
    }

    /// Indexes `row`; returns a conflict for each constraint whose values another row holds.
    package mutating func add(_ row: StoreRow, entities: [String: NSEntityDescription]) -> [StoreConstraintConflict] {
        var conflicts: [StoreConstraintConflict] = []
        for key in keys(for: row, entities: entities) {
            if let owner = owners[key], owner != row.objectID {
                conflicts.append(StoreConstraintConflict(
                    entityName: key.declaringEntity, constraint: key.constraint, objectIDs: [owner, row.objectID]))
            } else {
                owners[key] = row.objectID
            }
        }
        return conflicts
    }
}
