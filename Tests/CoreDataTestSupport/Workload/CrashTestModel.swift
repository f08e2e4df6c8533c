import CoreDataModel
import CoreDataStorage
import Foundation

/// The model of the crash and fault suites: Owner 1—* Item (ordered), Item *—* Tag, and Note
/// with large binary values (a save of notes spans several log frames). Items carry every
/// attribute type.
package enum CrashTestModel {
    package static let model: NSManagedObjectModel = {
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
        owner.properties = [attribute("name", .stringAttributeType), attribute("rank", .integer16AttributeType), ownerItems]
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
        let note = NSEntityDescription()
        note.name = "Note"
        note.properties = [attribute("title", .stringAttributeType), attribute("body", .binaryDataAttributeType), attribute("written", .dateAttributeType)]
        for (a, aEntity, b, bEntity) in [(ownerItems, owner, itemOwner, item), (itemTags, item, tagItems, tag)] {
            a.destinationEntity = bEntity
            b.destinationEntity = aEntity
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        let model = NSManagedObjectModel()
        model.entities = [owner, item, tag, note]
        try? model.freeze()
        return model
    }()

    package static let entityNames = ["Item", "Note", "Owner", "Tag"]

    package static func id(_ entity: String, _ key: Int64) -> StoreObjectID {
        StoreObjectID(entityName: entity, primaryKey: key)
    }

    package static func owner(_ key: Int64, _ name: String, rank: Int64 = 0, items: [Int64]) -> StoreRow {
        StoreRow(objectID: id("Owner", key), version: 0, values: [
            "name": .string(name), "rank": .integer(rank), "items": .references(items.map { id("Item", $0) }),
        ])
    }

    /// An item with a value of every attribute type, varied by `key` and `variant`.
    package static func item(_ key: Int64, owner: Int64?, tags: [Int64] = [], variant: Int64 = 0) -> StoreRow {
        let seed = key * 1_000 + variant
        return StoreRow(objectID: id("Item", key), version: 0, values: [
            "i16": .integer(Int64(Int16.min) + seed % 30_000), "i32": .integer(Int64(Int32.max) - seed),
            "i64": .integer(Int64.min + seed), "flag": .bool(seed % 2 == 0), "double": .double(Double(seed) * 1.5),
            "float": .double(Double(Float(seed) / 4)), "decimal": .decimal(Decimal(string: "\(seed).25") ?? 0),
            "text": .string("item \(key) v\(variant) — ünïcødé"),
            "date": .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(seed))),
            "blob": .data(Data((0..<(seed % 97)).map { UInt8(truncatingIfNeeded: $0 &* 7) })),
            "uuid": .uuid(UUID(uuidString: String(format: "E621E1F8-C36C-495A-93FC-%012X", seed)) ?? UUID()),
            "uri": .uri(URL(string: "https://example.com/items/\(key)?v=\(variant)") ?? URL(fileURLWithPath: "/")),
            "owner": owner.map { .reference(id("Owner", $0)) } ?? .null,
            "tags": .references(tags.map { id("Tag", $0) }),
        ])
    }

    package static func tag(_ key: Int64, _ label: String, items: [Int64] = []) -> StoreRow {
        StoreRow(objectID: id("Tag", key), version: 0, values: [
            "label": .string(label), "items": .references(items.map { id("Item", $0) }),
        ])
    }

    /// A note whose body is `size` bytes of poorly compressible data.
    package static func note(_ key: Int64, size: Int) -> StoreRow {
        var generator = SeededGenerator(seed: UInt64(key))
        var body = Data(count: size)
        body.withUnsafeMutableBytes { raw in
            var position = 0
            while position < raw.count {
                var word = generator.next()
                for _ in 0..<8 where position < raw.count {
                    raw[position] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    position += 1
                }
            }
        }
        return StoreRow(objectID: id("Note", key), version: 0, values: [
            "title": .string("note \(key)"), "body": .data(body), "written": .date(Date(timeIntervalSinceReferenceDate: Double(key))),
        ])
    }
}
