#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CoreDataBinaryStore
import CoreDataTestSupport
import XCTest

/// The fault-injecting file layer models durability as the suites assume.
final class FaultInjectingFileSystemTests: XCTestCase {
    func testOnlySyncedDataAndSyncedFolderEntriesSurvivePowerLoss() throws {
        let fs = FaultInjectingFileSystem()
        let file = try fs.open("/d/a", create: true, readOnly: false)
        try file.write([1, 2, 3], at: 0)
        XCTAssertEqual(fs.powerLoss(.dropUnsynced), DiskImage(), "the folder entry is not synced")
        XCTAssertEqual(fs.powerLoss(.processCrash), DiskImage(files: ["/d/a": [1, 2, 3]]))
        try fs.syncDirectory(containing: "/d/a")
        XCTAssertEqual(fs.powerLoss(.dropUnsynced), DiskImage(files: ["/d/a": []]))
        try file.sync()
        try file.write([9], at: 5)
        XCTAssertEqual(try file.read(at: 0, count: 10), [1, 2, 3, 0, 0, 9])
        XCTAssertEqual(fs.powerLoss(.dropUnsynced), DiskImage(files: ["/d/a": [1, 2, 3]]))
        XCTAssertEqual(fs.powerLoss(.zeroFillExtensions), DiskImage(files: ["/d/a": [1, 2, 3, 0, 0, 0]]))
        try fs.rename("/d/a", to: "/d/b")
        XCTAssertEqual(fs.powerLoss(.dropUnsynced).files.keys.sorted(), ["/d/a"])
        XCTAssertEqual(fs.powerLoss(.processCrash).files.keys.sorted(), ["/d/b"])
        try fs.syncDirectory(containing: "/d/b")
        XCTAssertEqual(fs.powerLoss(.dropUnsynced).files.keys.sorted(), ["/d/b"])
        XCTAssertEqual(fs.operationCount, 7)
    }

    func testACrashFreezesTheProcess() throws {
        let fs = FaultInjectingFileSystem(plan: .crash(at: 2))
        let file = try fs.open("/d/a", create: true, readOnly: false)
        XCTAssertThrowsError(try file.write(Array(repeating: 7, count: 1_500), at: 0)) { error in
            XCTAssertTrue("\(error)".contains("crashed"), "\(error)")
        }
        XCTAssertEqual(fs.crashOperation, 2)
        XCTAssertThrowsError(try file.sync())
        XCTAssertThrowsError(try file.read(at: 0, count: 1))
        XCTAssertThrowsError(try fs.open("/d/b", create: true, readOnly: false))
        XCTAssertEqual(fs.operationCount, 2, "a dead process does nothing more")
        // The write was in flight: the page cache may hold it, the disk any sectors of it.
        XCTAssertEqual(fs.powerLoss(.processCrash).files["/d/a"]?.count, 1_500)
        let torn = fs.powerLoss(.tearLastWrite(seed: 1)).files
        XCTAssertTrue(torn.isEmpty, "the folder entry was never synced")
    }

    func testTearAndRandomSubsetCutAtSectorBoundaries() throws {
        let fs = FaultInjectingFileSystem()
        let file = try fs.open("/d/a", create: true, readOnly: false)
        try fs.syncDirectory(containing: "/d/a")
        try file.write(Array(repeating: 1, count: 2_048), at: 0)
        try file.sync()
        try file.write(Array(repeating: 2, count: 2_000), at: 100)
        for seed in 0..<20 as Range<UInt64> {
            let torn = try XCTUnwrap(fs.powerLoss(.tearLastWrite(seed: seed)).files["/d/a"])
            let cut = torn.lastIndex(of: 2).map { $0 + 1 } ?? 100
            XCTAssertEqual(cut % 512, 0, "torn at a sector boundary")
            XCTAssertTrue(torn[100..<cut].allSatisfy { $0 == 2 } && torn[cut...].allSatisfy { $0 == 1 })
            let subset = try XCTUnwrap(fs.powerLoss(.randomSubset(seed: seed)).files["/d/a"])
            XCTAssertEqual(subset, fs.powerLoss(.randomSubset(seed: seed)).files["/d/a"], "the same seed, the same image")
            for sector in 0..<4 {
                let range = max(100, sector * 512)..<min(2_100, (sector + 1) * 512)
                XCTAssertTrue(subset[range].allSatisfy { $0 == 2 } || subset[range].allSatisfy { $0 == 1 }, "sectors are atomic")
            }
        }
    }

    func testFailedSyncLosesTheUnsyncedWritesForGood() throws {
        let fs = FaultInjectingFileSystem(plan: .fail(code: EIO, at: 4, persistent: false))
        let file = try fs.open("/d/a", create: true, readOnly: false)
        try fs.syncDirectory(containing: "/d/a")
        try file.write([1, 2], at: 0)
        XCTAssertThrowsError(try file.sync()) { error in
            XCTAssertEqual((error as? StoreIOError)?.code, EIO)
            XCTAssertTrue("\(error)".contains("/d/a"), "\(error)")
        }
        XCTAssertEqual(try file.read(at: 0, count: 2), [1, 2], "still readable")
        try file.sync()
        XCTAssertEqual(fs.powerLoss(.dropUnsynced).files["/d/a"], [], "but never durable")
    }

    func testENOSPCKeepsTheWholeSectorsItHadRoomFor() throws {
        let fs = FaultInjectingFileSystem(plan: .fail(code: ENOSPC, at: 2, persistent: true))
        let file = try fs.open("/d/a", create: true, readOnly: false)
        XCTAssertThrowsError(try file.write(Array(repeating: 5, count: 3_000), at: 0))
        XCTAssertEqual(try file.size(), 1_024)
        XCTAssertThrowsError(try file.sync())
        XCTAssertThrowsError(try fs.syncDirectory(containing: "/d/a"))
    }
}
