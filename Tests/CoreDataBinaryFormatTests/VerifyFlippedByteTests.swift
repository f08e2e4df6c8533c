import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// `verify` finds a flipped byte anywhere in a closed store and names the place
/// (Formats/binary-store.md §13).
final class VerifyFlippedByteTests: XCTestCase {
    /// Each byte's expected location: the structure it belongs to.
    private func regions(of bytes: [UInt8]) throws -> [(Range<Int>, String)] {
        var regions: [(Range<Int>, String)] = [(0..<64, "data file offset 0")]
        for slot in BinaryStoreLayout.rootSlotOffsets { regions.append((slot..<(slot + 128), "data file offset \(slot)")) }
        var offset = BinaryStoreLayout.firstPageOffset
        while offset < bytes.count {
            let header = try PageHeader(decoding: Array(bytes[offset..<(offset + 32)]), at: UInt64(offset))
            regions.append((offset..<(offset + header.totalLength), "data file offset \(offset)"))
            offset += header.totalLength
        }
        return regions
    }

    func testEveryFlippedByteOfAClosedStoreIsReportedWithItsLocation() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata())
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.owner(1, "Ann", items: [1]), BinaryTestModel.item(1, owner: 1)]))
        try store.checkpoint()
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.item(2, owner: nil), BinaryTestModel.tag(1, "t")]))
        try store.close()
        XCTAssertTrue(BinaryStore.verify(path: path).isIntact)

        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        XCTAssertEqual(log.count, 64, "a closed store's log is only its header")
        let regions = try regions(of: original)
        let damagedPath = BinaryTestModel.temporaryPath()
        try Data(log).write(to: URL(fileURLWithPath: damagedPath + "-wal"))
        var checked = 0
        for index in original.indices {
            var bytes = original
            bytes[index] ^= 0x5A
            try Data(bytes).write(to: URL(fileURLWithPath: damagedPath))
            let report = BinaryStore.verify(path: damagedPath)
            XCTAssertFalse(report.isIntact, "a flip at data file offset \(index) went unnoticed")
            let expected = regions.first { $0.0.contains(index) }?.1 ?? "data file offset \(index)"
            XCTAssertTrue(report.issues.contains { $0.location.hasPrefix(expected) || $0.location.contains("\(expected) ") || $0.location.contains("\(expected),") }, "flip at \(index): expected \(expected) in \(report.issues)")
            checked += 1
        }
        try Data(original).write(to: URL(fileURLWithPath: damagedPath))
        for index in log.indices {
            var bytes = log
            bytes[index] ^= 0x5A
            try Data(bytes).write(to: URL(fileURLWithPath: damagedPath + "-wal"))
            let report = BinaryStore.verify(path: damagedPath)
            if log.count <= LogLayout.headerSize {
                // A log without frames whose header does not decode is what a power failure
                // during the log's creation leaves (wal.md §2): it holds nothing, and is noted.
                XCTAssertTrue(report.issues.contains { $0.location.hasPrefix("log offset") } || report.notes.contains { $0.contains("log's header does not decode") }, "a flip at log offset \(index) went unnoticed: \(report)")
            } else {
                XCTAssertTrue(report.issues.contains { $0.location.hasPrefix("log offset") }, "a flip at log offset \(index) went unnoticed: \(report)")
            }
            checked += 1
        }
        print("verify: \(checked) flipped bytes, each reported with its location")
    }
}
