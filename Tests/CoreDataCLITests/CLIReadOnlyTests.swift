import CoreData
import Foundation
import XCTest

/// The reading commands open stores read-only: not a byte of any file changes, and no file
/// (log, lock, temporary) appears or goes, even where a writable open would recover in place.
final class CLIReadOnlyTests: XCTestCase {
    private let readCommands: [[String]] = [
        ["info"], ["info", "--json"], ["verify"], ["verify", "--json"], ["dump"], ["dump", "--format", "jsonl"],
        ["dump", "--format", "xml"], ["dump", "--where", "pages > 100"], ["dump", "--model", CLI.modelPath],
        ["log"], ["log", "--json"], ["pages"], ["pages", "--json"],
    ]

    private func assertUnchanged(_ path: String, expectSuccess: Bool = true, file: StaticString = #filePath, line: UInt = #line) throws {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        let before = try CLI.snapshot(folder)
        for command in readCommands {
            let result = try CLI.run([command[0], path] + command.dropFirst())
            if expectSuccess { XCTAssertEqual(result.status, 0, "\(command): \(result.stderr)", file: file, line: line) }
            let after = try CLI.snapshot(folder)
            XCTAssertEqual(after.keys.sorted(), before.keys.sorted(), "\(command) added or removed a file", file: file, line: line)
            for (name, (bytes, modified)) in before {
                XCTAssertEqual(after[name]?.0, bytes, "\(command) changed \(name)", file: file, line: line)
                XCTAssertEqual(after[name]?.1, modified, "\(command) touched \(name)", file: file, line: line)
            }
        }
    }

    func testReadingAClosedStoreChangesNothing() throws {
        try assertUnchanged(try CLI.libraryStore(closed: true))
    }

    func testReadingAStoreWithSavesInItsLogChangesNothing() throws {
        try assertUnchanged(try CLI.libraryStore(closed: false))
    }

    func testReadingAStoreWithoutALogDoesNotCreateOne() throws {
        let path = try CLI.libraryStore(closed: true)
        try FileManager.default.removeItem(atPath: path + "-wal")
        try assertUnchanged(path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    /// A writable open would truncate pages past the data end and remove a leftover compaction
    /// file; a read-only one leaves both.
    func testReadingAStoreThatAWriterWouldRepairChangesNothing() throws {
        let path = try CLI.libraryStore(closed: true)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 100))
        try handle.close()
        try Data("partial".utf8).write(to: URL(fileURLWithPath: path + "-compact"))
        try assertUnchanged(path)
    }
}
