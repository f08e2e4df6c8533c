import CoreData
import Foundation

/// A user-written `NSAtomicStore`, as an app would write one: the whole store is one JSON file
/// read in `load()` and written in `save()`. Relationships are stored as reference strings and
/// loaded as cache nodes; the metadata travels as a base64 property list inside the JSON.
final class JSONAtomicStore: NSAtomicStore, @unchecked Sendable {
    static let storeType = "JSONAtomicStore"

    /// When set, `save()` fails with this error (the framework must then put the nodes back).
    var failSavesWith: NSError?
    private(set) var saveCalls = 0
    private(set) var removedNodes = 0

    override func load() throws {
        guard let url, let data = FileManager.default.contents(atPath: url.path), !data.isEmpty else { return }
        guard let file = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let records = file["objects"] as? [[String: Any]],
              let model = persistentStoreCoordinator?.managedObjectModel
        else {
            throw NSError(domain: "JSONAtomicStore", code: 2, userInfo: [NSLocalizedDescriptionKey: "\(url.path) is not a store file"])
        }
        if let encoded = file["metadata"] as? String, let plist = Data(base64Encoded: encoded),
           let stored = try PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any] {
            metadata = stored
        }
        // Two passes: every node first, then the values, so relationships can name any node.
        var nodes: [String: NSAtomicStoreCacheNode] = [:]
        for record in records {
            guard let reference = record["reference"] as? String, let entityName = record["entity"] as? String,
                  let entity = model.entitiesByName[entityName] else { continue }
            nodes[reference] = NSAtomicStoreCacheNode(objectID: objectID(for: entity, withReferenceObject: reference))
        }
        for record in records {
            guard let reference = record["reference"] as? String, let node = nodes[reference] else { continue }
            let entity = node.objectID.entity
            let values = record["values"] as? [String: Any] ?? [:]
            for (name, attribute) in entity.attributesByName {
                node.setValue(values[name].flatMap { Self.decode($0, attribute.attributeType) }, forKey: name)
            }
            for (name, relationship) in entity.relationshipsByName {
                if relationship.isToMany {
                    let destinations = ((values[name] as? [String]) ?? []).compactMap { nodes[$0] }
                    node.setValue(relationship.isOrdered ? NSOrderedSet(array: destinations) as Any : Set(destinations) as Any, forKey: name)
                } else {
                    node.setValue((values[name] as? String).flatMap { nodes[$0] }, forKey: name)
                }
            }
        }
        addCacheNodes(Set(nodes.values))
    }

    override func save() throws {
        saveCalls += 1
        if let failSavesWith { throw failSavesWith }
        guard let url else { return }
        var records: [[String: Any]] = []
        for node in cacheNodes() {
            let entity = node.objectID.entity
            var values: [String: Any] = [:]
            for (name, attribute) in entity.attributesByName {
                if let value = node.value(forKey: name), let encoded = Self.encode(value, attribute.attributeType) { values[name] = encoded }
            }
            for (name, relationship) in entity.relationshipsByName {
                guard let value = node.value(forKey: name) else { continue }
                if relationship.isToMany {
                    let elements: [Any]
                    switch value {
                    case let ordered as NSOrderedSet: elements = ordered.array
                    case let set as Set<NSAtomicStoreCacheNode>: elements = Array(set)
                    case let set as NSSet: elements = set.allObjects
                    case let array as [Any]: elements = array
                    default: elements = []
                    }
                    values[name] = elements.compactMap(reference)
                } else {
                    values[name] = reference(value)
                }
            }
            records.append(["entity": entity.name ?? "", "reference": reference(node) ?? "", "values": values])
        }
        let plist = try PropertyListSerialization.data(fromPropertyList: metadata ?? [:], format: .binary, options: 0)
        let file: [String: Any] = ["metadata": plist.base64EncodedString(), "objects": records]
        try JSONSerialization.data(withJSONObject: file, options: [.sortedKeys]).write(to: url, options: .atomic)
    }

    override func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        UUID().uuidString
    }

    override func newCacheNode(for managedObject: NSManagedObject) -> NSAtomicStoreCacheNode {
        let node = NSAtomicStoreCacheNode(objectID: managedObject.objectID)
        updateCacheNode(node, from: managedObject)
        return node
    }

    override func updateCacheNode(_ node: NSAtomicStoreCacheNode, from managedObject: NSManagedObject) {
        for (name, property) in managedObject.entity.propertiesByName where !property.isTransient {
            let value = managedObject.value(forKey: name)
            // Relationships as the destinations' nodes where they exist (a destination inserted
            // in the same save may not have one yet: then its object ID).
            func destination(_ object: NSManagedObject) -> Any { cacheNode(for: object.objectID) ?? object.objectID }
            switch value {
            case let object as NSManagedObject:
                node.setValue(destination(object), forKey: name)
            case let set as Set<NSManagedObject>:
                node.setValue(set.map(destination), forKey: name)
            case let ordered as NSOrderedSet:
                node.setValue(NSOrderedSet(array: ordered.array.compactMap { ($0 as? NSManagedObject).map(destination) }), forKey: name)
            default:
                node.setValue(value, forKey: name)
            }
        }
    }

    override func willRemoveCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) {
        removedNodes += cacheNodes.count
    }

    // MARK: Encoding

    private func reference(_ value: Any) -> String? {
        switch value {
        case let node as NSAtomicStoreCacheNode: return referenceObject(for: node.objectID) as? String
        case let id as NSManagedObjectID: return referenceObject(for: id) as? String
        default: return nil
        }
    }

    private static func encode(_ value: Any, _ type: NSAttributeType) -> Any? {
        switch (type, value) {
        case (.dateAttributeType, let date as Date): return date.timeIntervalSinceReferenceDate
        case (.UUIDAttributeType, let uuid as UUID): return uuid.uuidString
        case (.binaryDataAttributeType, let data as Data), (.transformableAttributeType, let data as Data): return data.base64EncodedString()
        case (.integer16AttributeType, let number as Int16): return Int(number)
        case (.integer32AttributeType, let number as Int32): return Int(number)
        case (.integer64AttributeType, let number as Int64): return number
        case (.floatAttributeType, let number as Float): return Double(number)
        default: return value
        }
    }

    private static func decode(_ value: Any, _ type: NSAttributeType) -> Any? {
        switch type {
        case .dateAttributeType: return (value as? Double).map { Date(timeIntervalSinceReferenceDate: $0) }
        case .UUIDAttributeType: return (value as? String).flatMap(UUID.init(uuidString:))
        case .binaryDataAttributeType, .transformableAttributeType: return (value as? String).flatMap { Data(base64Encoded: $0) }
        case .integer16AttributeType: return (value as? Int).map { Int16(truncatingIfNeeded: $0) }
        case .integer32AttributeType: return (value as? Int).map { Int32(truncatingIfNeeded: $0) }
        case .integer64AttributeType: return (value as? Int).map { Int64($0) }
        case .booleanAttributeType: return value as? Bool
        case .doubleAttributeType, .floatAttributeType: return value as? Double
        default: return value
        }
    }
}
