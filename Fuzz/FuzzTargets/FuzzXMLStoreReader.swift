// Fuzz target: arbitrary bytes as an XML store file (Formats/xml-store.md), fed to the SAX2
// push reader whole and in two chunks split in the middle (both must agree), then matched against
// a model with every attribute type and relationship kind. Where it decodes: decode → encode →
// decode must give the same document; where it maps to rows: rows → objects → encode → decode →
// rows must give the same rows. The reader must throw; any crash, hang, failed check or sanitizer
// report is a bug.
import CoreDataModel
import CoreDataStorage
import CoreDataTestModel
import CoreDataXMLFormat
import Foundation

/// The body of the `FuzzXMLStoreReader` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzXMLStoreReader {
    /// The all-types test model (Owner 1—* Item (ordered), Item *—* Tag; Item has one attribute
    /// of every type) with a transformable `Item.archived`, for the XML format's `transformable`
    /// values (the corpus's every-type.xml holds one); the other test models have none.
    private static let schema: XMLStoreSchema? = try? XMLStoreSchema(
        model: AllTypesModel.make(itemAttributes: [AllTypesModel.attribute("archived", .transformableAttributeType)]))

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
