import CoreData
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import Foundation
import XCTest

/// What one run of `coredata` printed and returned.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// Standard error's lines, without the empty one after the last newline.
    var errorLines: [String] { stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty } }
}

/// Runs the built `coredata` executable and builds the stores the tests inspect.
enum CLI {
    /// The package's root folder, from this file's path.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `coredata` executable SwiftPM built beside the test bundle (the test target depends
    /// on it), or in the package's `.build/debug` when the bundle lives elsewhere.
    static let executable: URL = {
        var candidates: [URL] = []
        if let bundleFolder = Bundle.main.executableURL?.deletingLastPathComponent() { candidates.append(bundleFolder.appendingPathComponent("coredata")) }
        for bundle in Bundle.allBundles { candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("coredata")) }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/coredata"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[candidates.count - 1]
    }()

    /// Runs `coredata ARGUMENTS`; output goes through files so a large dump cannot block a pipe.
    @discardableResult
    static func run(_ arguments: [String]) throws -> CLIResult {
        try runProcess(executable.path, arguments)
    }

    static func runProcess(_ path: String, _ arguments: [String]) throws -> CLIResult {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outURL = folder.appendingPathComponent("out")
        let errURL = folder.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return CLIResult(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    static func json(_ text: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        guard let object = value as? [String: Any] else { throw CLITestError("not a JSON object: \(text.prefix(200))") }
        return object
    }

    // MARK: Stores

    static let modelPath = packageRoot.appendingPathComponent("Sources/coredata-demo/Resources/Library.xcdatamodeld").path

    static let model: NSManagedObjectModel = {
        guard let model = try? NSManagedObjectModel(validatingContentsOf: URL(fileURLWithPath: modelPath)) else {
            preconditionFailure("the demo's Library model does not load from \(modelPath)")
        }
        try? model.freeze()
        return model
    }()

    static func temporaryFolder() -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-cli-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func author(_ key: Int64, _ name: String, books: [Int64], version: Int64 = 0) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: "Author", primaryKey: key), version: version, values: [
            "name": .string(name), "books": .references(books.map { StoreObjectID(entityName: "Book", primaryKey: $0) }),
        ])
    }

    static func book(_ key: Int64, _ title: String, pages: Int64, author: Int64, version: Int64 = 0) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: "Book", primaryKey: key), version: version, values: [
            "title": .string(title), "pages": .integer(pages), "author": .reference(StoreObjectID(entityName: "Author", primaryKey: author)),
        ])
    }

    /// A Library store made by the engine in three saves: 3 authors and 4 books inserted; book 2
    /// updated to 700 pages; book 4 deleted (and its author updated). With `closed`, the store
    /// is closed (checkpointed, the log only its header); without, the handle is dropped as in
    /// a crash, so the three saves stay in the log.
    static func libraryStore(closed: Bool, in folder: URL = temporaryFolder()) throws -> String {
        let path = folder.appendingPathComponent("Library.store").path
        try writeLibrary(path: path, close: closed)
        return path
    }

    private static func writeLibrary(path: String, close: Bool) throws {
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        let metadata = StoreMetadata([
            NSStoreModelVersionHashesKey: model.entityVersionHashesByName, "NSStoreType": "Binary",
            "NSStoreUUID": "6A0D7C52-1B1E-4C3B-9E8B-2F4C5D6E7F80",
        ])
        let store = try BinaryStore(path: path, model: model, metadata: metadata, options: options)
        let versions = try store.save(StoreChangeSet(inserted: [
            author(1, "Ada Lovelace", books: [1]), author(2, "Donald Knuth", books: [2, 3]), author(3, "Grace Hopper", books: [4]),
            book(1, "Notes on the Analytical Engine", pages: 66, author: 1), book(2, "The Art of Computer Programming", pages: 672, author: 2),
            book(3, "Literate Programming", pages: 368, author: 2), book(4, "Understanding Computers", pages: 580, author: 3),
        ]))
        let book2 = StoreObjectID(entityName: "Book", primaryKey: 2)
        _ = try store.save(StoreChangeSet(updated: [
            book(2, "The Art of Computer Programming", pages: 700, author: 2, version: versions[book2] ?? 1),
        ]))
        let author3 = StoreObjectID(entityName: "Author", primaryKey: 3)
        let book4 = StoreObjectID(entityName: "Book", primaryKey: 4)
        _ = try store.save(StoreChangeSet(
            updated: [author(3, "Grace Hopper", books: [], version: versions[author3] ?? 1)],
            deleted: [(book4, versions[book4] ?? 1)]))
        if close { try store.close() }
    }

    /// The Library store (`libraryStore(closed: true)`: 3 authors, 3 books) copied into an XML
    /// store `Library.xml` by the API's migratePersistentStore; the binary store is removed.
    /// Objects are numbered store-wide: authors z1–z3, books z4–z6, in the binary store's order.
    static func xmlLibraryStore(in folder: URL = temporaryFolder()) throws -> String {
        let binary = try libraryStore(closed: true, in: folder)
        let path = folder.appendingPathComponent("Library.xml").path
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: NSBinaryStoreType, configurationName: nil, at: URL(fileURLWithPath: binary), options: [NSReadOnlyPersistentStoreOption: true])
        let copy = try coordinator.migratePersistentStore(store, to: URL(fileURLWithPath: path), options: nil, type: .xml)
        try coordinator.remove(copy)
        try FileManager.default.removeItem(atPath: binary)
        try FileManager.default.removeItem(atPath: binary + "-wal")
        return path
    }

    /// Every file in `folder` with its bytes and modification time.
    static func snapshot(_ folder: URL) throws -> [String: (Data, Date)] {
        var result: [String: (Data, Date)] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let url = folder.appendingPathComponent(name)
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            result[name] = (try Data(contentsOf: url), attributes[.modificationDate] as? Date ?? .distantPast)
        }
        return result
    }
}

struct CLITestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension XCTestCase {
    /// Asserts a failure: the status, exactly one `coredata: …` line on standard error that
    /// contains `fragment`, and no crash trace.
    func assertFailure(_ result: CLIResult, status: Int32, mentions fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, status, "stderr: \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.errorLines.count, 1, "expected one line on stderr, got: \(result.stderr)", file: file, line: line)
        XCTAssertTrue(result.stderr.hasPrefix("coredata: "), "stderr: \(result.stderr)", file: file, line: line)
        XCTAssertTrue(result.stderr.contains(fragment), "expected '\(fragment)' in: \(result.stderr)", file: file, line: line)
        for trace in ["Fatal error", "Stack dump", "backtrace", "Illegal instruction", "Segmentation"] {
            XCTAssertFalse(result.stderr.contains(trace), "crash trace in stderr: \(result.stderr)", file: file, line: line)
        }
    }
}
