import CoreDataModel
import Foundation

/// The values of every uniqueness constraint, so that a save finds a duplicate in O(1) per row
/// instead of scanning the entity. A constraint declared on an entity covers its subentities.
/// Rows with a `nil` in a constrained property are not indexed: like SQL, nil never equals nil.
package struct UniquenessIndex: Sendable {
    package init() {}

    private struct Key: Hashable {
        /// The constraint's number in `constraints`.
        var constraint: Int
        var values: [StoreValue]
    }

    private struct Constraint: Hashable, Sendable {
        var declaringEntity: String
        var names: [String]
    }

    private var owners: [Key: StoreObjectID] = [:]
    /// Every constraint met so far, numbered, so that a key hashes a number instead of the
    /// entity's and properties' names.
    private var constraints: [Constraint] = []
    private var constraintNumbers: [Constraint: Int] = [:]
    /// Per entity name, the numbers of the constraints covering its rows (its own and its
    /// superentities'): the model walk is done once per entity, not once per row.
    private var plans: [String: [Int]] = [:]

    private mutating func plan(for entityName: String, entities: [String: NSEntityDescription]) -> [Int] {
        if let plan = plans[entityName] { return plan }
        guard let entity = entities[entityName] else { return [] }
        var plan: [Int] = []
        var current: NSEntityDescription? = entity
        var seen = Set<ObjectIdentifier>()
        while let declaring = current, seen.insert(ObjectIdentifier(declaring)).inserted {
            for names in declaring.uniquenessConstraintNames where !names.isEmpty {
                let constraint = Constraint(declaringEntity: declaring.name ?? "", names: names)
                if let number = constraintNumbers[constraint] {
                    plan.append(number)
                } else {
                    constraintNumbers[constraint] = constraints.count
                    plan.append(constraints.count)
                    constraints.append(constraint)
                }
            }
            current = declaring.superentity
        }
        plans[entityName] = plan
        return plan
    }

    /// The value as the constraint compares it. Strings compare by their Unicode scalars, as
    /// Apple's SQLite store's `COLLATE BINARY` index does (and the reference evaluator), not by
    /// Swift's canonical equivalence: "é" and "e\u{301}" are two values. A constrained property
    /// has one type, so a string's UTF-8 bytes cannot meet a data value.
    private static func exact(_ value: StoreValue) -> StoreValue {
        if case .string(let text) = value { return .data(Data(text.utf8)) }
        return value
    }

    private mutating func keys(for row: StoreRow, entities: [String: NSEntityDescription]) -> [Key] {
        let plan = plan(for: row.objectID.entityName, entities: entities)
        guard !plan.isEmpty else { return [] }
        var keys: [Key] = []
        for number in plan {
            let values = constraints[number].names.map { Self.exact(row[$0]) }
            if values.contains(where: \.isNull) { continue }
            keys.append(Key(constraint: number, values: values))
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
                let constraint = constraints[key.constraint]
                conflicts.append(StoreConstraintConflict(
                    entityName: constraint.declaringEntity, constraint: constraint.names, objectIDs: [owner, row.objectID]))
            } else {
                owners[key] = row.objectID
            }
        }
        return conflicts
    }
}
