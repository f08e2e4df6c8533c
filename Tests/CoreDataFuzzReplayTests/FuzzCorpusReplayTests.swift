import Foundation
import FuzzTargets
import XCTest

/// Replays every file of every seed corpus (`Fuzz/Corpus/<Target>/`, `regression-*` inputs
/// included) through its fuzz target's body, so an input that once crashed stays fixed in an
/// ordinary `swift test`, without libFuzzer or a sanitizer build.
///
/// One test per target, so a failure names it. A target that traps kills the test process: run
/// with `COREDATA_FUZZ_REPLAY_VERBOSE=1` to print each input's name before it runs.
final class FuzzCorpusReplayTests: XCTestCase {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus")

    /// Inputs replayed per target in this run, for the summary line.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [String: Int] = [:]

        func add(_ target: String, _ count: Int) { lock.withLock { counts[target] = count } }
        var summary: (inputs: Int, targets: Int) { lock.withLock { (counts.values.reduce(0, +), counts.count) } }
    }

    static let tally = Tally()

    override class func tearDown() {
        let summary = tally.summary
        print("fuzz corpus replay: \(summary.inputs) inputs across \(summary.targets) targets")
        super.tearDown()
    }

    /// Runs every file of the target's corpus through `run`, in name order.
    ///
    /// - Parameter minimum: the number of inputs the corpus holds today; fewer means inputs were
    ///   lost (a regression input among them, perhaps), which fails the test.
    func replay(_ target: String, atLeast minimum: Int, _ run: ([UInt8]) -> Void) throws {
        let folder = Self.corpus.appendingPathComponent(target)
        let verbose = ProcessInfo.processInfo.environment["COREDATA_FUZZ_REPLAY_VERBOSE"] == "1"
        var count = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
            let file = folder.appendingPathComponent(name)
            guard (try file.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
            if verbose { print("fuzz corpus replay: \(target)/\(name)") }
            run([UInt8](try Data(contentsOf: file)))
            count += 1
        }
        XCTAssertGreaterThanOrEqual(count, minimum, "\(folder.path) holds \(count) inputs, fewer than the \(minimum) it had")
        print("fuzz corpus replay: \(target) \(count) inputs")
        Self.tally.add(target, count)
    }

    func testFuzzModelLoader() throws { try replay("FuzzModelLoader", atLeast: 8, FuzzModelLoader.run) }
    func testFuzzCurrentVersion() throws { try replay("FuzzCurrentVersion", atLeast: 7, FuzzCurrentVersion.run) }
    func testFuzzPredicateParser() throws { try replay("FuzzPredicateParser", atLeast: 484, FuzzPredicateParser.run) }
    func testFuzzBinaryHeader() throws { try replay("FuzzBinaryHeader", atLeast: 2, FuzzBinaryHeader.run) }
    func testFuzzBinaryPage() throws { try replay("FuzzBinaryPage", atLeast: 13, FuzzBinaryPage.run) }
    func testFuzzBinaryRecord() throws { try replay("FuzzBinaryRecord", atLeast: 15, FuzzBinaryRecord.run) }
    func testFuzzLogFrame() throws { try replay("FuzzLogFrame", atLeast: 8, FuzzLogFrame.run) }
    func testFuzzBinaryIndex() throws { try replay("FuzzBinaryIndex", atLeast: 7, FuzzBinaryIndex.run) }
    func testFuzzBinaryStoreOpen() throws { try replay("FuzzBinaryStoreOpen", atLeast: 4, FuzzBinaryStoreOpen.run) }
    func testFuzzBinaryStoreSaves() throws { try replay("FuzzBinaryStoreSaves", atLeast: 6, FuzzBinaryStoreSaves.run) }
    func testFuzzXMLStoreReader() throws { try replay("FuzzXMLStoreReader", atLeast: 8, FuzzXMLStoreReader.run) }
    func testFuzzKeyedArchive() throws { try replay("FuzzKeyedArchive", atLeast: 14, FuzzKeyedArchive.run) }
    func testFuzzAppleSQLiteStore() throws { try replay("FuzzAppleSQLiteStore", atLeast: 6, FuzzAppleSQLiteStore.run) }
}
