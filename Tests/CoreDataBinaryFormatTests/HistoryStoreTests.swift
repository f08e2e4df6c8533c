import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Persistent history in the binary store (Formats/binary-store.md §14): transactions written
/// with their saves, kept through checkpoints, compaction and reopening, numbered as one
/// sequence by every handle on the store, deleted from the oldest on; and the change list's
/// codec, which throws on every damaged byte string instead of trapping.
final class HistoryStoreTests: XCTestCase {
    private func open(_ path: String, history: Bool = true, readOnly: Bool = false) throws -> BinaryStore {
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        options.recordsHistory = history
        options.readOnly = readOnly
        return try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
    }

    private func save(_ store: BinaryStore, author: String, _ changes: StoreChangeSet) throws {
        var changes = changes
        changes.history = StoreHistoryContext(author: author, contextName: "test")
        _ = try store.save(changes)
    }

    private func insertTag(_ store: BinaryStore, author: String, _ label: String) throws -> Int64 {
        let key = try store.newPrimaryKeys(entityName: "Tag", count: 1)[0]
        try save(store, author: author, StoreChangeSet(inserted: [BinaryTestModel.tag(key, label)]))
        return key
    }

    private func all(_ store: BinaryStore, after number: Int64 = 0) throws -> StoreHistoryPage {
        try store.history(StoreHistoryQuery(afterNumber: number))
    }

    func testHistorySurvivesCheckpointCompactionAndReopening() throws {
        let path = BinaryTestModel.temporaryPath()
        var store = try open(path)
        let first = try insertTag(store, author: "a", "one")
        var renamed = BinaryTestModel.tag(first, "uno")
        renamed.version = 1
        try save(store, author: "b", StoreChangeSet(updated: [renamed]))
        try store.checkpoint()
        _ = try insertTag(store, author: "c", "two")
        try save(store, author: "d", StoreChangeSet(deleted: [(StoreObjectID(entityName: "Tag", primaryKey: first), 2)]))
        try store.compact()
        _ = try insertTag(store, author: "e", "three")
        try store.close()

        store = try open(path)
        let page = try all(store)
        XCTAssertEqual(page.transactions.map(\.number), [1, 2, 3, 4, 5])
        XCTAssertEqual(page.transactions.map(\.author), ["a", "b", "c", "d", "e"])
        XCTAssertEqual(page.transactions.map(\.contextName), Array(repeating: "test", count: 5))
        XCTAssertEqual(page.transactions[1].changes, [StoreHistoryChange(kind: .update, objectID: StoreObjectID(entityName: "Tag", primaryKey: first), updatedProperties: ["items", "label"])])
        XCTAssertEqual(page.transactions[3].changes.map(\.kind), [.delete])
        XCTAssertEqual(page.transactions[0].processID, ProcessInfo.processInfo.processIdentifier)
        XCTAssertEqual(page.firstRetained, 1)
        XCTAssertEqual(page.lastNumber, 5)
        XCTAssertEqual(try store.objectCounts()["Tag"], 2, "history records are not objects of the model's entities")
        XCTAssertEqual(try store.history(StoreHistoryQuery(afterNumber: 3, limit: 1, includesChanges: false)).transactions.map(\.number), [4])
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try store.close()
    }

    func testHandlesNumberOneSequenceAndSeeEachOthersDeletions() throws {
        let path = BinaryTestModel.temporaryPath()
        let a = try open(path)
        let b = try open(path)
        for round in 0..<3 {
            _ = try insertTag(a, author: "a", "a\(round)")
            _ = try insertTag(b, author: "b", "b\(round)")
        }
        for store in [a, b] {
            let page = try all(store)
            XCTAssertEqual(page.transactions.map(\.number), [1, 2, 3, 4, 5, 6])
            XCTAssertEqual(page.transactions.map(\.author), ["a", "b", "a", "b", "a", "b"])
        }
        XCTAssertEqual(try a.deleteHistory(.throughNumber(4)), 4)
        XCTAssertEqual(try all(b).transactions.map(\.number), [5, 6], "the other handle sees the deletion")
        XCTAssertEqual(try all(b).firstRetained, 5)
        try b.checkpoint()
        XCTAssertEqual(try b.deleteHistory(.before(Date().addingTimeInterval(5))), 2)
        try a.compact()
        let page = try all(b)
        XCTAssertEqual(page.transactions.count, 0)
        XCTAssertEqual(page.lastNumber, 6, "deleted numbers stay used")
        XCTAssertEqual(page.firstRetained, 7)
        try a.close()
        try b.close()

        let reopened = try open(path)
        XCTAssertEqual(try all(reopened).lastNumber, 6, "a checkpoint keeps the last number in the catalog")
        _ = try insertTag(reopened, author: "z", "after")
        XCTAssertEqual(try all(reopened).transactions.map(\.number), [7])
        try reopened.close()
    }

    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/golden-history-v1.store")

