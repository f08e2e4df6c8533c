import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Stores written by each format version, checked in, must keep reading back exactly. A format
/// change changes the spec, adds a fixture of the new version (write it with
/// `COREDATA_WRITE_GOLDEN=1 swift test --filter GoldenStoreTests`) and bumps the format version
/// together. The version-1 fixture can no longer be written (this code makes version-2 stores):
/// it is kept as it is.
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

    static let fixtureV2 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/golden-v2.store")

    /// The version-2 fixture (CrashTestModel): external data (Formats/binary-store.md §15) in the
    /// data pages and in the log, a small value of the same attribute in its record, a value too
    /// large for the record in an attribute without external storage, and a deleted attachment
    /// whose file is an orphan.
    static func expectedV2Rows() -> [StoreRow] {
        [
            withVersion(StoreSnapshot.normalized(CrashTestModel.attachment(1, "external, paged", size: 110_000, seed: 1, previewSize: 200)), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.attachment(3, "small", size: 1_000, seed: 3, previewSize: 120_000)), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.attachment(4, "external, in the log", size: 105_000, seed: 4)), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.item(1, owner: 1, tags: [1])), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.owner(1, "Ann", items: [1])), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.tag(1, "red", items: [1])), 1),
        ]
    }

    func testWriteGoldenFixtureWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["COREDATA_WRITE_GOLDEN"] == "1" else { return }
        let path = Self.fixtureV2.path
        try? BinaryStore.destroy(path: path)
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        let store = try BinaryStore(path: path, model: CrashTestModel.model, metadata: StoreMetadata([
            "NSStoreUUID": "0B7E3C1A-5D2F-4E60-9A81-C3D4E5F60718", "NSStoreType": "Binary", "Fixture": "golden-v2",
        ]), options: options)
        _ = try store.save(StoreChangeSet(inserted: [
            CrashTestModel.owner(1, "Ann", items: [1]), CrashTestModel.item(1, owner: 1, tags: [1]), CrashTestModel.tag(1, "red", items: [1]),
            CrashTestModel.attachment(1, "external, paged", size: 110_000, seed: 1, previewSize: 200),
            CrashTestModel.attachment(2, "deleted", size: 103_000, seed: 2),
            CrashTestModel.attachment(3, "small", size: 1_000, seed: 3, previewSize: 120_000),
        ]))
        try store.checkpoint()
        _ = try store.save(StoreChangeSet(
            inserted: [CrashTestModel.attachment(4, "external, in the log", size: 105_000, seed: 4)],
            deleted: [(StoreObjectID(entityName: "Attachment", primaryKey: 2), 1)]))
        // Dropped without closing: the last save stays in the log, which is cut after it (the
        // preallocated zeros, wal.md §5, are a megabyte) and left without its shared counters.
        let logEnd = try store.statistics().logEnd
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "-wal"))
        try log.truncate(atOffset: logEnd)
        try log.close()
        try FileManager.default.removeItem(atPath: path + "-shm")
    }

    func testGoldenV2FixtureReadsBackExactly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("golden.store").path
        for suffix in ["", "-wal", ExternalDataLayout.folderSuffix] {
            try FileManager.default.copyItem(atPath: Self.fixtureV2.path + suffix, toPath: copy + suffix)
        }
        let header = try FileHeader(decoding: [UInt8](try Data(contentsOf: URL(fileURLWithPath: copy)).prefix(64)))
        XCTAssertEqual(header.formatVersion, 2)
        var options = BinaryStoreOptions()
        options.readOnly = true
        let store = try BinaryStore(path: copy, model: CrashTestModel.model, metadata: StoreMetadata(), options: options)
        for row in Self.expectedV2Rows() {
            XCTAssertEqual(try store.row(for: row.objectID), row)
        }
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Attachment", primaryKey: 2)))
        XCTAssertEqual(try store.metadata()["Fixture"] as? String, "golden-v2")
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        XCTAssertEqual(verification.externalFiles, 3, "attachment 2's superseded record in the data pages still names its file")
        XCTAssertEqual(verification.orphanedExternalFiles, [])
        try store.close()
    }

    func testGoldenFixtureReadsBackExactly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("golden.store")
        try FileManager.default.copyItem(at: Self.fixture, to: copy)
        try FileManager.default.copyItem(atPath: Self.fixture.path + "-wal", toPath: copy.path + "-wal")
        let header = try FileHeader(decoding: [UInt8](try Data(contentsOf: copy).prefix(64)))
        XCTAssertEqual(header.formatVersion, 1)
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
