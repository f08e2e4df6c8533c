import CoreDataModel
import CoreDataStorage
import CoreDataTestModel
import Foundation

/// The model of the crash and fault suites: the ``AllTypesModel`` (Owner 1—* Item (ordered),
/// Item *—* Tag, Items carry every attribute type) with `Owner.rank` and a `Note` entity of large
/// binary values (a save of notes spans several log frames) and a fetch index on its title, an `Attachment` entity whose
/// `payload` allows external storage (Formats/binary-store.md §15; `preview` does not), and its
/// rows. Its items' values
/// differ from BinaryTestModel's: they also vary by a variant, which the crash workload's updates use.
package enum CrashTestModel {
    package static let model: NSManagedObjectModel = {
        let note = NSEntityDescription()
        note.name = "Note"
        note.properties = [
            AllTypesModel.attribute("title", .stringAttributeType), AllTypesModel.attribute("body", .binaryDataAttributeType),
            AllTypesModel.attribute("written", .dateAttributeType),
        ]
        // A fetch index (not part of the version hash): the binary store persists it at
        // checkpoints (Formats/binary-store.md §7.2), which the crash suites then cover.
        note.indexes = [NSFetchIndexDescription(name: "byTitle", elements: [NSFetchIndexElementDescription(propertyName: "title", collationType: .binary)])]
        let attachment = NSEntityDescription()
        attachment.name = "Attachment"
        let payload = AllTypesModel.attribute("payload", .binaryDataAttributeType)
        payload.allowsExternalBinaryDataStorage = true
        attachment.properties = [AllTypesModel.attribute("name", .stringAttributeType), payload, AllTypesModel.attribute("preview", .binaryDataAttributeType)]
        return AllTypesModel.make(ownerAttributes: [AllTypesModel.attribute("rank", .integer16AttributeType)], entities: [note, attachment])
    }()

    package static let entityNames = ["Attachment", "Item", "Note", "Owner", "Tag"]

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

    /// BinaryTestModel's tag: the Tag entity is the same in both models.
    package static func tag(_ key: Int64, _ label: String, items: [Int64] = []) -> StoreRow {
        BinaryTestModel.tag(key, label, items: items)
    }

    /// `note` with another title (nil: none).
    package static func retitled(_ note: StoreRow, _ title: String?) -> StoreRow {
        var copy = note
        copy.values["title"] = title.map { .string($0) } ?? .null
        return copy
    }

    /// A note whose body is `size` bytes of poorly compressible data.
    package static func note(_ key: Int64, size: Int) -> StoreRow {
        StoreRow(objectID: id("Note", key), version: 0, values: [
            "title": .string("note \(key)"), "body": .data(noise(seed: UInt64(key), size: size)),
            "written": .date(Date(timeIntervalSinceReferenceDate: Double(key))),
        ])
    }

    /// An attachment whose payload is `size` bytes of noise from `seed` (external from
    /// `ExternalDataLayout.threshold` bytes on) and whose preview is `previewSize` bytes
    /// (always in the record).
    package static func attachment(_ key: Int64, _ name: String, size: Int, seed: UInt64, previewSize: Int = 0) -> StoreRow {
        StoreRow(objectID: id("Attachment", key), version: 0, values: [
            "name": .string(name), "payload": size > 0 ? .data(noise(seed: seed, size: size)) : .null,
            "preview": previewSize > 0 ? .data(noise(seed: seed &+ 1, size: previewSize)) : .null,
        ])
    }

    /// `size` bytes of poorly compressible data from `seed`.
    package static func noise(seed: UInt64, size: Int) -> Data {
        var generator = SeededGenerator(seed: seed)
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
        return body
    }
}
