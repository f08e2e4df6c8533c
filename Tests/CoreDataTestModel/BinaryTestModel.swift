import CoreDataModel
import CoreDataStorage
import Foundation

/// The model of the golden store (`Tests/CoreDataBinaryFormatTests/Fixtures/golden-v1.store`)
/// and of most store tests, binary and XML, and of every binary-store fuzz target: the
/// ``AllTypesModel`` with nothing added. Its rows below made the golden store and the generated
/// seed corpora; changing what they return changes those bytes.
package enum BinaryTestModel {
    package static let model = AllTypesModel.make()

    package static func owner(_ key: Int64, _ name: String, items: [Int64]) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: "Owner", primaryKey: key), version: 0, values: [
            "name": .string(name), "items": .references(items.map { StoreObjectID(entityName: "Item", primaryKey: $0) }),
        ])
    }

    /// An item with a value of every attribute type, varied by `key`.
    package static func item(_ key: Int64, owner: Int64?, tags: [Int64] = []) -> StoreRow {
        var values: [String: StoreValue] = [
            "i16": .integer(Int64(Int16.min) + key), "i32": .integer(Int64(Int32.max) - key), "i64": .integer(Int64.min + key),
            "flag": .bool(key % 2 == 0), "double": .double(Double(key) * 1.5), "float": .double(Double(Float(key) / 4)),
            "decimal": .decimal(Decimal(string: "\(key).25") ?? 0), "text": .string("item \(key) — ünïcødé"),
            "date": .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(key))),
            "blob": .data(Data((0..<(key % 7)).map { UInt8($0) })), "uuid": .uuid(UUID(uuidString: String(format: "E621E1F8-C36C-495A-93FC-0C247A3E%04X", key)) ?? UUID()),
            "uri": .uri(URL(string: "https://example.com/items/\(key)?q=1") ?? URL(fileURLWithPath: "/")),
            "tags": .references(tags.map { StoreObjectID(entityName: "Tag", primaryKey: $0) }),
        ]
        if let owner { values["owner"] = .reference(StoreObjectID(entityName: "Owner", primaryKey: owner)) }
        return StoreRow(objectID: StoreObjectID(entityName: "Item", primaryKey: key), version: 0, values: values)
    }

    package static func tag(_ key: Int64, _ label: String, items: [Int64] = []) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: "Tag", primaryKey: key), version: 0, values: [
            "label": .string(label), "items": .references(items.map { StoreObjectID(entityName: "Item", primaryKey: $0) }),
        ])
    }
}
