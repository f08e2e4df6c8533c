import CoreData
import CoreDataBinaryStore
import CoreDataStorage
import Foundation
import XCTest

/// Bad input: one line on standard error naming the problem, the documented exit status, never
/// a crash trace (issue 8, item 3).
final class CLIBadInputTests: XCTestCase {
    private let storeCommands: [[String]] = [["info"], ["verify"], ["dump"], ["log"], ["pages"], ["checkpoint"], ["compact"]]

    private func runEverywhere(_ path: String, status: Int32, mentions fragment: String, commands: [[String]]? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        for command in commands ?? storeCommands {
            let result = try CLI.run([command[0], path] + command.dropFirst())
            assertFailure(result, status: status, mentions: fragment, file: file, line: line)
            XCTAssertEqual(result.stdout, command[0] == "verify" ? result.stdout : "", "\(command[0]) printed output for a bad input", file: file, line: line)
        }
    }

    func testAMissingFile() throws {
        let path = CLI.temporaryFolder().appendingPathComponent("nothing.store").path
        try runEverywhere(path, status: 2, mentions: "no such file: \(path)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "checkpoint and compact must not create a store")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    func testFilesThatAreNotStores() throws {
        let folder = CLI.temporaryFolder()
        let text = folder.appendingPathComponent("notes.txt").path
        try "hello, world\n".write(toFile: text, atomically: true, encoding: .utf8)
        try runEverywhere(text, status: 3, mentions: "is not a store")
        let empty = folder.appendingPathComponent("empty").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        try runEverywhere(empty, status: 3, mentions: "is not a store")
        try runEverywhere(folder.path, status: 3, mentions: "is a folder, not a store file")
        XCTAssertEqual(try String(contentsOfFile: text, encoding: .utf8), "hello, world\n")
    }

    /// Files that start like XML stores but are not valid ones: the reading commands report the
    /// damage with its line; the binary-only commands say an XML store has no log or pages.
    func testXMLFilesThatAreNotValidStores() throws {
        let folder = CLI.temporaryFolder()
        let path = folder.appendingPathComponent("Library.xml").path
        try "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<database>\n</database>\n".write(toFile: path, atomically: true, encoding: .utf8)
        try runEverywhere(path, status: 7, mentions: "is an XML store, which", commands: [["log"], ["pages"], ["checkpoint"], ["compact"]])
        try runEverywhere(path, status: 1, mentions: "line 3", commands: [["info"], ["verify"], ["dump"]])
        let bare = folder.appendingPathComponent("bare.xml").path
        try "  <database/>".write(toFile: bare, atomically: true, encoding: .utf8)
        try runEverywhere(bare, status: 7, mentions: "is an XML store", commands: [["log"], ["pages"], ["checkpoint"], ["compact"]])
        try runEverywhere(bare, status: 1, mentions: "\(bare) is damaged", commands: [["info"], ["verify"], ["dump"]])
    }

    func testATruncatedStore() throws {
        let folder = CLI.temporaryFolder()
        let original = try Data(contentsOf: URL(fileURLWithPath: try CLI.libraryStore(closed: true)))
        for length in [8, 40, 100, 3_000, 4_096, 4_200, original.count - 1] {
            let path = folder.appendingPathComponent("cut-\(length).store").path
            try original.prefix(length).write(to: URL(fileURLWithPath: path))
            try runEverywhere(path, status: 1, mentions: "is damaged", commands: [["info"], ["verify"], ["dump"], ["log"], ["pages"]])
        }
    }

    func testAStoreLockedByAWriterWithExclusiveAccess() throws {
        let path = try CLI.libraryStore(closed: true)
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        options.exclusiveAccess = true
        let writer = try BinaryStore(path: path, model: CLI.model, metadata: StoreMetadata(), options: options)
        defer { try? writer.close() }
        try runEverywhere(path, status: 4, mentions: "is locked by another process")
        try writer.close()
        XCTAssertEqual(try CLI.run(["info", path]).status, 0, "the lock goes with the writer")
    }

    /// Processes share a store: beside a reader (and a writer that did not ask for exclusive
    /// access) every command runs, and the reader follows a checkpoint and a compaction.
    func testAStoreOpenElsewhereIsSharedWithEveryCommand() throws {
        let path = try CLI.libraryStore(closed: false)
        var options = BinaryStoreOptions()
        options.readOnly = true
        let reader = try BinaryStore(path: path, model: CLI.model, metadata: StoreMetadata(), options: options)
        defer { try? reader.close() }
        var writerOptions = BinaryStoreOptions()
        writerOptions.backgroundCheckpoints = false
        let writer = try BinaryStore(path: path, model: CLI.model, metadata: StoreMetadata(), options: writerOptions)
        defer { try? writer.close() }
        let counts = try reader.objectCounts()
        for command in ["info", "verify", "dump", "log", "pages"] {
            let result = try CLI.run([command, path])
            XCTAssertEqual(result.status, 0, "\(command): \(result.stderr)")
        }
        XCTAssertEqual((try CLI.json(try CLI.run(["info", path, "--json"]).stdout)["log"] as? [String: Any])?["savesSinceCheckpoint"] as? Int, 3)
        for command in ["checkpoint", "compact"] {
            let result = try CLI.run([command, path])
            XCTAssertEqual(result.status, 0, "\(command): \(result.stderr)")
            XCTAssertEqual(try reader.objectCounts(), counts, "the reader follows the \(command)")
            XCTAssertEqual(try writer.objectCounts(), counts, "the writer follows the \(command)")
        }
        XCTAssertEqual((try CLI.json(try CLI.run(["info", path, "--json"]).stdout)["log"] as? [String: Any])?["savesSinceCheckpoint"] as? Int, 0)
    }

    func testABadPredicateAndAnUnknownEntity() throws {
        let path = try CLI.libraryStore(closed: true)
        assertFailure(try CLI.run(["dump", path, "--where", "pages >"]), status: 5, mentions: "bad predicate for --where")
        assertFailure(try CLI.run(["dump", path, "--where", "title == 'unterminated"]), status: 5, mentions: "bad predicate for --where")
        assertFailure(try CLI.run(["dump", path, "--where", "(pages > 1"]), status: 5, mentions: "bad predicate for --where")
        assertFailure(try CLI.run(["dump", path, "--entity", "Magazine"]), status: 5, mentions: "the store has no such entity (it has Author, Book)")
        assertFailure(try CLI.run(["dump", path, "--entity", "Magazine", "--model", CLI.modelPath]), status: 5, mentions: "the model has no such entity")
    }

    func testAModelThatDoesNotLoadOrDoesNotMatch() throws {
        let path = try CLI.libraryStore(closed: true)
        let folder = CLI.temporaryFolder()
        let other = folder.appendingPathComponent("Other.xcdatamodel")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let source = URL(fileURLWithPath: CLI.modelPath).appendingPathComponent("Library.xcdatamodel/contents")
        try String(contentsOf: source, encoding: .utf8)
            .replacingOccurrences(of: "<attribute name=\"isbn\"", with: "<attribute name=\"edition\" optional=\"YES\" attributeType=\"Integer 16\" usesScalarValueType=\"YES\"/>\n        <attribute name=\"isbn\"")
            .write(to: other.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        assertFailure(try CLI.run(["dump", path, "--model", other.path]), status: 6, mentions: "does not match \(path): entity Book differs")

        let broken = folder.appendingPathComponent("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try "<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"Nonsense\"/></entity>".write(to: broken.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        assertFailure(try CLI.run(["dump", path, "--model", broken.path]), status: 6, mentions: "does not load")
        assertFailure(try CLI.run(["model", broken.path]), status: 6, mentions: "contents")
        assertFailure(try CLI.run(["dump", path, "--model", folder.appendingPathComponent("none.xcdatamodeld").path]), status: 6, mentions: "no such model")
        assertFailure(try CLI.run(["model", folder.appendingPathComponent("none.xcdatamodeld").path]), status: 6, mentions: "no such model")
    }

    func testABadCommandLineIsAUsageError() throws {
        let path = try CLI.libraryStore(closed: true)
        XCTAssertEqual(try CLI.run(["dump", path, "--limit", "-3"]).status, 64)
        XCTAssertEqual(try CLI.run(["dump", path, "--format", "csv"]).status, 64)
        XCTAssertEqual(try CLI.run(["info"]).status, 64)
        XCTAssertEqual(try CLI.run(["frobnicate", path]).status, 64)
    }
}
