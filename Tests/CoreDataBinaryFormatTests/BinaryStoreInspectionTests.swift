import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// The engine calls behind the CLI: statistics, page map, log history, object IDs, the catalog,
/// lock conflicts and progress.
final class BinaryStoreInspectionTests: XCTestCase {
    private func options() -> BinaryStoreOptions {
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        return options
    }

    private func readOnly() -> BinaryStoreOptions {
        var options = options()
        options.readOnly = true
        return options
    }

    /// Two saves into a new store, left in the log: insert owner 1, items 1–3 and tag 1; then
    /// update item 2 and delete item 3.
    private func makeStore() throws -> (path: String, store: BinaryStore) {
        let path = BinaryTestModel.temporaryPath()
        let store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options())
        let versions = try store.save(StoreChangeSet(inserted: [
            BinaryTestModel.owner(1, "Ann", items: [1, 2]), BinaryTestModel.item(1, owner: 1), BinaryTestModel.item(2, owner: 1),
            BinaryTestModel.item(3, owner: nil), BinaryTestModel.tag(1, "t"),
        ]))
        var item2 = BinaryTestModel.item(2, owner: 1)
        item2.version = versions[item2.objectID] ?? 1
        item2.values["text"] = .string("changed")
        let item3 = StoreObjectID(entityName: "Item", primaryKey: 3)
        _ = try store.save(StoreChangeSet(updated: [item2], deleted: [(item3, versions[item3] ?? 1)]))
        return (path, store)
    }

    func testStatisticsCountLiveAndDeadRecordsAndTheLog() throws {
        let (_, store) = try makeStore()
        let stats = try store.statistics()
        XCTAssertEqual(stats.objectsByEntity, ["Owner": 1, "Item": 2, "Tag": 1])
        XCTAssertEqual(stats.checkpointGeneration, 1)
        XCTAssertEqual(stats.logSaves, 2)
        XCTAssertEqual(stats.pagesByKind, ["catalog page": 1, "metadata page": 1])
        XCTAssertEqual(stats.droppedLogBytes, 0)
        XCTAssertGreaterThan(stats.liveRecordBytes, 0)
        XCTAssertGreaterThan(stats.deadRecordBytes, 0, "item 2's first version, item 3 and its tombstone")
        try store.compact()
        let compacted = try store.statistics()
        XCTAssertEqual(compacted.deadRecordBytes, 0)
        XCTAssertEqual(compacted.liveRecordBytes, stats.liveRecordBytes, "the same current records")
        XCTAssertEqual(compacted.logSaves, 0)
        XCTAssertEqual(compacted.checkpointGeneration, 2, "the compaction alone: it copies the log's records from the log (binary-store.md §10)")
        XCTAssertEqual(compacted.dataFileBytes, compacted.dataEnd)
        try store.close()
    }

    func testLogHistoryTellsInsertsUpdatesAndDeletes() throws {
        let (path, store) = try makeStore()
        let history = try store.logHistory()
        XCTAssertEqual(history.commits.count, 2)
        XCTAssertEqual(history.commits[0].offset, UInt64(LogLayout.firstFrameOffset))
        XCTAssertEqual(Set(history.commits[0].inserted.map(\.description)), ["Owner/p1", "Item/p1", "Item/p2", "Item/p3", "Tag/p1"])
        XCTAssertEqual(history.commits[1].updated.map(\.description), ["Item/p2"])
        XCTAssertEqual(history.commits[1].deleted.map(\.description), ["Item/p3"])
        XCTAssertEqual(history.commits[1].inserted, [])
        XCTAssertEqual(history.commits.map { $0.frames.last?.isCommit }, [true, true])
        XCTAssertEqual(history.commits[1].frames.first?.isSyncMarker, true, "a save after a synced one starts with a sync marker")
        XCTAssertEqual(history.logFileBytes, try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? UInt64)
        try store.checkpoint()
        // After a checkpoint, the objects the log saves update count as updates, not inserts.
        var owner = BinaryTestModel.owner(1, "Bea", items: [1, 2])
        owner.version = try store.row(for: owner.objectID)?.version ?? 1
        _ = try store.save(StoreChangeSet(updated: [owner]))
        let after = try store.logHistory()
        XCTAssertEqual(after.commits.count, 1)
        XCTAssertEqual(after.commits[0].updated.map(\.description), ["Owner/p1"])
        try store.close()
    }

    func testPageMapObjectIDsAndCatalog() throws {
        let (path, store) = try makeStore()
        try store.close()
        let reader = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: readOnly())
        let pages = try reader.pageMap()
        XCTAssertEqual(pages.first?.offset, UInt64(BinaryStoreLayout.firstPageOffset))
        let data = pages.filter { $0.kind == .data }
        XCTAssertEqual(data.count, 1)
        XCTAssertEqual(data.first?.records, 5, "4 current records and item 3's tombstone")
        XCTAssertEqual(data.first?.liveRecords, 4)
        XCTAssertEqual(pages.filter { $0.kind == .catalog }.map(\.liveRecords), [0, 1], "only the last catalog is in use")
        var offset = UInt64(BinaryStoreLayout.firstPageOffset)
        for page in pages {
            XCTAssertEqual(page.offset, offset)
            offset += UInt64(BinaryStoreLayout.pageHeaderSize + page.storedBytes)
        }
        XCTAssertEqual(try reader.objectIDs(ofEntity: "Item").map(\.primaryKey), [1, 2])
        XCTAssertEqual(try reader.objectIDs(ofEntity: "Nothing"), [])
        XCTAssertEqual(try reader.storedCatalog().entities.map(\.name).sorted(), ["Item", "Owner", "Tag"])
        try reader.close()
    }

    func testAReadOnlyOpenOfAStoreAWriterHoldsAloneIsALockConflict() throws {
        let (path, shared) = try makeStore()
        try shared.close()
        var exclusive = options()
        exclusive.exclusiveAccess = true
        let store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: exclusive)
        XCTAssertThrowsError(try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: readOnly())) { error in
            XCTAssertTrue((error as? StoreError)?.isLockConflict == true, "\(error)")
        }
        XCTAssertFalse(StoreError.io(detail: "read failed").isLockConflict)
        XCTAssertFalse(StoreError.corrupt(detail: "is locked by another process").isLockConflict)
        try store.close()
    }

    func testCheckpointAndCompactReportProgress() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options())
        _ = try store.save(StoreChangeSet(inserted: (1...3_000).map { BinaryTestModel.tag(Int64($0), "tag \($0)") }))
        var checkpointCalls: [(Int, Int)] = []
        try store.checkpoint { checkpointCalls.append(($0, $1)) }
        XCTAssertEqual(checkpointCalls.map(\.0), [1_024, 2_048, 3_000])
        XCTAssertEqual(Set(checkpointCalls.map(\.1)), [3_000])
        var compactCalls: [(Int, Int)] = []
        try store.compact { compactCalls.append(($0, $1)) }
        XCTAssertEqual(compactCalls.map(\.0), [1_024, 2_048, 3_000])
        XCTAssertEqual(Set(compactCalls.map(\.1)), [3_000])
        try store.close()
    }
}
