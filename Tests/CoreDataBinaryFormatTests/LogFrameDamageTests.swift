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
}