    /// Writes the history fixture (`COREDATA_WRITE_GOLDEN=1 swift test --filter HistoryStoreTests`):
    /// three transactions, a checkpoint between them, the first deleted.
    func testWriteGoldenHistoryFixtureWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["COREDATA_WRITE_GOLDEN"] == "1" else { return }
        let path = Self.fixture.path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var options = BinaryStoreOptions()
        options.recordsHistory = true
        options.backgroundCheckpoints = false
        let store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata([
            "NSStoreUUID": "7A2D3B4C-5E6F-4071-8283-94A5B6C7D8E9", "NSStoreType": "Binary", "Fixture": "golden-history-v1",
        ]), options: options)
        try save(store, author: "golden", StoreChangeSet(inserted: [BinaryTestModel.tag(1, "red"), BinaryTestModel.tag(2, "blue")]))
        var renamed = BinaryTestModel.tag(1, "crimson")
        renamed.version = 1
        var update = StoreChangeSet(updated: [renamed])
        update.history = StoreHistoryContext(author: "golden", contextName: "fixture", processID: 4242, bundleID: "Golden", updatedProperties: [renamed.objectID: ["label"]])
        _ = try store.save(update)
        try store.checkpoint()
        try save(store, author: "golden", StoreChangeSet(deleted: [(StoreObjectID(entityName: "Tag", primaryKey: 2), 1)]))
        XCTAssertEqual(try store.deleteHistory(.throughNumber(1)), 1)
        try store.close()
        try? FileManager.default.removeItem(atPath: path + "-shm")
    }

    /// The fixture's history reads back exactly, and its change list has the bytes §14.2 gives.
    func testGoldenHistoryFixtureReadsBackExactly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("golden-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("golden.store")
        try FileManager.default.copyItem(at: Self.fixture, to: copy)
        if FileManager.default.fileExists(atPath: Self.fixture.path + "-wal") {
            try FileManager.default.copyItem(atPath: Self.fixture.path + "-wal", toPath: copy.path + "-wal")
        }
        let store = try open(copy.path, readOnly: true)
        let page = try all(store)
        XCTAssertEqual(page.firstRetained, 2)
        XCTAssertEqual(page.lastNumber, 3)
        XCTAssertEqual(page.transactions.map(\.number), [2, 3])
        XCTAssertEqual(page.transactions.map(\.author), ["golden", "golden"])
        XCTAssertEqual(page.transactions.first?.contextName, "fixture")
        XCTAssertEqual(page.transactions.first?.processID, 4242)
        XCTAssertEqual(page.transactions.first?.bundleID, "Golden")
        XCTAssertEqual(page.transactions.first?.changes, [
            StoreHistoryChange(kind: .update, objectID: StoreObjectID(entityName: "Tag", primaryKey: 1), updatedProperties: ["label"]),
        ])
        XCTAssertEqual(page.transactions.last?.changes.map(\.kind), [.delete])
        XCTAssertEqual(HistoryRecordCodec.encodeChanges(page.transactions.first?.changes ?? []), [
            1, 2, 3, 0x54, 0x61, 0x67, 5, 0x6C, 0x61, 0x62, 0x65, 0x6C, 1, 2, 0, 1, 1, 1,
        ], "format 1, names [Tag, label], one update of Tag 1 naming label")
        XCTAssertEqual(try store.row(for: StoreObjectID(entityName: "Tag", primaryKey: 1))?["label"], .string("crimson"))
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try store.close()
    }

    func testAHandleWithoutTrackingRecordsNothing() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path, history: false)
        _ = try insertTag(store, author: "x", "quiet")
        XCTAssertFalse(store.recordsHistory)
        XCTAssertEqual(try all(store).transactions.count, 0)
        XCTAssertEqual(try store.objectCounts().keys.sorted(), ["Tag"])
        try store.close()
    }

    func testChangeListRoundTripsAndDamageThrows() throws {
        let changes = [
            StoreHistoryChange(kind: .insert, objectID: StoreObjectID(entityName: "Tag", primaryKey: 1)),
            StoreHistoryChange(kind: .update, objectID: StoreObjectID(entityName: "Item", primaryKey: 1 << 40), updatedProperties: ["text", "i16"]),
            StoreHistoryChange(kind: .delete, objectID: StoreObjectID(entityName: "Item", primaryKey: 7), tombstone: [
                "text": .string("gone — ünïcødé"), "i64": .integer(-5), "date": .date(Date(timeIntervalSinceReferenceDate: 1)), "uuid": .uuid(UUID()),
            ]),
        ]
        let bytes = HistoryRecordCodec.encodeChanges(changes)
        XCTAssertEqual(try HistoryRecordCodec.decodeChanges(bytes), changes)
        for cut in 0..<bytes.count {
            XCTAssertThrowsError(try HistoryRecordCodec.decodeChanges(Array(bytes.prefix(cut))), "cut at \(cut)")
        }
        // Every single-byte change either decodes or throws; none traps.
        var decoded = 0
        for position in bytes.indices {
            for value: UInt8 in [0, 1, 0x7F, 0x80, 0xFF] {
                var damaged = bytes
                damaged[position] = value
                if (try? HistoryRecordCodec.decodeChanges(damaged)) != nil { decoded += 1 }
            }
        }
        XCTAssertLessThan(decoded, bytes.count * 5)
    }
}
