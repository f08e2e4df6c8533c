import CoreData
import CoreDataBinaryStore
import CoreDataStorage
import Foundation
import XCTest

/// `convert`, run as a process: binary → XML → binary keeps every object and value, and bad
/// input is refused with the documented status and no destination left behind.
final class CLIConvertTests: XCTestCase {
    /// The objects of a store as `dump --format jsonl --model` prints them, with IDs replaced by
    /// each object's name or title, since every conversion renumbers objects (to-many
    /// relationships are unordered in the Library model, so their lists are sorted).
    private func canonicalObjects(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let result = try CLI.run(["dump", path, "--format", "jsonl", "--model", CLI.modelPath])
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        let objects = try result.stdout.split(separator: "\n").map { try CLI.json(String($0)) }
        var labels: [String: String] = [:]
        for object in objects {
            let values = object["values"] as? [String: Any] ?? [:]
            labels[object["id"] as? String ?? ""] = "\(object["entity"] as? String ?? "")(\(values["name"] as? String ?? values["title"] as? String ?? "?"))"
        }
        return objects.map { object in
            let values = object["values"] as? [String: Any] ?? [:]
            let described = values.keys.sorted().map { key -> String in
                switch values[key] {
                case let id as String where labels[id] != nil: return "\(key)=\(labels[id] ?? "")"
                case let ids as [String]: return "\(key)=[\(ids.map { labels[$0] ?? $0 }.sorted().joined(separator: ","))]"
                case let value?: return "\(key)=\(value)"
                case nil: return "\(key)=nil"
                }
            }
            return "\(labels[object["id"] as? String ?? ""] ?? "?") \(described.joined(separator: " "))"
        }.sorted()
    }

    func testBinaryToXMLToBinaryKeepsEveryObjectAndValue() throws {
        let source = try CLI.libraryStore(closed: false)
        let folder = URL(fileURLWithPath: source).deletingLastPathComponent()
        let sourceFiles = try CLI.snapshot(folder)
        let xml = folder.appendingPathComponent("Library.xml").path
        let toXML = try CLI.run(["convert", source, xml, "--to", "xml", "--model", CLI.modelPath, "--json"])
        XCTAssertEqual(toXML.status, 0, toXML.stderr)
        let report = try CLI.json(toXML.stdout)
        XCTAssertEqual(report["sourceFormat"] as? String, "binary")
        XCTAssertEqual(report["format"] as? String, "xml")
        XCTAssertEqual(report["objects"] as? Int, 6)
        XCTAssertEqual(report["objectsByEntity"] as? [String: Int], ["Author": 3, "Book": 3])
        let after = try CLI.snapshot(folder)
        for (name, (bytes, modified)) in sourceFiles {
            XCTAssertEqual(after[name]?.0, bytes, "convert changed the source's \(name)")
            XCTAssertEqual(after[name]?.1, modified, "convert touched the source's \(name)")
        }
        XCTAssertEqual(try CLI.json(try CLI.run(["info", xml, "--json"]).stdout)["format"] as? String, "xml")
        XCTAssertEqual(try CLI.run(["verify", xml, "--model", CLI.modelPath]).status, 0)

        let back = folder.appendingPathComponent("Back.store").path
        let toBinary = try CLI.run(["convert", xml, back, "--to", "binary", "--model", CLI.modelPath])
        XCTAssertEqual(toBinary.status, 0, toBinary.stderr)
        XCTAssertEqual(toBinary.stdout, "converted \(xml) (xml) to \(back) (binary): 6 objects copied\n  Author  3\n  Book    3\n")
        XCTAssertEqual(try CLI.run(["verify", back]).status, 0)

        let original = try canonicalObjects(source)
        XCTAssertEqual(original.count, 6)
        XCTAssertTrue(original.contains("Book(The Art of Computer Programming) author=Author(Donald Knuth) isbn=<null> pages=700 title=The Art of Computer Programming"), "\(original)")
        XCTAssertTrue(original.contains("Author(Donald Knuth) books=[Book(Literate Programming),Book(The Art of Computer Programming)] born=<null> name=Donald Knuth"), "\(original)")
        XCTAssertEqual(try canonicalObjects(xml), original)
        XCTAssertEqual(try canonicalObjects(back), original)
        // Back in a binary store, objects are numbered per entity again, in the same order.
        let ids = try CLI.run(["dump", back, "--format", "jsonl"]).stdout.split(separator: "\n").map { try CLI.json(String($0))["id"] as? String }
        XCTAssertEqual(ids, ["Author/p1", "Author/p2", "Author/p3", "Book/p1", "Book/p2", "Book/p3"])
        // The copies record the model's version hashes, so the app's model opens them.
        let metadata = try CLI.json(try CLI.run(["info", back, "--json"]).stdout)["metadata"] as? [String: Any]
        XCTAssertEqual((metadata?["NSStoreModelVersionHashes"] as? [String: String])?["Author"], CLI.model.entitiesByName["Author"]?.versionHash.base64EncodedString())
    }

