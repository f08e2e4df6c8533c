import CoreDataModel
import CoreDataStorage
import Foundation

/// How a model's entities and properties are spelled in an XML store, and the conversion between
/// the file's objects and store rows (`Formats/xml-store.md §5–§8`). No I/O.
///
/// Threading: immutable after creation; safe from any thread.
public struct XMLStoreSchema: @unchecked Sendable {
    // Classes, not structs: a row's conversion hands these around per value, and a struct of
    // several references costs a retain and release of each on every copy.
    private final class Property {
        let name: String
        /// The property's slot in the entity's layout.
        let slot: Int
        let attribute: NSAttributeDescription?
        let relationship: NSRelationshipDescription?
        /// The name as the file writes it (lower-cased, §8).
        let writtenName: String
        /// Where the property is in its entity's `properties`.
        let position: Int
        /// The attribute's type and the file's name for it, read once here instead of per value.
        let attributeType: NSAttributeType
        let typeName: String?

        init(
            name: String, slot: Int, attribute: NSAttributeDescription?, relationship: NSRelationshipDescription?,
            writtenName: String, position: Int, attributeType: NSAttributeType, typeName: String?
        ) {
            self.name = name
            self.slot = slot
            self.attribute = attribute
            self.relationship = relationship
            self.writtenName = writtenName
            self.position = position
            self.attributeType = attributeType
            self.typeName = typeName
        }
    }

    private final class Entity {
        let entity: NSEntityDescription
        let name: String
        /// The process-wide number of `name`, which the IDs of rows read carry.
        let number: EntityNumber
        let writtenName: String
        /// Persistent properties in the model's order, for writing.
        let properties: [Property]
        /// The same, by lower-cased name, for reading.
        let byWrittenName: [String: Property]
        /// The model's layout of the entity: rows read are laid out in it.
        let layout: PropertyLayout

        init(entity: NSEntityDescription, name: String, writtenName: String, properties: [Property], byWrittenName: [String: Property], layout: PropertyLayout) {
            self.entity = entity
            self.name = name
            self.number = EntityNumber(name)
            self.writtenName = writtenName
            self.properties = properties
            self.byWrittenName = byWrittenName
            self.layout = layout
        }
    }

    private let entities: [String: Entity]
    private let entitiesByWrittenName: [String: Entity]

    /// The metadata keys the file keeps outside the property list (§3, §4).
    public static let uuidKey = "NSStoreUUID"
    public static let typeKey = "NSStoreType"
    /// The store type the reader reports in the metadata (§4).
    public static let storeType = "XML"

    /// The spelling of a frozen model.
    ///
    /// - Throws: when two entities, or two properties of one entity, differ only in case (§8).
    public init(model: NSManagedObjectModel) throws(XMLStoreError) {
        var entities: [String: Entity] = [:]
        var byWritten: [String: Entity] = [:]
        for entity in model.entities {
            guard let name = entity.name else { continue }
            var properties: [Property] = []
            var byName: [String: Property] = [:]
            let layout = entity.propertyLayout
            // The layout's properties: a composite attribute's elements are written one by one.
            for property in entity.layoutProperties where !property.isTransient {
                let attribute = property as? NSAttributeDescription
                let written = property.name.lowercased()
                let attributeType = attribute?.attributeType ?? .undefinedAttributeType
                let item = Property(
                    name: property.name, slot: layout.slot(of: property.name) ?? -1, attribute: attribute,
                    relationship: property as? NSRelationshipDescription, writtenName: written, position: properties.count,
                    attributeType: attributeType, typeName: XMLValueText.typeName(attributeType))
                guard item.attribute != nil || item.relationship != nil else { continue }
                if let other = byName[written] {
                    throw XMLStoreError(line: 0, "entity '\(name)' has properties '\(other.name)' and '\(property.name)', which an XML store cannot tell apart (names are written lower-cased)")
                }
                byName[written] = item
                properties.append(item)
            }
            let described = Entity(entity: entity, name: name, writtenName: name.uppercased(), properties: properties, byWrittenName: byName, layout: layout)
            if let other = byWritten[described.writtenName] {
                throw XMLStoreError(line: 0, "entities '\(other.name)' and '\(name)' cannot share an XML store (entity names are written upper-cased)")
            }
            byWritten[described.writtenName] = described
            entities[name] = described
        }
        self.entities = entities
        self.entitiesByWrittenName = byWritten
    }

