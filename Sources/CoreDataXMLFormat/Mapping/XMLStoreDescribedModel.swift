import CoreDataModel
import CoreDataStorage
import Foundation

/// The model an XML store's file describes by itself (`Formats/xml-store.md §3–§8`), for reading a
/// store without the app's model: `coredata info`, `verify` and `dump` map the objects to rows
/// with it through ``XMLStoreSchema``, the same mapping the engine uses.
///
/// Entities are the objects' `type`s, the relationships' `destination`s and the metadata's
/// version-hash keys, spelled as a hash key spells them (the model's spelling, §4) when one
/// matches and as written otherwise. Properties keep the file's spelling (lower-cased, §8);
/// attributes get the type their `type` names (§6); relationships are to-one when `MAX` is 1 and
/// to-many otherwise, to the written destination (§7). An entity whose objects a relationship
/// refers to in place of its destination becomes a subentity of the destination, as the file is
/// valid only if it is one.
///
/// It is not the app's model: property names are lower-cased, to-many relationships unordered and
/// without inverses, and the version hashes differ. Use it to read, never to write a store.
///
/// Threading: a pure function of the document. Complexity: O(elements of the document).
public enum XMLStoreDescribedModel {
    private struct Property {
        var name: String
        var attributeType: NSAttributeType?
        var isToOne = false
        var destination = ""
        var line: Int

        var summary: String {
            if let attributeType { return "an attribute of type \(XMLValueText.typeName(attributeType) ?? "?")" }
            return "a \(isToOne ? "to-one" : "to-many") relationship to '\(destination)'"
        }
    }

    private struct Entity {
        var name: String
        var parent: String?
        var parentLine = 0
        var properties: [String: Property] = [:]
        var order: [String] = []
    }

