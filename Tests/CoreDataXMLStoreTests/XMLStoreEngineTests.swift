import CoreDataStorage
import CoreDataTestSupport
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation
import XCTest

/// The XML store engine through the store protocol: every attribute type and relationship kind
/// survives a save and a reopen; versions, store-wide keys, escaping and read-only opening.
final class XMLStoreEngineTests: XCTestCase {
    typealias M = BinaryTestModel

    private func path() -> String { M.temporaryPath("store.xml") }

    private func open(_ path: String, readOnly: Bool = false) throws -> XMLStore {
        var options = XMLStoreOptions()
        options.readOnly = readOnly
        return try XMLStore(path: path, model: M.model, metadata: StoreMetadata(["NSStoreUUID": "0A6C3E8B-5D41-4F27-9E1A-2B7C8D9E0F12", "App": "x"]), options: options)
    }

    /// Keys differ across entities: the XML store numbers objects store-wide.
    static let rows: [StoreRow] = [
        M.owner(1, "Ann & <Bob> \"quoted\"\r\nline", items: [12, 11]),
        M.item(11, owner: 1, tags: [21, 22]), M.item(12, owner: 1, tags: [22]), M.item(13, owner: nil),
        M.tag(21, "red", items: [11]), M.tag(22, "con\u{1}trol\u{0}", items: [11, 12]),
    ]

    private func all(_ store: XMLStore) throws -> [StoreObjectID: StoreRow] {
        var found: [StoreObjectID: StoreRow] = [:]
        for entity in M.model.entities {
            guard case .rows(let rows) = try store.execute(StoreFetchRequest(entity: entity)) else { continue }
            for row in rows { found[row.objectID] = row }
        }
        return found
    }

    func testEveryValueSurvivesSaveAndReopen() throws {
        let path = path()
        let store = try open(path)
        let versions = try store.save(StoreChangeSet(inserted: Self.rows))
        XCTAssertEqual(versions.count, 6)
        try store.close()
        let reopened = try open(path)
        let found = try all(reopened)
        XCTAssertEqual(found.count, 6)
        for row in Self.rows {
            var expected = row
            expected.version = 1
            XCTAssertEqual(found[row.objectID], expected, "\(row.objectID)")
        }
        let metadata = try reopened.metadata()
        XCTAssertEqual(metadata["App"] as? String, "x")
        XCTAssertEqual(metadata["NSStoreUUID"] as? String, "0A6C3E8B-5D41-4F27-9E1A-2B7C8D9E0F12")
        XCTAssertEqual(metadata["NSStoreType"] as? String, "XML")
        // Store-wide keys continue after the highest id in the file.
        XCTAssertEqual(try reopened.newPrimaryKeys(entityName: "Owner", count: 2), [23, 24])
    }

    func testVersionsPersistAndLockingIsOptimistic() throws {
        let path = path()
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: [M.tag(5, "a")]))
        var update = M.tag(5, "b")
        update.version = 1
        XCTAssertEqual(try store.save(StoreChangeSet(updated: [update])), [update.objectID: 2])
        let reopened = try open(path)
        XCTAssertEqual(try reopened.row(for: update.objectID)?.version, 2)
        XCTAssertThrowsError(try reopened.save(StoreChangeSet(updated: [update]))) { error in
            guard case StoreError.optimisticLockingFailure(let conflicts)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(conflicts.first?.expectedVersion, 1)
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.contains(#"<object type="TAG" id="z5" version="2">"#), text)
    }

    func testKeysCannotRepeatAcrossEntities() throws {
        let store = try open(path())
        _ = try store.save(StoreChangeSet(inserted: [M.tag(7, "a")]))
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [M.owner(7, "o", items: [])]))) { error in
            XCTAssertEqual(error as? StoreError, .duplicateObjectID(StoreObjectID(entityName: "Owner", primaryKey: 7)))
        }
        XCTAssertEqual(try store.newPrimaryKeys(entityName: "Owner", count: 1), [8])
    }

    func testWrittenFileFollowsApplesLayout() throws {
        let path = path()
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: Self.rows))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(Array(lines.prefix(4)), [
            #"<?xml version="1.0" standalone="yes"?>"#,
            #"<!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">"#, "", "<database>",
        ])
        XCTAssertTrue(text.contains("        <UUID>0A6C3E8B-5D41-4F27-9E1A-2B7C8D9E0F12</UUID>\n        <nextObjectID>22</nextObjectID>\n"), text)
        XCTAssertTrue(text.contains(#"    <object type="ITEM" id="z11">"#))
        XCTAssertTrue(text.contains(#"<attribute name="i16" type="int16">-32757</attribute>"#))
        XCTAssertTrue(text.contains(#"<attribute name="flag" type="bool">0</attribute>"#))
        XCTAssertTrue(text.contains(#"<attribute name="date" type="date">700000011.0</attribute>"#))
        XCTAssertTrue(text.contains(#"<attribute name="decimal" type="decimal">11.25</attribute>"#))
        XCTAssertTrue(text.contains(#"<relationship name="owner" type="1/1" destination="OWNER" idrefs="z1"></relationship>"#))
        // Ordered to-many keeps its order; unordered ones are written in id order.
        XCTAssertTrue(text.contains(#"<relationship name="items" type="0/0" destination="ITEM" idrefs="z12 z11"></relationship>"#))
        XCTAssertTrue(text.contains(#"<relationship name="tags" type="0/0" destination="TAG" idrefs="z21 z22"></relationship>"#))
        XCTAssertTrue(text.contains(#"<attribute name="name" type="string">Ann &amp; &lt;Bob&gt; "quoted"&#13;"#), text)
        XCTAssertTrue(text.contains(#"<attribute name="label" type="string" encoding="base64">"#), "a string XML cannot carry is base64")
        XCTAssertNotNil(try XMLStoreReader.decode(Array(text.utf8)))
    }

    func testReadOnlyWritesNothingAndRefusesChanges() throws {
        let path = path()
        XCTAssertThrowsError(try open(path, readOnly: true), "a missing store cannot open read-only")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        _ = try open(path).save(StoreChangeSet(inserted: [M.tag(1, "a")]))
        _ = FileManager.default.createFile(atPath: path + ".new", contents: Data("partial".utf8))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try open(path, readOnly: true)
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [M.tag(2, "b")])))
        XCTAssertThrowsError(try store.setMetadata(StoreMetadata()))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".new"), "read-only leaves even the leftover alone")
        _ = try open(path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".new"), "a writable open removes the leftover of a dead save")
    }

    func testBatchDeleteAndUpdateAreWritten() throws {
        let path = path()
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: [M.tag(1, "a"), M.tag(2, "b"), M.tag(3, "c")]))
        guard let tag = M.model.entitiesByName["Tag"] else { return XCTFail("no Tag") }
        XCTAssertEqual(try store.batchDelete(StoreFetchRequest(entity: tag, limit: 1)).count, 1)
        XCTAssertEqual(try store.batchUpdate(StoreFetchRequest(entity: tag), values: ["label": .string("z")]).count, 2)
        let reopened = try all(try open(path))
        XCTAssertEqual(reopened.count, 2)
        XCTAssertEqual(Set(reopened.values.map { $0["label"] }), [.string("z")])
        XCTAssertEqual(Set(reopened.values.map(\.version)), [2])
    }
}
