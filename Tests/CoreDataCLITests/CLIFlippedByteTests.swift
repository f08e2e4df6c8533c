import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import Foundation
import XCTest

/// A byte flipped anywhere in a store makes `verify` exit with status 1 naming the damaged
/// place, and `dump` refuse the store with status 1 instead of printing what the damaged bytes
/// decode to (issue 8, acceptance).
final class CLIFlippedByteTests: XCTestCase {
    /// Every Nth byte of the data file is flipped: each flip runs the executable twice, and
    /// every structure still gets several flips (the engine's own test flips every byte in
    /// process).
    private let stride = 23

    /// The location `verify` must name for a flip at each offset of the data file: the file
    /// header, a root slot, the page holding it, or the byte itself (reserved header bytes).
    private func expectedLocation(of offset: Int, in bytes: [UInt8]) throws -> [String] {
        if offset < BinaryStoreLayout.headerSize { return ["data file offset 0 "] }
        for slot in BinaryStoreLayout.rootSlotOffsets where (slot..<(slot + BinaryStoreLayout.rootSlotSize)).contains(offset) {
            return ["data file offset \(slot) "]
        }
        if offset < BinaryStoreLayout.firstPageOffset { return ["data file offset \(offset):"] }
        var page = BinaryStoreLayout.firstPageOffset
        while page < bytes.count {
            let header = try PageHeader(decoding: Array(bytes[page..<(page + BinaryStoreLayout.pageHeaderSize)]), at: UInt64(page))
            if offset < page + header.totalLength {
                // A damaged index page or directory is reported where the index starts.
                return ["data file offset \(page)", "(index)", "index entry"]
            }
            page += header.totalLength
        }
        return ["data file offset \(offset)"]
    }