    // MARK: Reading

    /// The rows the document's objects describe, checked against the model: every entity and
    /// property exists, every value parses as its type, every reference names an object of the
    /// right entity, and every relationship has the model's arity.
    ///
    /// - Throws: the first problem, in file order.
    public func rows(from document: XMLStoreDocument) throws(XMLStoreError) -> [StoreRow] {
        try mapRows(document) { (problem) throws(XMLStoreError) in throw problem }
    }

    /// Every problem ``rows(from:)`` would refuse the document for, in file order, each with
    /// its line (what `coredata verify` lists). An element with a problem is left out and the
    /// check goes on, so one damaged element is reported once.
    public func problems(in document: XMLStoreDocument) -> [XMLStoreError] {
        var problems: [XMLStoreError] = []
        _ = try? mapRows(document) { (problem) throws(XMLStoreError) in problems.append(problem) }
        return problems
    }

    /// Maps every object, handing each problem to `report`, which throws to stop or returns to
    /// skip the element at fault and go on.
    private func mapRows(_ document: XMLStoreDocument, report: (XMLStoreError) throws(XMLStoreError) -> Void) throws(XMLStoreError) -> [StoreRow] {
        var owners: [Int64: Entity] = [:]
        owners.reserveCapacity(document.objects.count)
        var mapped: [XMLStoreObject] = []
        mapped.reserveCapacity(document.objects.count)
        for object in document.objects {
            guard let entity = entitiesByWrittenName[object.type] ?? entitiesByWrittenName[object.type.uppercased()] else {
                try report(XMLStoreError(line: object.line, "object z\(object.id) has type '\(object.type)', which is no entity of the model"))
                continue
            }
            guard !entity.entity.isAbstract else {
                try report(XMLStoreError(line: object.line, "object z\(object.id) is of the abstract entity '\(entity.name)'"))
                continue
            }
            guard owners[object.id] == nil else {
                try report(XMLStoreError(line: object.line, "duplicate id z\(object.id)"))
                continue
            }
            owners[object.id] = entity
            mapped.append(object)
        }
        var rows: [StoreRow] = []
        rows.reserveCapacity(mapped.count)
        for object in mapped {
            guard let entity = owners[object.id] else { continue }
            rows.append(try row(for: object, of: entity, owners: owners, report: report))
        }
        return rows
    }