    func testConvertRefusesBadInputAndLeavesNoDestination() throws {
        let source = try CLI.libraryStore(closed: true)
        let folder = URL(fileURLWithPath: source).deletingLastPathComponent()
        let destination = folder.appendingPathComponent("Copy.xml").path
        func convert(_ from: String, _ to: String, _ extra: [String] = ["--to", "xml", "--model", CLI.modelPath]) throws -> CLIResult {
            try CLI.run(["convert", from, to] + extra)
        }

        assertFailure(try convert(folder.appendingPathComponent("Nope.store").path, destination), status: 2, mentions: "no such file")
        let notAStore = folder.appendingPathComponent("notes.txt").path
        try "hello\n".write(toFile: notAStore, atomically: true, encoding: .utf8)
        assertFailure(try convert(notAStore, destination), status: 3, mentions: "is not a store")

        let existing = folder.appendingPathComponent("Existing.xml").path
        try "keep me\n".write(toFile: existing, atomically: true, encoding: .utf8)
        assertFailure(try convert(source, existing), status: 8, mentions: "\(existing) already exists; convert never overwrites a file")
        XCTAssertEqual(try String(contentsOfFile: existing, encoding: .utf8), "keep me\n")
        try "log\n".write(toFile: folder.appendingPathComponent("Stale.store-wal").path, atomically: true, encoding: .utf8)
        assertFailure(try convert(source, folder.appendingPathComponent("Stale.store").path, ["--to", "binary", "--model", CLI.modelPath]), status: 8, mentions: "Stale.store-wal already exists")
        assertFailure(try convert(source, folder.appendingPathComponent("no/such/folder.xml").path), status: 2, mentions: "no such folder")

        XCTAssertEqual(try convert(source, destination, ["--to", "csv", "--model", CLI.modelPath]).status, 64)
        XCTAssertEqual(try convert(source, destination, ["--model", CLI.modelPath]).status, 64)
        XCTAssertEqual(try convert(source, destination, ["--to", "xml"]).status, 64, "--model is required")

        let other = folder.appendingPathComponent("Other.xcdatamodel")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try String(contentsOf: URL(fileURLWithPath: CLI.modelPath).appendingPathComponent("Library.xcdatamodel/contents"), encoding: .utf8)
            .replacingOccurrences(of: "<attribute name=\"isbn\"", with: "<attribute name=\"edition\" optional=\"YES\" attributeType=\"Integer 16\" usesScalarValueType=\"YES\"/>\n        <attribute name=\"isbn\"")
            .write(to: other.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        assertFailure(try convert(source, destination, ["--to", "xml", "--model", other.path]), status: 6, mentions: "does not match \(source): entity Book differs")
        let xml = try CLI.xmlLibraryStore()
        assertFailure(try convert(xml, folder.appendingPathComponent("FromXML.store").path, ["--to", "binary", "--model", other.path]), status: 6, mentions: "entity Book differs")

        // A source a writer has open alone: refused at once, as the other commands refuse it.
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        options.exclusiveAccess = true
        let writer = try BinaryStore(path: source, model: CLI.model, metadata: StoreMetadata(), options: options)
        assertFailure(try convert(source, destination), status: 4, mentions: "is locked by another process")
        try writer.close()

        // A damaged source: the first damage, and nothing written.
        let damaged = folder.appendingPathComponent("Damaged.xml").path
        try String(contentsOfFile: xml, encoding: .utf8).replacingOccurrences(of: ">700<", with: ">7x0<").write(toFile: damaged, atomically: true, encoding: .utf8)
        assertFailure(try convert(damaged, folder.appendingPathComponent("FromDamaged.store").path, ["--to", "binary", "--model", CLI.modelPath]), status: 1, mentions: "is damaged: line ")

        for name in ["Copy.xml", "Stale.store", "FromXML.store", "FromXML.store-wal", "FromDamaged.store", "FromDamaged.store-wal"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path), "\(name) was left behind")
        }
    }

    func testHelpSaysWhyTheModelIsRequired() throws {
        let help = try CLI.run(["convert", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("--model is required"), help.stdout)
        XCTAssertTrue(help.stdout.contains("migratePersistentStore"), help.stdout)
    }
}
