#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
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
        // The last frame's trailer (the log may continue with preallocated zeros, wal.md §5).
        let last = try XCTUnwrap(frames(of: log).last)
        log[last.offset + last.header.totalLength - 9] ^= 0xFF
        image.files[WorkloadRunner.path + "-wal"] = log
        let reopened = try WorkloadRunner.open(FaultInjectingFileSystem(image: image))
        XCTAssertGreaterThan(reopened.openReport.droppedLogBytes, 0)
        XCTAssertEqual(try reopened.row(for: KillWorkload.counter)?.values["label"], .string("v1"))
        _ = try reopened.save(StoreChangeSet(updated: [tag("v3", version: 1)]))
        XCTAssertEqual(try reopened.row(for: KillWorkload.counter)?.values["label"], .string("v3"))
        XCTAssertNoThrow(try reopened.save(StoreChangeSet(updated: [tag("v4", version: 2)])))
        try reopened.close()
    }

    /// The frames of a log image: offset and header, up to the first that does not decode.
    private func frames(of log: [UInt8]) -> [(offset: Int, header: LogFrameHeader)] {
        var result: [(Int, LogFrameHeader)] = []
        var offset = LogLayout.firstFrameOffset
        while offset + LogLayout.frameHeaderSize <= log.count,
              let header = LogFrameHeader(decoding: Array(log[offset..<(offset + LogLayout.frameHeaderSize)])) {
            result.append((offset, header))
            offset += header.totalLength
        }
        return result
    }

    /// Replaces one 512-byte sector of the log with what the disk held before (zeros past the
    /// synced end): the sector did not reach the disk while later ones did.
    private func dropSector(_ sector: Int, of image: inout DiskImage) throws {
        let path = WorkloadRunner.path + "-wal"
        var log = try XCTUnwrap(image.files[path])
        for index in (sector * 512)..<min(log.count, (sector + 1) * 512) { log[index] = 0 }
        image.files[path] = log
    }

    /// Relaxed durability: two saves written, not synced; power loss keeps the second save's
    /// sectors and the first frame's head and tail but not a sector in its middle. That is a torn
    /// write, not damage: the store opened before the fix refused to open ("committed saves would
    /// be lost"); now it opens without both saves, which never were durable.
    func testUnsyncedFramesThatReachTheDiskOutOfOrderAreATornTail() throws {
        let fileSystem = FaultInjectingFileSystem()
        let store = try WorkloadRunner.open(fileSystem, durability: .normal)
        var big = CrashTestModel.item(1, owner: nil)
        big.values["blob"] = .data(Data(repeating: 0xA5, count: 3_000))
        _ = try store.save(StoreChangeSet(inserted: [big]))
        _ = try store.save(StoreChangeSet(inserted: [CrashTestModel.tag(1, "after")]))
        fileSystem.setPlan(.crash(at: fileSystem.operationCount + 1))
        var image = fileSystem.powerLoss(.processCrash)
        let log = frames(of: try XCTUnwrap(image.files[WorkloadRunner.path + "-wal"]))
        XCTAssertEqual(log.count, 2)
        try dropSector(3, of: &image)
        let reopened = try WorkloadRunner.open(FaultInjectingFileSystem(image: image), durability: .normal)
        XCTAssertEqual(try StoreSnapshot.read(reopened).rows.count, 0)
        XCTAssertTrue(try reopened.verify().isIntact)
        try reopened.close()
    }

    /// Full durability, one save of two frames (over 1 MiB) in flight: its second frame reaches
    /// the disk, a sector of its first does not. A torn write again, though a synced save comes
    /// before it: the save before it stays, the torn one is dropped, and the store opens.
    func testATornSaveOfSeveralFramesAfterSyncedSavesIsATornTail() throws {
        let fileSystem = FaultInjectingFileSystem()
        let store = try WorkloadRunner.open(fileSystem)
        _ = try store.save(StoreChangeSet(inserted: [CrashTestModel.tag(1, "first")]))
        _ = try store.save(StoreChangeSet(inserted: [CrashTestModel.tag(2, "second")]))
        fileSystem.setPlan(.crash(at: fileSystem.operationCount + 2))
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: (1...3).map { CrashTestModel.note($0, size: 600_000) })))
        var image = fileSystem.powerLoss(.processCrash)
        let log = frames(of: try XCTUnwrap(image.files[WorkloadRunner.path + "-wal"]))
        XCTAssertEqual(log.map(\.header.isSyncMarker), [false, true, false, true, false, false], "each save after a synced one starts with a marker")
        try dropSector((log[4].offset + 100_000) / 512, of: &image)
        let reopened = try WorkloadRunner.open(FaultInjectingFileSystem(image: image))
        XCTAssertEqual(try StoreSnapshot.read(reopened).rows.keys.sorted(), [CrashTestModel.id("Tag", 1), CrashTestModel.id("Tag", 2)])
        XCTAssertTrue(try reopened.verify().isIntact)
        try reopened.close()
    }

    /// What the check is for still works: a byte flipped in a synced save's frame, with later
    /// saves behind a sync marker, stops the open with the frame's offset instead of dropping
    /// returned saves. A flip in the last save's frame is indistinguishable from a torn write.
    func testDamageToASyncedFrameIsStillReported() throws {
        let fileSystem = FaultInjectingFileSystem()
        let store = try WorkloadRunner.open(fileSystem)
        for key in 1...3 as ClosedRange<Int64> { _ = try store.save(StoreChangeSet(inserted: [CrashTestModel.tag(key, "tag \(key)")])) }
        let image = fileSystem.powerLoss(.dropUnsynced)
        let log = try XCTUnwrap(image.files[WorkloadRunner.path + "-wal"])
        let frames = frames(of: log)
        XCTAssertEqual(frames.map(\.header.isSyncMarker), [false, true, false, true, false])
        for (frame, opens) in [(0, false), (2, false), (4, true)] {
            var damaged = image
            var bytes = log
            bytes[frames[frame].offset + LogLayout.frameHeaderSize + 12] ^= 0x40
            damaged.files[WorkloadRunner.path + "-wal"] = bytes
            do {
                let reopened = try WorkloadRunner.open(FaultInjectingFileSystem(image: damaged))
                XCTAssertTrue(opens, "a flip in frame \(frame) was taken for a torn tail")
                XCTAssertEqual(try StoreSnapshot.read(reopened).rows.count, 2)
                try reopened.close()
            } catch {
                XCTAssertFalse(opens, "a flip in the last frame stopped the open: \(error)")
                XCTAssertTrue("\(error)".contains("log offset \(frames[frame].offset)") && "\(error)".contains("synced"), "\(error)")
            }
        }
    }

    /// A background checkpoint fails (a full disk) after saves with relaxed durability returned:
    /// no save follows to report it, so closing must. Before the fix `close` skipped the
    /// checkpoint of a poisoned handle and returned as if the saves were safely on disk.
    func testClosingAPoisonedHandleReportsWhy() throws {
        let fileSystem = FaultInjectingFileSystem()
        var options = WorkloadRunner.options(fileSystem, durability: .normal)
        options.backgroundCheckpoints = true
        options.checkpointThreshold = 64
        let store = try BinaryStore(path: WorkloadRunner.path, model: CrashTestModel.model, metadata: StoreMetadata(), options: options)
        fileSystem.setPlan(.fail(code: ENOSPC, at: fileSystem.operationCount + 2, persistent: true))
        _ = try store.save(StoreChangeSet(inserted: [CrashTestModel.tag(1, "returned")]))
        // Wait for the background checkpoint to fail (handing out keys checks the handle only).
        let deadline = Date().addingTimeInterval(10)
        while (try? store.newPrimaryKeys(entityName: "Tag", count: 1)) != nil, Date() < deadline { usleep(1_000) }
        XCTAssertThrowsError(try store.close()) { error in
            XCTAssertTrue("\(error)".contains("No space left on device"), "\(error)")
        }
        XCTAssertThrowsError(try store.close()) { XCTAssertEqual($0 as? StoreError, .closed) }
    }
}
