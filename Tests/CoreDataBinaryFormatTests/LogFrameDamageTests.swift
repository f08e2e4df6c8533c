import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// A flipped byte in a frame of a save that a later sync marker proves synced is damage, not a
/// torn tail, wherever it lands: in the payload, the length, or the trailer (Formats/wal.md §7).
final class LogFrameDamageTests: XCTestCase {
    func testEveryFlippedByteOfAnEarlierSavesFramesIsDamage() throws {
        let path = BinaryTestModel.temporaryPath()
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        var store: BinaryStore? = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
        _ = try store?.save(StoreChangeSet(inserted: [BinaryTestModel.owner(1, "Ann", items: [1]), BinaryTestModel.item(1, owner: 1)]))
        _ = try store?.save(StoreChangeSet(inserted: [BinaryTestModel.tag(1, "t")]))
        _ = try store?.save(StoreChangeSet(inserted: [BinaryTestModel.tag(2, "u")]))
        let history = try XCTUnwrap(store?.logHistory())
        // Dropping the handle without closing leaves the saves in the log, as a crash would.
        store = nil
        let lastSave = try XCTUnwrap(history.commits.last?.offset)
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        let damaged = BinaryTestModel.temporaryPath()
        try FileManager.default.copyItem(atPath: path, toPath: damaged)
        var checked = 0
        for offset in LogLayout.firstFrameOffset..<Int(lastSave) {
            var bytes = log
            bytes[offset] ^= 0x5A
            try Data(bytes).write(to: URL(fileURLWithPath: damaged + "-wal"))
            let report = BinaryStore.verify(path: damaged)
            XCTAssertTrue(report.issues.contains { $0.location.hasPrefix("log offset") }, "a flip at log offset \(offset) went unnoticed: \(report)")
            var readOnly = options
            readOnly.readOnly = true
            XCTAssertThrowsError(try BinaryStore(path: damaged, model: BinaryTestModel.model, metadata: StoreMetadata(), options: readOnly), "log offset \(offset)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 100)
        print("log frames: \(checked) flipped bytes of earlier saves, each reported")
    }

    /// The last save before a crash was acknowledged, so its frames were synced: a flipped byte
    /// in them is damage, not a torn tail (issue 19). Its sync marker is written after its sync.
    func testAFlippedByteInTheLastSyncedSaveIsDamage() throws {
        let path = BinaryTestModel.temporaryPath()
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        var store: BinaryStore? = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
        _ = try store?.save(StoreChangeSet(inserted: [BinaryTestModel.owner(1, "Ann", items: [1]), BinaryTestModel.item(1, owner: 1)]))
        _ = try store?.save(StoreChangeSet(inserted: [BinaryTestModel.tag(1, "t")]))
        let history = try XCTUnwrap(store?.logHistory())
        store = nil
        let lastSave = try XCTUnwrap(history.commits.last?.offset)
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        let damaged = BinaryTestModel.temporaryPath()
        try FileManager.default.copyItem(atPath: path, toPath: damaged)
        var readOnly = options
        readOnly.readOnly = true
        var checked = 0
        // Every byte of the last save's frames, up to the end of its commit frame.
        let lastFrame = try XCTUnwrap(history.commits.last?.frames.last { $0.isCommit })
        // The marker after it, written after its sync, is not a save and not a torn tail.
        XCTAssertEqual(history.droppedBytes, 0)
        let end = lastFrame.offset + UInt64(LogLayout.frameHeaderSize + lastFrame.payloadBytes + LogLayout.frameTrailerSize)
        for offset in Int(lastSave)..<Int(end) {
            var bytes = log
            bytes[offset] ^= 0x5A
            try Data(bytes).write(to: URL(fileURLWithPath: damaged + "-wal"))
            let report = BinaryStore.verify(path: damaged)
            XCTAssertTrue(report.issues.contains { $0.location.hasPrefix("log offset") }, "a flip at log offset \(offset) of the last save went unnoticed: \(report)")
            XCTAssertThrowsError(try BinaryStore(path: damaged, model: BinaryTestModel.model, metadata: StoreMetadata(), options: readOnly), "log offset \(offset)") { error in
                XCTAssertTrue("\(error)".contains("log offset"), "\(error)")
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 40)
    }

    /// A read-only open that asks to salvage stops before the damaged frame instead of failing:
    /// it holds the saves before it, names the frame, and a writable open still refuses.
    func testSalvagingOpensWithTheSavesBeforeTheDamage() throws {
        let path = BinaryTestModel.temporaryPath()
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        var store: BinaryStore? = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
        _ = try store?.save(StoreChangeSet(inserted: [BinaryTestModel.tag(1, "t")]))
        _ = try store?.save(StoreChangeSet(inserted: [BinaryTestModel.tag(2, "u")]))
        _ = try store?.save(StoreChangeSet(inserted: [BinaryTestModel.tag(3, "v")]))
        let history = try XCTUnwrap(store?.logHistory())
        store = nil
        let second = try XCTUnwrap(history.commits.dropFirst().first?.frames.first { $0.isCommit })
        var log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        log[Int(second.offset) + LogLayout.frameHeaderSize + 2] ^= 0x5A
        try Data(log).write(to: URL(fileURLWithPath: path + "-wal"))

        var readOnly = options
        readOnly.readOnly = true
        XCTAssertThrowsError(try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: readOnly))
        var salvage = readOnly
        salvage.salvagesDamagedLog = true
        let salvaged = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: salvage)
        XCTAssertEqual(salvaged.openReport.logDamage?.location, "log offset \(second.offset)")
        XCTAssertEqual(salvaged.openReport.replayedSaves, 1)
        XCTAssertNotNil(try salvaged.row(for: StoreObjectID(entityName: "Tag", primaryKey: 1)))
        XCTAssertNil(try salvaged.row(for: StoreObjectID(entityName: "Tag", primaryKey: 2)))
        XCTAssertThrowsError(try salvaged.save(StoreChangeSet(inserted: [BinaryTestModel.tag(4, "w")])), "a salvaged store is read-only")
        try salvaged.close()
        XCTAssertThrowsError(try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options), "a writable open still refuses the damaged log")
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))), log, "salvaging writes nothing")
    }
}