    /// The frozen model the document describes, and the problems found building it: a property
    /// written with two types or arities, or references that make an entity a kind of two others.
    /// Each problem names its line; the element at fault takes no part in the model.
    public static func describe(_ document: XMLStoreDocument) -> (model: NSManagedObjectModel, problems: [XMLStoreError]) {
        var spelled: [String: String] = [:]
        var hashNames: [String] = []
        if case .dictionary(let hashes)? = document.info.metadata[NSStoreModelVersionHashesKey] {
            hashNames = hashes.keys.sorted()
            for name in hashNames where spelled[name.uppercased()] == nil { spelled[name.uppercased()] = name }
        }
        var entities: [String: Entity] = [:]
        var entityOrder: [String] = []
        func entityKey(_ written: String) -> String {
            let key = written.uppercased()
            if entities[key] == nil {
                entities[key] = Entity(name: spelled[key] ?? written)
                entityOrder.append(key)
            }
            return key
        }
        hashNames.forEach { _ = entityKey($0) }
        var problems: [XMLStoreError] = []
        // With version hashes the metadata lists the model's entities: a name outside the list is
        // damage, not a new entity.
        func listed(_ written: String, line: Int, what: String) -> String? {
            guard !hashNames.isEmpty, spelled[written.uppercased()] == nil else { return entityKey(written) }
            problems.append(XMLStoreError(line: line, "\(what) '\(written)', which is no entity the metadata's \(NSStoreModelVersionHashesKey) lists (\(hashNames.joined(separator: ", ")))"))
            return nil
        }
        var typeOfObject: [Int64: String] = [:]
        var objects: [(XMLStoreObject, String)] = []
        for object in document.objects {
            guard let key = listed(object.type, line: object.line, what: "object z\(object.id) has type") else { continue }
            objects.append((object, key))
            if typeOfObject[object.id] == nil { typeOfObject[object.id] = key }
        }

        func add(_ property: Property, to key: String) {
            let propertyKey = property.name.lowercased()
            if let existing = entities[key]?.properties[propertyKey] {
                if existing.attributeType != property.attributeType || existing.isToOne != property.isToOne || existing.destination != property.destination {
                    problems.append(XMLStoreError(line: property.line, "'\(property.name)' of '\(entities[key]?.name ?? key)' is \(property.summary) here, but \(existing.summary) at line \(existing.line)"))
                }
                return
            }
            entities[key]?.properties[propertyKey] = property
            entities[key]?.order.append(propertyKey)
        }
        func isKind(_ key: String, of ancestor: String) -> Bool {
            var current: String? = key
            var steps = 0
            while let next = current, steps <= entities.count {
                if next == ancestor { return true }
                current = entities[next]?.parent
                steps += 1
            }
            return false
        }

        for (object, key) in objects {
            for attribute in object.attributes {
                // An unknown type is the schema's to report.
                guard let type = XMLValueText.attributeType(named: attribute.type) else { continue }
                add(Property(name: attribute.name, attributeType: type, line: attribute.line), to: key)
            }
            for relationship in object.relationships {
                guard let destination = listed(relationship.destination, line: relationship.line, what: "relationship '\(relationship.name)' has the destination") else { continue }
                add(Property(name: relationship.name, isToOne: relationship.maxCount == 1, destination: destination, line: relationship.line), to: key)
                for id in relationship.idrefs {
                    guard let target = typeOfObject[id], !isKind(target, of: destination) else { continue }
                    if isKind(destination, of: target) {
                        problems.append(XMLStoreError(line: relationship.line, "relationship '\(relationship.name)' to '\(entities[destination]?.name ?? destination)' refers to z\(id), a '\(entities[target]?.name ?? target)', of which '\(entities[destination]?.name ?? destination)' is itself a kind"))
                    } else if let parent = entities[target]?.parent {
                        problems.append(XMLStoreError(line: relationship.line, "relationship '\(relationship.name)' to '\(entities[destination]?.name ?? destination)' refers to z\(id), a '\(entities[target]?.name ?? target)', which line \(entities[target]?.parentLine ?? 0) makes a kind of '\(entities[parent]?.name ?? parent)'"))
                    } else {
                        entities[target]?.parent = destination
                        entities[target]?.parentLine = relationship.line
                    }
                }
            }
        }

        // Descriptions: properties an ancestor declares are inherited, not declared again.
        var descriptions: [String: NSEntityDescription] = [:]
        for key in entityOrder {
            let description = NSEntityDescription()
            description.name = entities[key]?.name
            descriptions[key] = description
        }
        func inherited(_ key: String) -> Set<String> {
            var names: Set<String> = []
            var current = entities[key]?.parent
            var steps = 0
            while let ancestor = current, steps <= entities.count {
                names.formUnion(entities[ancestor]?.order ?? [])
                current = entities[ancestor]?.parent
                steps += 1
            }
            return names
        }
        for key in entityOrder {
            guard let entity = entities[key], let description = descriptions[key] else { continue }
            let skipped = inherited(key)
            var properties: [NSPropertyDescription] = []
            for propertyKey in entity.order where !skipped.contains(propertyKey) {
                guard let property = entity.properties[propertyKey] else { continue }
                if let type = property.attributeType {
                    let attribute = NSAttributeDescription()
                    attribute.name = property.name
                    attribute.attributeType = type
                    properties.append(attribute)
                } else {
                    let relationship = NSRelationshipDescription()
                    relationship.name = property.name
                    relationship.destinationEntity = descriptions[property.destination]
                    relationship.maxCount = property.isToOne ? 1 : 0
                    properties.append(relationship)
                }
            }
            description.properties = properties
        }
        // Children grouped in one pass: a file may describe as many entities as it has objects.
        var childKeys: [String: [String]] = [:]
        for key in entityOrder {
            if let parent = entities[key]?.parent { childKeys[parent, default: []].append(key) }
        }
        for key in entityOrder {
            guard let description = descriptions[key], let keys = childKeys[key] else { continue }
            let children = keys.compactMap { descriptions[$0] }
            if !children.isEmpty { description.subentities = children }
        }
        let model = NSManagedObjectModel()
        model.entities = entityOrder.compactMap { descriptions[$0] }
        do {
            try model.freeze()
        } catch {
            problems.append(XMLStoreError(line: 0, "the objects describe no consistent model: \(error)"))
            let empty = NSManagedObjectModel()
            try? empty.freeze()
            return (empty, problems)
        }
        return (model, problems.sorted { $0.line < $1.line })
    }
}