    func testEveryFlippedByteIsReportedByVerifyAndRefusedByDump() throws {
        let source = try CLI.libraryStore(closed: true)
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source + "-wal")))
        let folder = CLI.temporaryFolder()
        let path = folder.appendingPathComponent("Damaged.store").path
        try Data(log).write(to: URL(fileURLWithPath: path + "-wal"))
        var flipped = 0
        for offset in Swift.stride(from: 0, to: original.count, by: stride) {
            var bytes = original
            bytes[offset] ^= 0x5A
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            try check(path, flippedAt: "data file offset \(offset)", expected: try expectedLocation(of: offset, in: original))
            flipped += 1
        }
        try Data(original).write(to: URL(fileURLWithPath: path))
        // The closed store's log is its header alone: a flip there leaves a frame-less log whose
        // header does not decode, what a power failure during its creation leaves (wal.md §2).
        // It holds nothing, so verify notes it and dump reads the store.
        XCTAssertEqual(log.count, LogLayout.headerSize)
        for offset in Swift.stride(from: 0, to: log.count, by: 4) {
            var bytes = log
            bytes[offset] ^= 0x5A
            try Data(bytes).write(to: URL(fileURLWithPath: path + "-wal"))
            let verify = try CLI.run(["verify", path])
            XCTAssertTrue(verify.status == 1 || verify.stdout.contains("note: the log's header does not decode"), "a flip at log offset \(offset) went unnoticed: \(verify.stdout)")
            flipped += 1
        }
        print("coredata verify and dump: \(flipped) flipped bytes, each reported with its location")
        XCTAssertGreaterThan(flipped, 240)
    }

    /// Flips in the log's frames of the saves before the last (the last save's own frames are
    /// covered by LogFrameDamageTests, as the sync marker after them makes them damage too).
    func testFlippedBytesInTheLogFramesOfEarlierSaves() throws {
        let source = try CLI.libraryStore(closed: false)
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source + "-wal")))
        let history = try CLI.json(try CLI.run(["log", source, "--json"]).stdout)
        let saves = history["saves"] as? [[String: Any]] ?? []
        XCTAssertEqual(saves.count, 3)
        guard let lastSave = saves.last?["offset"] as? Int else { return XCTFail("no saves in \(history)") }
        let folder = CLI.temporaryFolder()
        let path = folder.appendingPathComponent("Damaged.store").path
        try data.write(to: URL(fileURLWithPath: path))
        var flipped = 0
        for offset in Swift.stride(from: LogLayout.firstFrameOffset, to: lastSave, by: 5) {
            var bytes = log
            bytes[offset] ^= 0x5A
            try Data(bytes).write(to: URL(fileURLWithPath: path + "-wal"))
            try check(path, flippedAt: "log offset \(offset)", expected: ["log offset"])
            flipped += 1
        }
        print("coredata verify and dump: \(flipped) flipped bytes in earlier saves' log frames, each reported")
        XCTAssertGreaterThan(flipped, 90)
    }

    private func check(_ path: String, flippedAt place: String, expected: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let verify = try CLI.run(["verify", path])
        XCTAssertEqual(verify.status, 1, "a flip at \(place) went unnoticed: \(verify.stdout)", file: file, line: line)
        let damaged = verify.stdout.split(separator: "\n").filter { $0.hasPrefix("damaged: ") }
        XCTAssertTrue(damaged.contains { line in expected.contains { line.contains($0) } }, "flip at \(place): expected \(expected) in \(verify.stdout)", file: file, line: line)
        XCTAssertEqual(verify.errorLines.count, 1, verify.stderr, file: file, line: line)
        let dump = try CLI.run(["dump", path, "--format", "jsonl"])
        XCTAssertEqual(dump.status, 1, "dump of a store flipped at \(place): \(dump.stdout)\(dump.stderr)", file: file, line: line)
        XCTAssertEqual(dump.stdout, "", "dump printed records of a store flipped at \(place)", file: file, line: line)
        XCTAssertEqual(dump.errorLines.count, 1, dump.stderr, file: file, line: line)
        XCTAssertTrue(dump.stderr.contains("is damaged"), dump.stderr, file: file, line: line)
    }

    /// `dump --salvage` prints a store whose log has a synced frame damaged in place as it was
    /// before that frame, and names the frame on stderr; without it, dump refuses the store.
    func testDumpSalvagesTheSavesBeforeADamagedLogFrame() throws {
        let path = try CLI.libraryStore(closed: false)
        var log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        // The first save's frame: every save after it is synced, so this is damage, not a torn tail.
        log[LogLayout.firstFrameOffset + LogLayout.frameHeaderSize + 5] ^= 0x5A
        try Data(log).write(to: URL(fileURLWithPath: path + "-wal"))
        assertFailure(try CLI.run(["dump", path]), status: 1, mentions: "log offset \(LogLayout.firstFrameOffset)")
        let salvaged = try CLI.run(["dump", path, "--salvage", "--json"])
        XCTAssertEqual(salvaged.status, 0, salvaged.stderr)
        XCTAssertTrue(salvaged.stderr.contains("log offset \(LogLayout.firstFrameOffset)"), salvaged.stderr)
        XCTAssertEqual(salvaged.stdout, "", "the damaged frame held the first save: nothing before it")
        // Damage in the last save (book 4 deleted): the two saves before it are dumped.
        let second = try CLI.libraryStore(closed: false)
        var readOnly = BinaryStoreOptions()
        readOnly.readOnly = true
        let reader = try BinaryStore(path: second, model: CLI.model, metadata: StoreMetadata(), options: readOnly)
        let last = try XCTUnwrap(try reader.logHistory().commits.last?.frames.first { $0.isCommit })
        try reader.close()
        var secondLog = [UInt8](try Data(contentsOf: URL(fileURLWithPath: second + "-wal")))
        secondLog[Int(last.offset) + LogLayout.frameHeaderSize + 3] ^= 0x5A
        try Data(secondLog).write(to: URL(fileURLWithPath: second + "-wal"))
        assertFailure(try CLI.run(["dump", second]), status: 1, mentions: "log offset \(last.offset)")
        let before = try CLI.run(["dump", second, "--salvage", "--entity", "Book", "--json"])
        XCTAssertEqual(before.status, 0, before.stderr)
        XCTAssertTrue(before.stderr.contains("log offset \(last.offset)"), before.stderr)
        let books = before.stdout.split(separator: "\n")
        XCTAssertEqual(books.count, 4, "book 4's deletion was in the damaged save: \(before.stdout)")
        XCTAssertTrue(before.stdout.contains("700"), "the second save's update is there")
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: second + "-wal"))), secondLog, "dump --salvage writes nothing")
    }
}
