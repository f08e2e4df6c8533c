// The model every binary-store fuzz target reads and writes with, and the catalog a new store of
// it starts with, so record bytes decode the same in every target and in the seed corpora.
import CoreDataBinaryFormat
import CoreDataModel
import CoreDataStorage
import Foundation

/// The model of `Tests/CoreDataBinaryFormatTests/Fixtures/golden-v1.store` (BinaryTestModel):
/// Owner 1—* Item (ordered), Item *—* Tag, every attribute type.
public enum FuzzModel {
    public static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        func relationship(_ name: String, toMany: Bool, ordered: Bool = false) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.maxCount = toMany ? 0 : 1
            relationship.isOrdered = ordered
            relationship.isOptional = true
            return relationship
        }
        let ownerItems = relationship("items", toMany: true, ordered: true)
        let itemOwner = relationship("owner", toMany: false)
        let itemTags = relationship("tags", toMany: true)
        let tagItems = relationship("items", toMany: true)
        let owner = NSEntityDescription()
        owner.name = "Owner"
        owner.properties = [attribute("name", .stringAttributeType), ownerItems]
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            attribute("i16", .integer16AttributeType), attribute("i32", .integer32AttributeType),
            attribute("i64", .integer64AttributeType), attribute("flag", .booleanAttributeType),
            attribute("double", .doubleAttributeType), attribute("float", .floatAttributeType),
            attribute("decimal", .decimalAttributeType), attribute("text", .stringAttributeType),
            attribute("date", .dateAttributeType), attribute("blob", .binaryDataAttributeType),
            attribute("uuid", .UUIDAttributeType), attribute("uri", .URIAttributeType),
            itemOwner, itemTags,
        ]
        let tag = NSEntityDescription()
        tag.name = "Tag"
        tag.properties = [attribute("label", .stringAttributeType), tagItems]
        for (a, aEntity, b, bEntity) in [(ownerItems, owner, itemOwner, item), (itemTags, item, tagItems, tag)] {
            a.destinationEntity = bEntity
            b.destinationEntity = aEntity
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        let model = NSManagedObjectModel()
        model.entities = [owner, item, tag]
        try? model.freeze()
        return model
    }()

    /// The catalog a new store of ``model`` starts with (BinaryStore.create's order): entities by
    /// name, attributes then relationships, each sorted.
    public static let catalog: Catalog = {
        var catalog = Catalog()
        catalog.register(entity: "Item", properties: [
            "blob", "date", "decimal", "double", "flag", "float", "i16", "i32", "i64", "text", "uri", "uuid", "owner", "tags",
        ])
        catalog.register(entity: "Owner", properties: ["name", "items"])
        catalog.register(entity: "Tag", properties: ["label", "items"])
        return catalog
    }()

    public static func item(_ key: Int64, owner: Int64?, tags: [Int64] = []) -> StoreRow {
        var values: [String: StoreValue] = [
            "i16": .integer(Int64(Int16.min) + key), "i32": .integer(Int64(Int32.max) - key), "i64": .integer(Int64.min + key),
            "flag": .bool(key % 2 == 0), "double": .double(Double(key) * 1.5), "float": .double(Double(Float(key) / 4)),
            "decimal": .decimal(Decimal(string: "\(key).25") ?? 0), "text": .string("item \(key) — ünïcødé"),
            "date": .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(key))),
            "blob": .data(Data((0..<(key % 7)).map { UInt8($0) })),
            "uuid": .uuid(UUID(uuidString: String(format: "E621E1F8-C36C-495A-93FC-0C247A3E%04X", key)) ?? UUID()),
            "uri": .uri(URL(string: "https://example.com/items/\(key)?q=1") ?? URL(fileURLWithPath: "/")),
            "tags": .references(tags.map { StoreObjectID(entityName: "Tag", primaryKey: $0) }),
        ]
        if let owner { values["owner"] = .reference(StoreObjectID(entityName: "Owner", primaryKey: owner)) }
        return StoreRow(objectID: StoreObjectID(entityName: "Item", primaryKey: key), version: 0, values: values)
    }

    public static func owner(_ key: Int64, _ name: String, items: [Int64]) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: "Owner", primaryKey: key), version: 0, values: [
            "name": .string(name), "items": .references(items.map { StoreObjectID(entityName: "Item", primaryKey: $0) }),
        ])
    }

    public static func tag(_ key: Int64, _ label: String, items: [Int64] = []) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: "Tag", primaryKey: key), version: 0, values: [
            "label": .string(label), "items": .references(items.map { StoreObjectID(entityName: "Item", primaryKey: $0) }),
        ])
    }
}
