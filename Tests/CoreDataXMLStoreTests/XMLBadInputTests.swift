import CoreData
import CoreDataStorage
import CoreDataTestSupport
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation
import XCTest

/// Damaged or foreign input (Formats/xml-store.md §12): each is refused with an error naming the
/// line and what is wrong; nothing crashes and the file is left as it was.
final class XMLBadInputTests: XCTestCase {
    typealias M = BinaryTestModel

    /// A valid store around `body` (objects), line 1 being the XML declaration.
    static func store(_ body: String, metadata: String = "<dict/>") -> String {
        """
        <?xml version="1.0" standalone="yes"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
        <database>
            <databaseInfo>
                <version>134481920</version>
                <UUID>6F1D8F7E-2C55-4E0B-9A43-5D4C0E1B2A39</UUID>
                <nextObjectID>9</nextObjectID>
                <metadata><plist version="1.0">\(metadata)</plist></metadata>
            </databaseInfo>
        \(body)
        </database>
        """
    }

    /// Objects start on line 10.
    static let cases: [(String, String, Int, String)] = [
        ("valid", store(#"<object type="TAG" id="z1"><attribute name="label" type="string">a</attribute></object>"#), 0, ""),
        ("malformed XML", store(#"<object type="TAG" id="z1"><attribute name="label" type="string">a</object>"#), 10, "malformed XML"),
        ("truncated", String(store("").prefix(200)), 0, "malformed XML"),
        ("not a store", "<?xml version=\"1.0\"?>\n<plist/>", 2, "not an XML store"),
        ("unknown attribute type", store(#"<object type="TAG" id="z1"><attribute name="label" type="text">a</attribute></object>"#), 10, "unknown type 'text'"),
        ("type differs from model", store(#"<object type="ITEM" id="z1"><attribute name="i16" type="int32">1</attribute></object>"#), 10, "Integer 16 in the model"),
        ("value out of range", store(#"<object type="ITEM" id="z1"><attribute name="i16" type="int16">40000</attribute></object>"#), 10, "not a valid int16"),
        ("bad date", store(#"<object type="ITEM" id="z1"><attribute name="date" type="date">soon</attribute></object>"#), 10, "not a valid date"),
        ("unknown entity", store(#"<object type="SHIP" id="z1"></object>"#), 10, "no entity of the model"),
        ("unknown property", store(#"<object type="TAG" id="z1"><attribute name="colour" type="string">a</attribute></object>"#), 10, "has no attribute 'colour'"),
        ("bad id", store(#"<object type="TAG" id="x1"></object>"#), 10, "not z followed by a number"),
        ("version too large", store(#"<object type="TAG" id="z1" version="9223372036854775807"></object>"#), 10, "not a number from 1 to 2^62"),
        ("id too large", store(#"<object type="TAG" id="z9223372036854775807"></object>"#), 10, "not z followed by a number from 1 to 2^62"),
        ("id one past the limit", store(#"<object type="TAG" id="z4611686018427387905"></object>"#), 10, "not z followed by a number from 1 to 2^62"),
        ("id at the limit", store(#"<object type="TAG" id="z4611686018427387904"></object>"#), 0, ""),
        ("id past Int64", store(#"<object type="TAG" id="z99999999999999999999999"></object>"#), 10, "not z followed by a number"),
        ("id without digits", store(#"<object type="TAG" id="z"></object>"#), 10, "not z followed by a number"),
        ("id zero", store(#"<object type="TAG" id="z0"></object>"#), 10, "not z followed by a number"),
        ("id with a sign", store(#"<object type="TAG" id="z+1"></object>"#), 10, "not z followed by a number"),
        ("id with non-ASCII digits", store(#"<object type="TAG" id="z١٢"></object>"#), 10, "not z followed by a number"),
        ("id with leading zeros", store(#"<object type="TAG" id="z007"></object>"#), 0, ""),
        ("attributes out of the model's order", store(#"<object type="ITEM" id="z1"><attribute name="date" type="date">0</attribute><attribute name="i16" type="int16">1</attribute></object>"#), 0, ""),
        ("duplicate id", store("<object type=\"TAG\" id=\"z1\"></object>\n<object type=\"OWNER\" id=\"z1\"></object>"), 11, "duplicate id z1 (first used on line 10)"),
        ("dangling id", store(#"<object type="TAG" id="z1"><relationship name="items" type="0/0" destination="ITEM" idrefs="z7"></relationship></object>"#), 10, "refers to z7, which is no object"),
        ("wrong destination", store("<object type=\"TAG\" id=\"z1\"><relationship name=\"items\" type=\"0/0\" destination=\"ITEM\" idrefs=\"z2\"></relationship></object>\n<object type=\"OWNER\" id=\"z2\"></object>"), 10, "a 'Owner', not a 'Item'"),
        ("to-many written as to-one", store("<object type=\"TAG\" id=\"z1\"><relationship name=\"items\" type=\"1/1\" destination=\"ITEM\" idrefs=\"z2\"></relationship></object>\n<object type=\"ITEM\" id=\"z2\"></object>"), 10, "to-many in the model"),
        ("to-one with two ids", store("<object type=\"ITEM\" id=\"z1\"><relationship name=\"owner\" type=\"1/1\" destination=\"OWNER\" idrefs=\"z2 z3\"></relationship></object>\n<object type=\"OWNER\" id=\"z2\"></object><object type=\"OWNER\" id=\"z3\"></object>"), 10, "refers to 2 objects"),
        ("bad arity text", store(#"<object type="ITEM" id="z1"><relationship name="owner" type="one" destination="OWNER" idrefs=""></relationship></object>"#), 10, "not MIN/MAX"),
        ("metadata not matching the model", store("", metadata: "<dict><key>NSStoreModelVersionHashes</key><dict><key>Ship</key><data>AAAA</data></dict></dict>"), 8, "names the entity 'Ship'"),
        ("entity declaration", "<?xml version=\"1.0\"?>\n<!DOCTYPE database [<!ENTITY a \"aaaaaaaaaa\">]>\n<database/>", 2, "declares the entity 'a'"),
        ("undefined entity", store(#"<object type="TAG" id="z1"><attribute name="label" type="string">&nope;</attribute></object>"#), 10, "malformed XML"),
        ("text in object", store(#"<object type="TAG" id="z1">hello</object>"#), 10, "unexpected text inside <object>"),
        ("empty file", "", 0, "malformed XML"),
        ("metadata nested too deep", store("", metadata: "<dict><key>k</key>" + String(repeating: "<array>", count: 64)), 8, "more than 64 levels deep"),
        ("metadata nested to the limit", store("", metadata: "<dict><key>k</key>" + String(repeating: "<array>", count: 63) + String(repeating: "</array>", count: 63) + "</dict>"), 0, ""),
    ]

    func testEachBadInputNamesTheLineAndTheProblem() throws {
        let schema = try XMLStoreSchema(model: M.model)
        for (name, text, line, fragment) in Self.cases {
            do {
                let document = try XMLStoreReader.decode(Array(text.utf8))
                _ = try schema.metadata(from: document.info)
                let rows = try schema.rows(from: document)
                XCTAssertEqual(line, 0, "\(name): accepted (\(rows.count) rows)")
            } catch {
                XCTAssertNotEqual(line == 0 && fragment.isEmpty, true, "\(name): \(error)")
                if line > 0 { XCTAssertEqual(error.line, line, "\(name): \(error)") }
                XCTAssertTrue(error.message.contains(fragment), "\(name): \(error.message)")
            }
        }
    }

    /// Through the engine: the error is `corrupt`, names the file and line, and the file is unchanged.
    func testEngineRefusesADamagedFileAndKeepsIt() throws {
        let path = M.temporaryPath("bad.xml")
        let text = Self.store("<object type=\"TAG\" id=\"z1\"></object>\n<object type=\"TAG\" id=\"z1\"></object>")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try XMLStore(path: path, model: M.model, metadata: StoreMetadata())) { error in
            guard case StoreError.corrupt(let detail)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains(path) && detail.contains("line 11") && detail.contains("duplicate id z1"), detail)
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), text)
    }

    /// Through the coordinator: Apple's `NSError` for a damaged store file, with the line.
    func testCoordinatorReportsTheLineInItsError() throws {
        let path = M.temporaryPath("bad.xml")
        try Data(Self.store(#"<object type="TAG" id="z1"><attribute name="label" type="blob">a</attribute></object>"#).utf8)
            .write(to: URL(fileURLWithPath: path))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: M.model)
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSXMLStoreType, configurationName: nil, at: URL(fileURLWithPath: path))) { error in
            let error = error as NSError
            XCTAssertEqual(error.domain, NSCocoaErrorDomain)
            XCTAssertEqual(error.code, NSPersistentStoreInvalidFileError)
            XCTAssertTrue(error.localizedDescription.contains("line 10: attribute 'label' has unknown type 'blob'"), error.localizedDescription)
        }
        XCTAssertTrue(coordinator.persistentStores.isEmpty)
    }

    /// Chunk boundaries anywhere give the same document as one buffer.
    /// Found by FuzzXMLStoreReader (Fuzz/Corpus/FuzzXMLStoreReader/regression-metadata-date-year-before-1.xml):
    /// a metadata date the ISO 8601 parser took but wrote back differently (year -26), so the
    /// document changed on its way through a save. Dates must be in the written form.
    func testMetadataDatesMustBeInTheWrittenForm() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/FuzzXMLStoreReader/regression-metadata-date-year-before-1.xml")
        let found = Array(try Data(contentsOf: corpus))
        XCTAssertThrowsError(try XMLStoreReader.decode(found)) { error in
            XCTAssertTrue("\(error)".contains("-026-11-23T12:00:00Z"), "\(error)")
        }
        let written = String(decoding: found, as: UTF8.self).replacingOccurrences(of: "-026-11-23T12:00:00Z", with: "2026-11-23T12:00:00Z")
        let document = try XMLStoreReader.decode(Array(written.utf8))
        XCTAssertEqual(try XMLStoreReader.decode(XMLStoreWriter.encode(document)), document, "the written form reads back the same")
        for odd in ["2026-02-30T00:00:00Z", "2026-11-23T12:00:00+01:00", "0000-01-01T00:00:00Z"] {
            let text = written.replacingOccurrences(of: "2026-11-23T12:00:00Z", with: odd)
            XCTAssertThrowsError(try XMLStoreReader.decode(Array(text.utf8)), odd)
        }
    }

    func testChunkedFeedingMatchesOneBuffer() throws {
        let bytes = Array(Self.store("<object type=\"TAG\" id=\"z1\"><attribute name=\"label\" type=\"string\">a &amp; b</attribute></object>").utf8)
        let whole = try XMLStoreReader.decode(bytes)
        for size in [1, 3, 7, 64] {
            let reader = XMLStoreReader()
            var offset = 0
            while offset < bytes.count {
                try reader.feed(Array(bytes[offset..<min(bytes.count, offset + size)]))
                offset += size
            }
            XCTAssertEqual(try reader.finish(), whole, "chunks of \(size)")
        }
        XCTAssertEqual(whole.objects.first?.attributes.first?.text, "a & b")
        // Regression (fuzz): encode(_:) trapped on its unbounded chunk size.
        XCTAssertEqual(try XMLStoreReader.decode(XMLStoreWriter.encode(whole)), whole)
    }
}
