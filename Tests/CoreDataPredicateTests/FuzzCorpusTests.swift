// The predicate parser's fuzz corpus (Fuzz/Corpus/FuzzPredicateParser) is generated from the
// format table: every row's format string and its printed form are seeds, so the fuzzer starts
// from every construct the parser is known to accept. This test keeps the two in step.
import Foundation
import XCTest

final class FuzzCorpusTests: XCTestCase {
    /// The committed corpus folder, found from this file's place in the repository.
    private var corpus: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/FuzzPredicateParser", isDirectory: true)
    }

    /// A stable file name for a seed: FNV-1a of its bytes, so table edits do not rename other seeds.
    private func seedName(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "table-" + String(hash, radix: 16)
    }

    /// Fails when a table row's format or printed form is missing from the corpus. With
    /// `COREDATA_WRITE_FUZZ_CORPUS=1` in the environment (`Fuzz/make-corpus.sh` sets it) the
    /// missing seeds are written instead.
    func testCorpusHoldsEveryTableFormat() throws {
        let write = ProcessInfo.processInfo.environment["COREDATA_WRITE_FUZZ_CORPUS"] == "1"
        var seeds = Set<String>()
        for row in FormatTable.all {
            seeds.insert(row.format)
            seeds.insert(row.printed)
        }
        XCTAssertGreaterThanOrEqual(seeds.count, 200)
        var missing: [String] = []
        for seed in seeds.sorted() {
            let file = corpus.appendingPathComponent(seedName(seed))
            if (try? Data(contentsOf: file)) == Data(seed.utf8) { continue }
            if write {
                try Data(seed.utf8).write(to: file)
            } else {
                missing.append(seed)
            }
        }
        XCTAssertTrue(
            missing.isEmpty,
            "\(missing.count) table formats missing from \(corpus.path) (first: \(missing.prefix(3))); run `bash Fuzz/make-corpus.sh`")
    }
}
