import Foundation
import FuzzTargets
import XCTest

/// The binary targets' seeds as `Fuzz/make-corpus.sh` would write them today: CorpusMaker still
/// reads the golden store, and every seed it makes runs through its target. The committed corpus
/// may be older; this keeps the maker from rotting between regenerations. (FuzzBinaryStoreSaves's
/// seeds are only counted: its programs are the committed ones, which the replay runs, and they
/// take most of a second each in a debug build.)
final class CorpusMakerTests: XCTestCase {
    func testFreshSeedsReplay() throws {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("corpus-maker-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try CorpusMaker.make(root: root.path, package: package.path)
        let targets: [(String, ([UInt8]) -> Void)] = [
            ("FuzzBinaryHeader", FuzzBinaryHeader.run), ("FuzzBinaryPage", FuzzBinaryPage.run), ("FuzzBinaryRecord", FuzzBinaryRecord.run),
            ("FuzzLogFrame", FuzzLogFrame.run), ("FuzzBinaryStoreOpen", FuzzBinaryStoreOpen.run),
        ]
        for (target, run) in targets {
            let folder = root.appendingPathComponent(target)
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            XCTAssertFalse(names.isEmpty, "CorpusMaker wrote no seeds for \(target)")
            for name in names { run([UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))) }
        }
        let saves = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("FuzzBinaryStoreSaves").path)
        XCTAssertEqual(saves.count, 6, "CorpusMaker wrote \(saves.sorted()) for FuzzBinaryStoreSaves")
    }
}
