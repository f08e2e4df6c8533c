#if canImport(Glibc)
import Glibc
#endif
import CoreDataBinaryStore
import CoreDataFileSystem
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// The kernel may read or write fewer bytes than asked, or stop a transfer with `EINTR`, at any
/// call. The standard workload runs on the real file layer with every `pread` and `pwrite` made
/// short or interrupted at random (seeded; the seed is in each message): every step must do what
/// it does with whole transfers, and the store must verify and read back exactly.
final class ShortTransferTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "short-transfers-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testShortAndInterruptedTransfersChangeNothing() throws {
        let workload = CrashWorkload.standard
        var totals = FlakyTransfers.Counts()
        for seed in CrashSeeds.seeds(for: 17, count: 4) {
            let path = directory + "/store-\(seed)"
            let flaky = FlakyTransfers(seed: seed)
            let fileSystem = POSIXFileSystem(transfers: flaky.transfers)
            var store: BinaryStore?
            for step in workload.steps {
                do {
                    try WorkloadRunner.perform(step.action, on: &store, fileSystem: fileSystem, durability: .full, path: path)
                } catch {
                    XCTFail("seed \(seed), step \(step.label): \(error)")
                    return
                }
            }
            let counts = flaky.counts
            XCTAssertGreaterThan(counts.shortWrites, 0, "seed \(seed)")
            XCTAssertGreaterThan(counts.shortReads, 0, "seed \(seed)")
            totals.add(counts)
            let reopened = try WorkloadRunner.open(POSIXFileSystem(), path: path)
            XCTAssertEqual(try StoreSnapshot.read(reopened), workload.current, "seed \(seed)")
            XCTAssertTrue(try reopened.verify().isIntact, "seed \(seed)")
            try reopened.close()
        }
        print("short transfers: \(totals.shortWrites) short writes, \(totals.shortReads) short reads, \(totals.interrupted) EINTRs over 4 seeds of the standard workload")
    }

    /// A `pwrite` that returns 0 for a non-empty buffer is an error, not a reason to try forever;
    /// the failed save loses nothing saved before it.
    func testAWriteThatMovesNothingFailsItsSave() throws {
        let path = directory + "/store"
        let first = try WorkloadRunner.open(POSIXFileSystem(), path: path)
        _ = try first.save(StoreChangeSet(inserted: [CrashTestModel.tag(1, "kept")], updated: [], deleted: []))
        try first.close()
        let stuck = POSIXTransfers(read: POSIXTransfers.system.read, write: { _, _, _, _ in 0 })
        let store = try WorkloadRunner.open(POSIXFileSystem(transfers: stuck), path: path)
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [CrashTestModel.tag(2, "lost")], updated: [], deleted: []))) { error in
            XCTAssertTrue("\(error)".contains("wrote nothing"), "\(error)")
            XCTAssertTrue("\(error)".contains(path), "\(error)")
        }
        try? store.close()
        let reopened = try WorkloadRunner.open(POSIXFileSystem(), path: path)
        let snapshot = try StoreSnapshot.read(reopened)
        XCTAssertEqual(snapshot.rows.keys.map(\.primaryKey), [1])
        try reopened.close()
    }
}

/// `pread` and `pwrite` that move a random part of what was asked, or fail with `EINTR`.
final class FlakyTransfers: @unchecked Sendable {
    struct Counts {
        var shortWrites = 0
        var shortReads = 0
        var interrupted = 0

        mutating func add(_ other: Counts) {
            shortWrites += other.shortWrites
            shortReads += other.shortReads
            interrupted += other.interrupted
        }
    }

    private let lock = NSLock()
    private var generator: SeededGenerator
    private var tally = Counts()

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    var counts: Counts { lock.withLock { tally } }

    /// How many of `count` bytes the next call moves; `nil` for an `EINTR`.
    private func portion(of count: Int, write: Bool) -> Int? {
        lock.withLock {
            switch Int.random(in: 0..<8, using: &generator) {
            case 0:
                tally.interrupted += 1
                return nil
            case 1...4 where count > 1:
                if write { tally.shortWrites += 1 } else { tally.shortReads += 1 }
                return Int.random(in: 1..<count, using: &generator)
            default:
                return count
            }
        }
    }

    var transfers: POSIXTransfers {
        POSIXTransfers(
            read: { [self] fd, buffer, count, offset in
                guard let part = portion(of: count, write: false) else {
                    errno = EINTR
                    return -1
                }
                return Glibc.pread(fd, buffer, part, offset)
            },
            write: { [self] fd, bytes, count, offset in
                guard let part = portion(of: count, write: true) else {
                    errno = EINTR
                    return -1
                }
                return Glibc.pwrite(fd, bytes, part, offset)
            })
    }
}