    private func row(
        for object: XMLStoreObject, of entity: Entity, owners: [Int64: Entity], report: (XMLStoreError) throws(XMLStoreError) -> Void
    ) throws(XMLStoreError) -> StoreRow {
        var values: [StoreValue?] = .emptySlots(entity.layout.count)
        // Files written by the store list attributes in the model's order: try the property
        // after the last one matched before hashing the name.
        var nextProperty = 0
        for attribute in object.attributes {
            let property: Property
            if nextProperty < entity.properties.count, entity.properties[nextProperty].writtenName == attribute.name {
                property = entity.properties[nextProperty]
            } else if let named = entity.byWrittenName[attribute.name] ?? entity.byWrittenName[attribute.name.lowercased()] {
                property = named
            } else {
                try report(XMLStoreError(line: attribute.line, "entity '\(entity.name)' has no attribute '\(attribute.name)'"))
                continue
            }
            nextProperty = property.position + 1
            guard property.attribute != nil else {
                try report(XMLStoreError(line: attribute.line, "entity '\(entity.name)' has no attribute '\(attribute.name)'"))
                continue
            }
            guard attribute.type == property.typeName else {
                guard XMLValueText.knownTypeNames.contains(attribute.type) else {
                    try report(XMLStoreError(line: attribute.line, "attribute '\(attribute.name)' has unknown type '\(attribute.type)'"))
                    continue
                }
                try report(XMLStoreError(line: attribute.line, "attribute '\(attribute.name)' of '\(entity.name)' is \(property.attributeType.xcodeName) in the model, but the file says '\(attribute.type)'"))
                continue
            }
            guard property.slot >= 0, values[property.slot] == nil else {
                try report(XMLStoreError(line: attribute.line, "attribute '\(attribute.name)' appears twice in object z\(object.id)"))
                continue
            }
            guard let value = XMLValueText.decode(attribute.text, isBase64: attribute.isBase64, as: property.attributeType) else {
                try report(XMLStoreError(line: attribute.line, "attribute '\(attribute.name)': '\(attribute.text.prefix(80))' is not a valid \(attribute.type)"))
                continue
            }
            values[property.slot] = value
        }
        relationships: for relationship in object.relationships {
            guard let property = entity.byWrittenName[relationship.name] ?? entity.byWrittenName[relationship.name.lowercased()],
                  let description = property.relationship else {
                try report(XMLStoreError(line: relationship.line, "entity '\(entity.name)' has no relationship '\(relationship.name)'"))
                continue
            }
            guard property.slot >= 0, values[property.slot] == nil else {
                try report(XMLStoreError(line: relationship.line, "relationship '\(relationship.name)' appears twice in object z\(object.id)"))
                continue
            }
            let fileToOne = relationship.maxCount == 1
            guard fileToOne == !description.isToMany else {
                try report(XMLStoreError(line: relationship.line, "relationship '\(relationship.name)' of '\(entity.name)' is \(description.isToMany ? "to-many" : "to-one") in the model, but the file's type \(relationship.minCount)/\(relationship.maxCount) says \(fileToOne ? "to-one" : "to-many")"))
                continue
            }
            if fileToOne && relationship.idrefs.count > 1 {
                try report(XMLStoreError(line: relationship.line, "to-one relationship '\(relationship.name)' refers to \(relationship.idrefs.count) objects"))
                continue
            }
            var targets: [StoreObjectID] = []
            targets.reserveCapacity(relationship.idrefs.count)
            for id in relationship.idrefs {
                guard let target = owners[id] else {
                    try report(XMLStoreError(line: relationship.line, "relationship '\(relationship.name)' refers to z\(id), which is no object in the file"))
                    continue relationships
                }
                if let destination = description.destinationEntity, !target.entity.isKindOf(entity: destination) {
                    try report(XMLStoreError(line: relationship.line, "relationship '\(relationship.name)' refers to z\(id), a '\(target.name)', not a '\(destination.name ?? "")'"))
                    continue relationships
                }
                targets.append(StoreObjectID(entity: target.number, primaryKey: id))
            }
            if description.isToMany {
                values[property.slot] = .references(targets)
            } else if let target = targets.first {
                values[property.slot] = .reference(target)
            }
        }
        return StoreRow(objectID: StoreObjectID(entity: entity.number, primaryKey: object.id), version: object.version, layout: entity.layout, slots: values)
    }

    /// The store metadata the file holds: its property list, with `NSStoreUUID` from `<UUID>` and
    /// `NSStoreType` `"XML"` (§4).
    ///
    /// - Throws: when the version hashes name an entity the model does not have.
    public func metadata(from info: XMLStoreInfo) throws(XMLStoreError) -> StoreMetadata {
        if case .dictionary(let hashes)? = info.metadata[NSStoreModelVersionHashesKey] {
            for name in hashes.keys.sorted() where entities[name] == nil {
                throw XMLStoreError(line: info.metadataLine, "the metadata's \(NSStoreModelVersionHashesKey) names the entity '\(name)', which the model does not have")
            }
        }
        return Self.storeMetadata(of: info)
    }

