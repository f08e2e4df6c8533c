import CoreData
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataBinaryFormat
import Foundation
import XCTest

/// `info`, `verify`, `dump`, `log`, `pages`, `model` and `--help`, run as a process.
final class CLIReadCommandTests: XCTestCase {
    func testHelpShowsTheExitStatusTableAndEverySubcommandAnExample() throws {
        let help = try CLI.run(["--help"])
        XCTAssertEqual(help.status, 0)
        for line in ["Exit status:", "1   the store is damaged", "4   the store is locked", "7   the command does not apply to an XML or SQLite store", "8   convert: the destination already exists"] {
            XCTAssertTrue(help.stdout.contains(line), "missing '\(line)' in --help")
        }
        for command in ["info", "verify", "dump", "log", "pages", "history", "checkpoint", "compact", "convert", "model"] {
            let result = try CLI.run([command, "--help"])
            XCTAssertEqual(result.status, 0, command)
            XCTAssertTrue(result.stdout.contains("Example:"), "\(command) --help has no example")
            XCTAssertTrue(result.stdout.contains("coredata \(command) "), "\(command) --help example does not run \(command)")
        }
    }

    func testInfoCountsObjectsLiveAndDeadBytesTheLogAndTheModelHashes() throws {
        let path = try CLI.libraryStore(closed: false)
        let text = try CLI.run(["info", path])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("objects          6 (Author 3, Book 3)"), text.stdout)
        XCTAssertTrue(text.stdout.contains("3 saves in 3 frames since the last checkpoint") || text.stdout.contains("3 saves in"), text.stdout)

        let info = try CLI.json(try CLI.run(["info", path, "--json"]).stdout)
        XCTAssertEqual(info["format"] as? String, "binary")
        XCTAssertEqual(info["formatVersion"] as? Int, Int(BinaryStoreLayout.formatVersion))
        XCTAssertEqual(info["pageSize"] as? Int, BinaryStoreLayout.targetPageSize)
        XCTAssertEqual(info["storeUUID"] as? String, "6A0D7C52-1B1E-4C3B-9E8B-2F4C5D6E7F80")
        XCTAssertEqual(info["objectsByEntity"] as? [String: Int], ["Author": 3, "Book": 3])
        XCTAssertGreaterThan(info["liveBytes"] as? Int ?? 0, 100)
        // Book 2's first version, Author 3's first version, Book 4 and its tombstone are dead.
        XCTAssertGreaterThan(info["deadBytes"] as? Int ?? 0, 60)
        let log = info["log"] as? [String: Any]
        XCTAssertEqual(log?["savesSinceCheckpoint"] as? Int, 3)
        XCTAssertGreaterThan(log?["bytes"] as? Int ?? 0, 64)
        XCTAssertEqual((info["lastCheckpoint"] as? [String: Any])?["generation"] as? Int, 1)
        let hashes = (info["metadata"] as? [String: Any])?["NSStoreModelVersionHashes"] as? [String: String]
        XCTAssertEqual(hashes?["Book"], CLI.model.entitiesByName["Book"]?.versionHash.base64EncodedString())

