import Foundation
import XCTest
@testable import CoreDataBinaryStore

/// The real file layer: the guarantees the engine builds on (short reads only at the end, writes
/// that extend, truncation, advisory locks between handles, errors that name the file).
final class POSIXFileSystemTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "posix-fs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testWriteExtendsAndReadIsShortOnlyAtTheEnd() throws {
        let fs = POSIXFileSystem()
        let file = try fs.open(directory + "/a", create: true, readOnly: false)
        defer { file.close() }
        try file.write([1, 2, 3], at: 10)
        XCTAssertEqual(try file.size(), 13)
        XCTAssertEqual(try file.read(at: 0, count: 13), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3])
        XCTAssertEqual(try file.read(at: 11, count: 100), [2, 3])
        XCTAssertEqual(try file.read(at: 50, count: 4), [])
        try file.sync()
        try file.truncate(to: 11)
        XCTAssertEqual(try file.read(at: 10, count: 4), [1])
    }

    func testOpenWithoutCreateNamesTheMissingFile() {
        let path = directory + "/missing"
        XCTAssertThrowsError(try POSIXFileSystem().open(path, create: false, readOnly: true)) { error in
            let ioError = error as? StoreIOError
            XCTAssertEqual(ioError?.path, path)
            XCTAssertEqual(ioError?.code, ENOENT)
            XCTAssertTrue(ioError?.description.contains("missing") == true, "\(error)")
        }
    }

    func testExclusiveLockRefusesASecondHandleUntilReleased() throws {
        let fs = POSIXFileSystem()
        let path = directory + "/locked"
        let writer = try fs.open(path, create: true, readOnly: false)
        XCTAssertTrue(try writer.lock(exclusive: true, wait: false))
        let second = try fs.open(path, create: false, readOnly: false)
        XCTAssertFalse(try second.lock(exclusive: true, wait: false))
        let reader = try fs.open(path, create: false, readOnly: true)
        XCTAssertFalse(try reader.lock(exclusive: false, wait: false))
        writer.close()
        XCTAssertTrue(try second.lock(exclusive: true, wait: false))
        second.close()
        XCTAssertTrue(try reader.lock(exclusive: false, wait: false))
        let otherReader = try fs.open(path, create: false, readOnly: true)
        XCTAssertTrue(try otherReader.lock(exclusive: false, wait: false), "shared locks coexist")
        reader.close()
        otherReader.close()
    }

    func testRenameReplacesAndDirectorySyncSucceeds() throws {
        let fs = POSIXFileSystem()
        let a = try fs.open(directory + "/a", create: true, readOnly: false)
        try a.write([7], at: 0)
        a.close()
        let b = try fs.open(directory + "/b", create: true, readOnly: false)
        try b.write([8, 8], at: 0)
        b.close()
        try fs.rename(directory + "/a", to: directory + "/b")
        try fs.syncDirectory(containing: directory + "/b")
        XCTAssertFalse(fs.fileExists(directory + "/a"))
        let reopened = try fs.open(directory + "/b", create: false, readOnly: true)
        XCTAssertEqual(try reopened.read(at: 0, count: 10), [7])
        reopened.close()
        try fs.remove(directory + "/b")
        try fs.remove(directory + "/b")  // removing what is already gone is not an error
    }
}