    /// The store metadata `<databaseInfo>` holds, without checking it against a model: the
    /// property list with `NSStoreUUID` from `<UUID>` and `NSStoreType` `"XML"` (§3, §4).
    public static func storeMetadata(of info: XMLStoreInfo) -> StoreMetadata {
        var values = info.metadata.mapValues(\.object)
        values[uuidKey] = info.uuid
        values[typeKey] = storeType
        return StoreMetadata(values)
    }

    // MARK: Writing

    /// `<databaseInfo>` for `metadata` (§3, §4).
    ///
    /// - Throws: when a metadata value is not a property-list value or holds characters XML
    ///   cannot carry.
    public func info(metadata: StoreMetadata, nextObjectID: Int64) throws(XMLStoreError) -> XMLStoreInfo {
        var entries: [String: PropertyListValue] = [:]
        for (key, value) in metadata.values where key != Self.uuidKey && key != Self.typeKey {
            guard let converted = PropertyListValue(value) else {
                throw XMLStoreError(line: 0, "metadata '\(key)' holds a \(type(of: value)), which a property list cannot hold")
            }
            guard XMLCharacters.canHold(key), Self.canHold(converted) else {
                throw XMLStoreError(line: 0, "metadata '\(key)' holds characters XML 1.0 cannot carry")
            }
            entries[key] = converted
        }
        let uuid = (metadata[Self.uuidKey] as? String).flatMap { XMLCharacters.canHold($0) ? $0 : nil } ?? UUID().uuidString
        return XMLStoreInfo(uuid: uuid, nextObjectID: nextObjectID, metadata: entries)
    }

    private static func canHold(_ value: PropertyListValue) -> Bool {
        switch value {
        case .string(let text): return XMLCharacters.canHold(text)
        case .array(let items): return items.allSatisfy(canHold)
        case .dictionary(let entries): return entries.allSatisfy { XMLCharacters.canHold($0.key) && canHold($0.value) }
        default: return true
        }
    }

    /// The `<object>` of a row: attributes and relationships in the model's order, nil values
    /// left out, unordered to-many references in ascending id order (§5–§7).
    ///
    /// - Throws: when the row's entity is not in the model or a value is not of its property's kind.
    public func object(for row: StoreRow) throws(XMLStoreError) -> XMLStoreObject {
        guard let entity = entities[row.objectID.entityName] else {
            throw XMLStoreError(line: 0, "\(row.objectID) is of no entity of the model")
        }
        var object = XMLStoreObject(type: entity.writtenName, id: row.objectID.primaryKey, version: row.version)
        let bySlot = row.layout.extends(entity.layout)
        for property in entity.properties {
            let value = bySlot && property.slot >= 0 ? row[slot: property.slot] : row[property.name]
            guard !value.isNull else { continue }
            if let attribute = property.attribute {
                guard let typeName = XMLValueText.typeName(attribute.attributeType),
                      let (text, isBase64) = XMLValueText.encode(value, as: attribute.attributeType) else {
                    throw XMLStoreError(line: 0, "\(row.objectID).\(property.name): \(value) cannot be written as a \(attribute.attributeType.xcodeName) attribute")
                }
                object.attributes.append(XMLStoreAttribute(name: property.name.lowercased(), type: typeName, text: text, isBase64: isBase64))
            } else if let relationship = property.relationship {
                let ids: [Int64]
                switch value {
                case .reference(let target) where !relationship.isToMany: ids = [target.primaryKey]
                case .references(let targets) where relationship.isToMany:
                    ids = relationship.isOrdered ? targets.map(\.primaryKey) : targets.map(\.primaryKey).sorted()
                default:
                    throw XMLStoreError(line: 0, "\(row.objectID).\(property.name): \(value) does not fit a \(relationship.isToMany ? "to-many" : "to-one") relationship")
                }
                object.relationships.append(XMLStoreRelationship(
                    name: property.name.lowercased(),
                    minCount: relationship.isToMany ? relationship.minCount : 1,
                    maxCount: relationship.isToMany ? relationship.maxCount : 1,
                    destination: relationship.destinationEntity?.name?.uppercased() ?? "",
                    idrefs: ids))
            }
        }
        return object
    }
}
