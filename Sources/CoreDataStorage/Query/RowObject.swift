import CoreDataModel
import CoreDataPredicate

/// A stored row seen through key-value access, so that the reference evaluator and sort
/// descriptors can run over rows with no managed objects: attributes read as Swift values,
/// relationships as the destination rows, within one snapshot of the store.
///
/// `resolve` reads the row of a relationship's destination from the same snapshot the fetch
/// reads; a store passes a dictionary lookup or its own index lookup.
///
/// `destinations` answers for a relationship a row leaves out (a store that loads relationships
/// lazily, see ``PersistentStoreEngine/destinations(of:relationship:)``); without it such a
/// relationship reads as having no destinations.
package final class RowObject: KeyValueReadable, Hashable, @unchecked Sendable {
    package let row: StoreRow
    private let entity: NSEntityDescription?
    private let resolve: (StoreObjectID) -> StoreRow?
    private let destinations: ((StoreObjectID, String) -> StoreValue)?
    private let entities: [String: NSEntityDescription]

    package init(
        row: StoreRow, resolve: @escaping (StoreObjectID) -> StoreRow?, entities: [String: NSEntityDescription],
        destinations: ((StoreObjectID, String) -> StoreValue)? = nil
    ) {
        self.row = row
        self.resolve = resolve
        self.destinations = destinations
        self.entities = entities
        self.entity = entities[row.objectID.entityName]
    }

    package func value(forKey key: String) -> Any? {
        if key == "objectID" || key == "self" { return row.objectID }
        var stored = row[key]
        if let attribute = entity?.attributesByName[key] {
            if let composite = attribute as? NSCompositeAttributeDescription { return compositeValue(composite, prefix: key) }
            return stored.attributeValue(as: attribute.attributeType)
        }
        if row.values[key] == nil, let destinations, entity?.relationshipsByName[key] != nil {
            stored = destinations(row.objectID, key)
        }
        switch stored {
        case .reference(let id):
            return resolve(id).map { RowObject(row: $0, resolve: resolve, entities: entities, destinations: destinations) }
        case .references(let ids):
            return ids.compactMap { id in resolve(id).map { RowObject(row: $0, resolve: resolve, entities: entities, destinations: destinations) } }
        default:
            return stored.attributeValue(as: .undefinedAttributeType)
        }
    }

    /// A composite attribute as the object graph shows it: its elements' values, read from the
    /// row's element slots (`address.city`), as a dictionary; nil when no element has a value.
    private func compositeValue(_ composite: NSCompositeAttributeDescription, prefix: String) -> [String: Any]? {
        var result: [String: Any] = [:]
        for element in composite.elements {
            let path = "\(prefix).\(element.name)"
            if let nested = element as? NSCompositeAttributeDescription {
                if let value = compositeValue(nested, prefix: path) { result[element.name] = value }
            } else if let value = row[path].attributeValue(as: element.attributeType) {
                result[element.name] = value
            }
        }
        return result.isEmpty ? nil : result
    }

    package static func == (lhs: RowObject, rhs: RowObject) -> Bool { lhs.row.objectID == rhs.row.objectID }
    package func hash(into hasher: inout Hasher) { hasher.combine(row.objectID) }
}

extension RowObject: PredicateIdentifiable {
    /// A row compares in predicates as its object ID, like the managed object for it.
    package var predicateIdentity: AnyHashable { AnyHashable(row.objectID) }
}

extension StoreObjectID: PredicateIdentifiable {
    /// An ID compares in predicates as itself, like its row and its managed object.
    public var predicateIdentity: AnyHashable { AnyHashable(self) }
}
