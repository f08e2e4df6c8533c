import CoreDataBinaryStore
import CoreDataStorage
import Foundation
import XCTest

/// Engine bugs the crash, fault and kill suites found, each pinned by the smallest scenario.
final class EngineRegressionTests: XCTestCase {
    private func tag(_ label: String, version: Int64) -> StoreRow {
        var row = CrashTestModel.tag(1, label)
        row.version = version
        return row
    }

    /// A checkpoint that leaves the log's old frames in place, a read that caches the log's first
    /// block with those frames past the log end, then a save written over them: the next read
    /// must see the save, not the cached stale frame (it returned the row of two saves ago, and
    /// the next update failed with an optimistic-locking conflict or "no record entry here").
    func testReadsAfterACheckpointNeverSeeStaleLogFramesFromTheCache() throws {
        let store = try WorkloadRunner.open(FaultInjectingFileSystem())
        let id = KillWorkload.counter
        _ = try store.save(StoreChangeSet(inserted: [CrashTestModel.tag(1, "v1")]))
        _ = try store.save(StoreChangeSet(updated: [tag("v2", version: 1)]))
        try store.checkpoint()
        _ = try store.save(StoreChangeSet(updated: [tag("v3", version: 2)]))
        XCTAssertEqual(try store.row(for: id)?.values["label"], .string("v3"))
        _ = try store.save(StoreChangeSet(updated: [tag("v4", version: 3)]))
        let row = try store.row(for: id)
        XCTAssertEqual(row?.values["label"], .string("v4"))
        XCTAssertEqual(row?.version, 4)
        XCTAssertNoThrow(try store.save(StoreChangeSet(updated: [tag("v5", version: 4)])))
        XCTAssertEqual(try store.row(for: id)?.values["label"], .string("v5"))
        try store.close()
    }

    /// The same after recovery drops a torn tail: the bytes past the last whole save are
    /// overwritten by the next one and must not be served from the cache.
    func testReadsAfterRecoveryNeverSeeTheDroppedTailFromTheCache() throws {
        let crashed = FaultInjectingFileSystem()
        let store = try WorkloadRunner.open(crashed)
        _ = try store.save(StoreChangeSet(inserted: [CrashTestModel.tag(1, "v1")]))
        crashed.setPlan(.crash(at: crashed.operationCount + 2))
        XCTAssertThrowsError(try store.save(StoreChangeSet(updated: [tag("v2", version: 1)])))
        // The process crashed in the sync: the frame of "v2" is written but its save never returned.
        var image = crashed.powerLoss(.processCrash)
        var log = try XCTUnwrap(image.files[WorkloadRunner.path + "-wal"])
        log[log.count - 9] ^= 0xFF
        image.files[WorkloadRunner.path + "-wal"] = log
        let reopened = try WorkloadRunner.open(FaultInjectingFileSystem(image: image))
        XCTAssertGreaterThan(reopened.openReport.droppedLogBytes, 0)
        XCTAssertEqual(try reopened.row(for: KillWorkload.counter)?.values["label"], .string("v1"))
        _ = try reopened.save(StoreChangeSet(updated: [tag("v3", version: 1)]))
        XCTAssertEqual(try reopened.row(for: KillWorkload.counter)?.values["label"], .string("v3"))
        XCTAssertNoThrow(try reopened.save(StoreChangeSet(updated: [tag("v4", version: 2)])))
        try reopened.close()
    }
}