        let closed = try CLI.json(try CLI.run(["info", try CLI.libraryStore(closed: true), "--json"]).stdout)
        XCTAssertEqual((closed["log"] as? [String: Any])?["bytes"] as? Int, 64)
        XCTAssertEqual((closed["lastCheckpoint"] as? [String: Any])?["generation"] as? Int, 2)
        XCTAssertEqual(closed["objectsByEntity"] as? [String: Int], ["Author": 3, "Book": 3])
    }

    func testVerifyPassesAnIntactStore() throws {
        for closed in [true, false] {
            let path = try CLI.libraryStore(closed: closed)
            let result = try CLI.run(["verify", path])
            XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
            XCTAssertTrue(result.stdout.contains("intact: 6 objects"), result.stdout)
            XCTAssertEqual(result.stderr, "")
            let json = try CLI.json(try CLI.run(["verify", path, "--json"]).stdout)
            XCTAssertEqual(json["intact"] as? Bool, true)
            XCTAssertEqual((json["issues"] as? [Any])?.count, 0)
            XCTAssertEqual(json["logCommits"] as? Int, closed ? 0 : 3)
        }
    }

    /// Objects as JSON Lines, keyed by ID.
    private func dumpLines(_ arguments: [String]) throws -> [String: [String: Any]] {
        let result = try CLI.run(["dump"] + arguments + ["--format", "jsonl"])
        XCTAssertEqual(result.status, 0, result.stderr)
        var objects: [String: [String: Any]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let object = try CLI.json(String(line))
            objects[object["id"] as? String ?? "?"] = object
        }
        return objects
    }

    func testDumpWithoutAModelPrintsWhatTheRecordsHold() throws {
        for closed in [true, false] {
            let path = try CLI.libraryStore(closed: closed)
            let objects = try dumpLines([path])
            XCTAssertEqual(objects.keys.sorted(), ["Author/p1", "Author/p2", "Author/p3", "Book/p1", "Book/p2", "Book/p3"])
            let book2 = objects["Book/p2"]?["values"] as? [String: Any]
            XCTAssertEqual(book2?["pages"] as? Int, 700, "the update is what dump shows")
            XCTAssertEqual(book2?["author"] as? String, "Author/p2")
            XCTAssertEqual(book2?["title"] as? String, "The Art of Computer Programming")
            XCTAssertEqual((objects["Author/p2"]?["values"] as? [String: Any])?["books"] as? [String], ["Book/p2", "Book/p3"])
            XCTAssertEqual(objects["Book/p2"]?["version"] as? Int, 2)
            XCTAssertNil((objects["Author/p1"]?["values"] as? [String: Any])?["born"], "without a model, absent values are left out")
        }
    }

    func testDumpFiltersByEntityPredicateAndLimit() throws {
        let path = try CLI.libraryStore(closed: false)
        XCTAssertEqual(try dumpLines([path, "--entity", "Book", "--where", "pages > 300"]).keys.sorted(), ["Book/p2", "Book/p3"])
        XCTAssertEqual(try dumpLines([path, "--where", "author.name == 'Ada Lovelace'"]).keys.sorted(), ["Book/p1"])
        XCTAssertEqual(try dumpLines([path, "--entity", "Author", "--where", "name BEGINSWITH 'G'"]).keys.sorted(), ["Author/p3"])
        XCTAssertEqual(try dumpLines([path, "--limit", "4"]).keys.sorted(), ["Author/p1", "Author/p2", "Author/p3", "Book/p1"])
        XCTAssertEqual(try dumpLines([path, "--limit", "0"]).count, 0)
        let json = try CLI.run(["dump", path, "--json", "--entity", "Author"])
        XCTAssertEqual(json.stdout.split(separator: "\n").count, 3)
    }

    func testDumpWithTheModelShowsEveryPropertyAndTypedComparisons() throws {
        let path = try CLI.libraryStore(closed: false)
        let objects = try dumpLines([path, "--model", CLI.modelPath])
        XCTAssertEqual(objects.count, 6)
        let ada = objects["Author/p1"]?["values"] as? [String: Any]
        XCTAssertTrue(ada?.keys.contains("born") == true, "with a model, absent attributes print as null")
        XCTAssertTrue(ada?["born"] is NSNull)
        XCTAssertEqual(try dumpLines([path, "--model", CLI.modelPath, "--entity", "Book", "--where", "pages >= 368 AND pages < 700"]).keys.sorted(), ["Book/p3"])
    }

    func testDumpAsXMLAndTable() throws {
        let path = try CLI.libraryStore(closed: true)
        let xml = try CLI.run(["dump", path, "--format", "xml", "--entity", "Book"])
        XCTAssertEqual(xml.status, 0, xml.stderr)
        XCTAssertTrue(xml.stdout.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<objects store="))
        XCTAssertTrue(xml.stdout.contains("<object entity=\"Book\" id=\"Book/p2\" version=\"2\">"))
        XCTAssertTrue(xml.stdout.contains("<attribute name=\"pages\" type=\"integer\">700</attribute>"))
        XCTAssertTrue(xml.stdout.contains("<relationship name=\"author\"><ref id=\"Author/p2\"/></relationship>"))
        XCTAssertTrue(xml.stdout.hasSuffix("</objects>\n"))
        XCTAssertEqual(xml.stdout.components(separatedBy: "<object ").count - 1, 3)

        let table = try CLI.run(["dump", path])
        XCTAssertEqual(table.status, 0, table.stderr)
        let lines = table.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("Book (3 objects)"), table.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("Book/p2") && $0.contains("700") && $0.contains("The Art of Computer Programming") }, table.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("id ") && $0.contains("version") })
    }

    func testLogTellsWhatEachSaveInsertedUpdatedAndDeleted() throws {
        let path = try CLI.libraryStore(closed: false)
        let json = try CLI.json(try CLI.run(["log", path, "--json"]).stdout)
        let saves = json["saves"] as? [[String: Any]] ?? []
        XCTAssertEqual(saves.count, 3)
        guard saves.count == 3 else { return }
        XCTAssertEqual((saves[0]["inserted"] as? [String])?.sorted(), ["Author/p1", "Author/p2", "Author/p3", "Book/p1", "Book/p2", "Book/p3", "Book/p4"])
        XCTAssertEqual(saves[0]["offset"] as? Int, 64)
        XCTAssertEqual(saves[1]["updated"] as? [String], ["Book/p2"])
        XCTAssertEqual(saves[1]["inserted"] as? [String], [])
        XCTAssertEqual(saves[2]["deleted"] as? [String], ["Book/p4"])
        XCTAssertEqual(saves[2]["updated"] as? [String], ["Author/p3"])
        for save in saves {
            let frames = save["frames"] as? [[String: Any]] ?? []
            XCTAssertEqual(frames.last?["commit"] as? Bool, true)
        }
        let text = try CLI.run(["log", path])
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdout.contains("3 saves since the last checkpoint"), text.stdout)
        XCTAssertTrue(text.stdout.contains("save 2 at log offset"), text.stdout)
        XCTAssertTrue(text.stdout.contains("  deleted Book/p4"), text.stdout)
        XCTAssertTrue(text.stdout.contains("commit"), text.stdout)

        let empty = try CLI.run(["log", try CLI.libraryStore(closed: true)])
        XCTAssertEqual(empty.status, 0)
        XCTAssertTrue(empty.stdout.contains("64 bytes, 0 saves since the last checkpoint"), empty.stdout)
    }

    func testHistoryListsTransactionsWithTheirChanges() throws {
        let path = CLI.temporaryFolder().appendingPathComponent("History.store").path
        var options = BinaryStoreOptions()
        options.recordsHistory = true
        let store = try BinaryStore(path: path, model: CLI.model, metadata: StoreMetadata(), options: options)
        var insert = StoreChangeSet(inserted: [CLI.author(1, "Ada Lovelace", books: []), CLI.author(2, "Alan Turing", books: [])])
        insert.history = StoreHistoryContext(author: "importer", contextName: "background")
        _ = try store.save(insert)
        var delete = StoreChangeSet(deleted: [(StoreObjectID(entityName: "Author", primaryKey: 2), 1)])
        delete.history = StoreHistoryContext(author: "app")
        _ = try store.save(delete)
        try store.close()

        let text = try CLI.run(["history", path])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("2 transactions shown, first kept 1, last 2"), text.stdout)
        XCTAssertTrue(text.stdout.contains("transaction 1 at "), text.stdout)
        XCTAssertTrue(text.stdout.contains("author importer, context background"), text.stdout)
        XCTAssertTrue(text.stdout.contains("  inserted Author/p1"), text.stdout)
        XCTAssertTrue(text.stdout.contains("  deleted Author/p2"), text.stdout)
        let json = try CLI.json(try CLI.run(["history", path, "--after", "1", "--json"]).stdout)
        let transactions = json["transactions"] as? [[String: Any]] ?? []
        XCTAssertEqual(transactions.map { $0["number"] as? Int }, [2])
        XCTAssertEqual(transactions.first?["author"] as? String, "app")
        XCTAssertEqual(json["lastNumber"] as? Int, 2)
        let empty = try CLI.run(["history", try CLI.libraryStore(closed: true)])
        XCTAssertEqual(empty.status, 0)
        XCTAssertTrue(empty.stdout.contains("0 transactions shown, first kept 1, last 0"), empty.stdout)
    }

    func testPagesListsEveryPageWithItsCompression() throws {
        let path = try CLI.libraryStore(closed: true)
        let json = try CLI.json(try CLI.run(["pages", path, "--json"]).stdout)
        let pages = json["pages"] as? [[String: Any]] ?? []
        XCTAssertEqual(pages.first?["offset"] as? Int, 4_096)
        XCTAssertEqual(pages.first?["kind"] as? String, "catalog page")
        let data = pages.filter { $0["kind"] as? String == "data page" }
        XCTAssertEqual(data.count, 1)
        XCTAssertEqual(data.first?["records"] as? Int, 7, "the checkpoint copied the 6 current records and book 4's tombstone")
        XCTAssertEqual(data.first?["live"] as? Int, 6)
        var end = 4_096
        for page in pages {
            XCTAssertEqual(page["offset"] as? Int, end, "pages follow each other")
            end += 32 + (page["storedBytes"] as? Int ?? 0)
        }
        XCTAssertEqual(end, try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let text = try CLI.run(["pages", path])
        XCTAssertTrue(text.stdout.hasPrefix("offset  kind"), text.stdout)
        XCTAssertTrue(text.stdout.contains("\(pages.count) pages,"), text.stdout)
    }

    func testModelPrintsEveryVersionWithHashesConstraintsAndIndexes() throws {
        let folder = CLI.temporaryFolder()
        let package = folder.appendingPathComponent("Library.xcdatamodeld")
        let source = URL(fileURLWithPath: CLI.modelPath).appendingPathComponent("Library.xcdatamodel")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: source, to: package.appendingPathComponent("Library.xcdatamodel"))
        let second = package.appendingPathComponent("Library 2.xcdatamodel")
        try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
        let contents = try String(contentsOf: source.appendingPathComponent("contents"), encoding: .utf8)
            .replacingOccurrences(of: "<attribute name=\"isbn\"", with: "<attribute name=\"edition\" optional=\"YES\" attributeType=\"Integer 16\" usesScalarValueType=\"YES\"/>\n        <attribute name=\"isbn\"")
        try contents.write(to: second.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let plist = try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "Library 2.xcdatamodel"], format: .xml, options: 0)
        try plist.write(to: package.appendingPathComponent(".xccurrentversion"))

        let json = try CLI.json(try CLI.run(["model", package.path, "--json"]).stdout)
        let versions = json["versions"] as? [[String: Any]] ?? []
        XCTAssertEqual(versions.map { $0["name"] as? String }, ["Library", "Library 2"])
        XCTAssertEqual(versions.map { $0["current"] as? Bool }, [false, true])
        let book = (versions.last?["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Book" }
        XCTAssertTrue((book?["attributes"] as? [[String: Any]])?.contains { $0["name"] as? String == "edition" && $0["type"] as? String == "Integer 16" } == true)
        XCTAssertEqual(book?["versionHash"] as? String != nil, true)
        XCTAssertEqual((book?["indexes"] as? [[String: Any]])?.first?["name"] as? String, "byTitle")
        let author = (versions.first?["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Author" }
        XCTAssertEqual(author?["uniquenessConstraints"] as? [[String]], [["name"]])
        XCTAssertEqual(author?["versionHash"] as? String, CLI.model.entitiesByName["Author"]?.versionHash.base64EncodedString())
        let books = (author?["relationships"] as? [[String: Any]])?.first
        XCTAssertEqual(books?["destination"] as? String, "Book")
        XCTAssertEqual(books?["inverse"] as? String, "author")
        XCTAssertEqual(books?["toMany"] as? Bool, true)

        let text = try CLI.run(["model", package.path])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("version Library 2 (current)"))
        XCTAssertTrue(text.stdout.contains("unique (name)"))
        XCTAssertTrue(text.stdout.contains("index byTitle"))
        let one = try CLI.run(["model", package.path, "--model-version", "Library"])
        XCTAssertFalse(one.stdout.contains("Library 2"), one.stdout)
        assertFailure(try CLI.run(["model", package.path, "--model-version", "Library 9"]), status: 6, mentions: "has no version Library 9")
    }
}
