import CoreData
import Foundation
import XCTest

/// `checkpoint` and `compact`, run as a process.
final class CLIWriteCommandTests: XCTestCase {
    func testCheckpointCopiesTheLogIntoTheDataFile() throws {
        let path = try CLI.libraryStore(closed: false)
        let before = try CLI.run(["dump", path, "--format", "jsonl"]).stdout
        let result = try CLI.run(["checkpoint", path, "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "", "no progress bar when standard error is not a terminal")
        let json = try CLI.json(result.stdout)
        XCTAssertEqual(json["savesCopied"] as? Int, 3)
        XCTAssertEqual(json["generationBefore"] as? Int, 1)
        XCTAssertEqual(json["generationAfter"] as? Int, 2)
        XCTAssertEqual(json["logBytesAfter"] as? Int, 64)
        let info = try CLI.json(try CLI.run(["info", path, "--json"]).stdout)
        XCTAssertEqual((info["log"] as? [String: Any])?["savesSinceCheckpoint"] as? Int, 0)
        XCTAssertEqual(try CLI.run(["dump", path, "--format", "jsonl"]).stdout, before, "a checkpoint keeps every object")
        XCTAssertEqual(try CLI.run(["verify", path]).status, 0)
        let text = try CLI.run(["checkpoint", path])
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdout.hasPrefix("checkpointed \(path): 0 saves copied"), text.stdout)
    }

    func testCompactDropsDeadBytesAndKeepsTheObjects() throws {
        let path = try CLI.libraryStore(closed: false)
        let before = try CLI.run(["dump", path, "--format", "jsonl"]).stdout
        let result = try CLI.run(["compact", path, "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        let json = try CLI.json(result.stdout)
        XCTAssertEqual(json["objects"] as? Int, 6)
        XCTAssertGreaterThan(json["deadBytesBefore"] as? Int ?? 0, 0)
        XCTAssertEqual(json["deadBytesAfter"] as? Int, 0)
        XCTAssertEqual(json["logBytesAfter"] as? Int, 64)
        XCTAssertEqual(try CLI.run(["dump", path, "--format", "jsonl"]).stdout, before)
        XCTAssertEqual(try CLI.run(["verify", path]).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-compact"))
        let text = try CLI.run(["compact", path])
        XCTAssertTrue(text.stdout.hasPrefix("compacted \(path): 6 objects; data file"), text.stdout)
    }

    /// On a terminal (a pseudo-terminal from script(1)) compact draws a progress bar on
    /// standard error; the summary stays on standard output.
    func testCompactDrawsAProgressBarOnATerminal() throws {
        #if !os(Linux)
        throw XCTSkip("the test drives util-linux script(1)")
        #endif
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { throw XCTSkip("script(1) is not installed") }
        let path = try CLI.libraryStore(closed: false)
        let command = "'\(CLI.executable.path)' compact '\(path)'"
        let result = try CLI.runProcess("/usr/bin/script", ["-qec", command, "/dev/null"])
        XCTAssertEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stdout.contains("compact [##############################] 100% (6/6 records)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("compacted "), result.stdout)
    }
}
