// Fuzz target: arbitrary bytes as an XML store file (Formats/xml-store.md), fed to the SAX2
// push reader whole and in two chunks split in the middle (both must agree), then matched against
// a model with every attribute type and relationship kind. Where it decodes: decode → encode →
// decode must give the same document; where it maps to rows: rows → objects → encode → decode →
// rows must give the same rows. The reader must throw; any crash, hang, failed check or sanitizer
// report is a bug.
import CoreDataModel
import CoreDataStorage
import CoreDataXMLFormat
import Foundation

/// The body of the `FuzzXMLStoreReader` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzXMLStoreReader {
    /// Owner 1—* Item (ordered), Item *—* Tag; Item has one attribute of every type.
    private static let schema: XMLStoreSchema? = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            return attribute
        }
        func relationship(_ name: String, toMany: Bool, ordered: Bool = false) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.maxCount = toMany ? 0 : 1
            relationship.isOrdered = ordered
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
            attribute("i16", .integer16AttributeType), attribute("i32", .integer32AttributeType), attribute("i64", .integer64AttributeType),
            attribute("flag", .booleanAttributeType), attribute("double", .doubleAttributeType), attribute("float", .floatAttributeType),
            attribute("decimal", .decimalAttributeType), attribute("text", .stringAttributeType), attribute("date", .dateAttributeType),
            attribute("blob", .binaryDataAttributeType), attribute("uuid", .UUIDAttributeType), attribute("uri", .URIAttributeType),
            attribute("archived", .transformableAttributeType), itemOwner, itemTags,
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
        return try? XMLStoreSchema(model: model)
    }()

    /// The unordered to-many relationships of the model above.
    private static let unordered: Set<String> = ["Item.tags", "Tag.items"]

    /// Equality that treats a NaN double as equal to the same bit pattern.
    private static func same(_ a: StoreRow, _ b: StoreRow) -> Bool {
        a.objectID == b.objectID && a.version == b.version && a.values.count == b.values.count && a.values.allSatisfy { key, value in
            switch (value, b.values[key]) {
            case (.double(let x), .double(let y)?): return x.bitPattern == y.bitPattern
            case (let x, let y?): return x == y
            default: return false
            }
        }
    }

    /// Reads `bytes` as an XML store file whole and in two chunks, then round-trips the document
    /// and its rows.
    ///
    /// Traps (`precondition`) when the two readings disagree or a round trip changes anything.
    public static func run(_ bytes: [UInt8]) {
        guard let schema else { return }
        let size = bytes.count
        let whole = try? XMLStoreReader.decode(bytes)
        let split = XMLStoreReader()
        let halves = try? { () throws(XMLStoreError) -> XMLStoreDocument in
            try split.feed(Array(bytes[..<(size / 2)]))
            try split.feed(Array(bytes[(size / 2)...]))
            return try split.finish()
        }()
        precondition((whole == nil) == (halves == nil), "one buffer and two chunks disagree on whether the input decodes")
        guard let document = whole else { return }
        precondition(halves == document, "one buffer and two chunks decode differently")

        let encoded = XMLStoreWriter.encode(document)
        guard let again = try? XMLStoreReader.decode(encoded) else {
            preconditionFailure("the re-encoded document does not decode:\n\(String(decoding: encoded, as: UTF8.self))")
        }
        precondition(again == document, "decode → encode → decode changed the document")

        _ = try? schema.metadata(from: document.info)
        guard let rows = try? schema.rows(from: document) else { return }
        var objects: [XMLStoreObject] = []
        for row in rows {
            guard let object = try? schema.object(for: row) else { preconditionFailure("a row read from a file cannot be written: \(row)") }
            objects.append(object)
        }
        let rewritten = XMLStoreWriter.encode(XMLStoreDocument(info: document.info, objects: objects))
        guard let reread = try? XMLStoreReader.decode(rewritten), let rowsAgain = try? schema.rows(from: reread) else {
            preconditionFailure("rows written back do not read:\n\(String(decoding: rewritten, as: UTF8.self))")
        }
        let byID = Dictionary(rowsAgain.map { ($0.objectID, $0) }, uniquingKeysWith: { first, _ in first })
        precondition(rowsAgain.count == rows.count, "rows → file → rows changed the number of rows")
        for row in rows {
            guard let other = byID[row.objectID] else { preconditionFailure("\(row.objectID) was lost writing it back") }
            // Unordered to-many relationships are written in id order.
            var sorted = row
            for (key, value) in row.values {
                if case .references(let ids) = value, unordered.contains("\(row.objectID.entityName).\(key)") {
                    sorted.values[key] = .references(ids.sorted { $0.primaryKey < $1.primaryKey })
                }
            }
            precondition(same(sorted, other), "rows → file → rows changed \(row.objectID): \(row) became \(other)")
        }
    }
}
