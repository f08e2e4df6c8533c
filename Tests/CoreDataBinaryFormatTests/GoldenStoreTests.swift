import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// A store written by format version 1, checked in, must keep reading back exactly. A format
/// change changes the spec, this fixture (regenerate with `COREDATA_WRITE_GOLDEN=1 swift test
/// --filter GoldenStoreTests`) and the format version together.
final class GoldenStoreTests: XCTestCase {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/golden-v1.store")

    /// The fixture's contents: every attribute type, to-one, to-many and ordered to-many, an
    /// update (version 2) and a deletion (tombstone), then a second checkpoint's worth of saves.
    static func expectedRows() -> [StoreRow] {
        var first = BinaryTestModel.item(1, owner: 1, tags: [1, 2])
        first.values["text"] = .string("updated")
        first.version = 2
        var rows = [first]
        for key in 3...5 { rows.append(withVersion(BinaryTestModel.item(Int64(key), owner: 1), 1)) }
        rows.append(withVersion(BinaryTestModel.owner(1, "Ann", items: [5, 1, 3, 4]), 2))
        rows.append(withVersion(BinaryTestModel.tag(1, "red", items: [1]), 1))
        rows.append(withVersion(BinaryTestModel.tag(2, "blue", items: [1]), 1))
        return rows
    }

    private static func withVersion(_ row: StoreRow, _ version: Int64) -> StoreRow {
        var copy = row
        copy.version = version
        return copy
    }

    func testWriteGoldenFixtureWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["COREDATA_WRITE_GOLDEN"] == "1" else { return }
        let path = Self.fixture.path
        for suffix in ["", "-wal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata([
            "NSStoreUUID": "6F1C2A3B-4D5E-4F60-8172-93A4B5C6D7E8", "NSStoreType": "Binary", "Fixture": "golden-v1",
        ]))
        _ = try store.save(StoreChangeSet(inserted: [
            BinaryTestModel.owner(1, "Ann", items: [1, 2, 3]), BinaryTestModel.item(1, owner: 1, tags: [1, 2]),
            BinaryTestModel.item(2, owner: 1), BinaryTestModel.item(3, owner: 1),
            BinaryTestModel.tag(1, "red", items: [1]), BinaryTestModel.tag(2, "blue", items: [1]),
        ]))
        try store.checkpoint()
        var first = Self.withVersion(BinaryTestModel.item(1, owner: 1, tags: [1, 2]), 1)
        first.values["text"] = .string("updated")
        _ = try store.save(StoreChangeSet(
            inserted: [BinaryTestModel.item(4, owner: 1), BinaryTestModel.item(5, owner: 1)],
            updated: [first, Self.withVersion(BinaryTestModel.owner(1, "Ann", items: [5, 1, 3, 4]), 1)],
            deleted: [(StoreObjectID(entityName: "Item", primaryKey: 2), 1)]))
        try store.close()
    }

    func testGoldenFixtureReadsBackExactly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("golden.store")
        try FileManager.default.copyItem(at: Self.fixture, to: copy)
        try FileManager.default.copyItem(atPath: Self.fixture.path + "-wal", toPath: copy.path + "-wal")
        let header = try FileHeader(decoding: [UInt8](try Data(contentsOf: copy).prefix(64)))
        XCTAssertEqual(header.formatVersion, BinaryStoreLayout.formatVersion)
        XCTAssertEqual(header.storeUUID.uuidString, "6F1C2A3B-4D5E-4F60-8172-93A4B5C6D7E8")
        var options = BinaryStoreOptions()
        options.readOnly = true
        let store = try BinaryStore(path: copy.path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
        for row in Self.expectedRows() {
            XCTAssertEqual(try store.row(for: row.objectID), row)
        }
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Item", primaryKey: 2)))
        XCTAssertEqual(try store.objectCounts(), ["Owner": 1, "Item": 4, "Tag": 2])
        XCTAssertEqual(try store.metadata()["Fixture"] as? String, "golden-v1")
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try store.close()
        XCTAssertEqual(try Data(contentsOf: copy), try Data(contentsOf: Self.fixture), "a read-only open changed the file")
    }

    /// The fixture was written with 64 KiB pages: a checkpoint keeps its header's page size, and
    /// compaction rewrites it at today's target size, with every row as it was.
    func testGoldenFixtureCompactsToTodaysPageSize() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("golden.store")
        try FileManager.default.copyItem(at: Self.fixture, to: copy)
        try FileManager.default.copyItem(atPath: Self.fixture.path + "-wal", toPath: copy.path + "-wal")
        func pageSize() throws -> UInt32 { try FileHeader(decoding: [UInt8](try Data(contentsOf: copy).prefix(64))).pageSize }
        XCTAssertEqual(try pageSize(), 65_536)

        var store = try BinaryStore(path: copy.path, model: BinaryTestModel.model, metadata: StoreMetadata())
        try store.checkpoint()
        XCTAssertEqual(try pageSize(), 65_536, "a checkpoint keeps the header's page size")
        try store.compact()
        XCTAssertEqual(try pageSize(), UInt32(BinaryStoreLayout.targetPageSize))
        try store.close()

        store = try BinaryStore(path: copy.path, model: BinaryTestModel.model, metadata: StoreMetadata())
        for row in Self.expectedRows() {
            XCTAssertEqual(try store.row(for: row.objectID), row)
        }
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Item", primaryKey: 2)))
        XCTAssertEqual(try store.objectCounts(), ["Owner": 1, "Item": 4, "Tag": 2])
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try store.close()
    }
}
