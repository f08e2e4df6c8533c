import CoreData
import Foundation
import XCTest

/// `info`, `verify` and `dump` on XML stores, the binary-only commands refusing them, and damaged
/// XML stores, run as a process.
final class CLIXMLStoreTests: XCTestCase {
    /// Objects as JSON Lines, keyed by ID.
    private func dumpLines(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: [String: Any]] {
        let result = try CLI.run(["dump"] + arguments + ["--format", "jsonl"])
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        var objects: [String: [String: Any]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let object = try CLI.json(String(line))
            objects[object["id"] as? String ?? "?"] = object
        }
        return objects
    }

    /// The 1-based line holding byte `offset` of `bytes`.
    private func line(of offset: Int, in bytes: [UInt8]) -> Int {
        bytes[..<offset].filter { $0 == 0x0A }.count + 1
    }

    func testInfoShowsTheDatabaseInfoObjectsPerEntitySizeAndMetadata() throws {
        let path = try CLI.xmlLibraryStore()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let uuid = try XCTUnwrap(text.range(of: "<UUID>").flatMap { start in text.range(of: "</UUID>").map { String(text[start.upperBound..<$0.lowerBound]) } })
        let info = try CLI.json(try CLI.run(["info", path, "--json"]).stdout)
        XCTAssertEqual(info["format"] as? String, "xml")
        XCTAssertEqual(info["formatVersion"] as? Int, 134_481_920)
        XCTAssertEqual(info["storeUUID"] as? String, uuid)
        XCTAssertEqual(info["nextObjectID"] as? Int, 6)
        XCTAssertEqual(info["objects"] as? Int, 6)
        XCTAssertEqual(info["objectsByEntity"] as? [String: Int], ["Author": 3, "Book": 3])
        XCTAssertEqual(info["fileBytes"] as? Int, try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let metadata = info["metadata"] as? [String: Any]
        XCTAssertEqual((metadata?["NSStoreModelVersionHashes"] as? [String: String])?["Book"], CLI.model.entitiesByName["Book"]?.versionHash.base64EncodedString())
        XCTAssertEqual(metadata?["NSStoreType"] as? String, "XML")
        XCTAssertEqual(metadata?["NSStoreUUID"] as? String, uuid)

        let lines = try CLI.run(["info", path])
        XCTAssertEqual(lines.status, 0, lines.stderr)
        XCTAssertTrue(lines.stdout.contains("format           XML store, version 134481920"), lines.stdout)
        XCTAssertTrue(lines.stdout.contains("objects          6 (Author 3, Book 3)"), lines.stdout)
        XCTAssertTrue(lines.stdout.contains("next object ID   6"), lines.stdout)
    }

    func testVerifyPassesAnIntactXMLStoreWithAndWithoutTheModel() throws {
        let path = try CLI.xmlLibraryStore()
        for extra in [[], ["--model", CLI.modelPath]] {
            let result = try CLI.run(["verify", path] + extra)
            XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
            XCTAssertTrue(result.stdout.hasPrefix("intact: 6 objects, XML store of "), result.stdout)
            XCTAssertEqual(result.stderr, "")
            let json = try CLI.json(try CLI.run(["verify", path, "--json"] + extra).stdout)
            XCTAssertEqual(json["intact"] as? Bool, true)
            XCTAssertEqual((json["issues"] as? [Any])?.count, 0)
            XCTAssertEqual(json["objectsByEntity"] as? [String: Int], ["Author": 3, "Book": 3])
        }
        let binary = try CLI.libraryStore(closed: true)
        assertFailure(try CLI.run(["verify", binary, "--model", CLI.modelPath]), status: 7, mentions: "--model applies to XML stores only")
    }

    func testDumpWithoutAModelReadsWhatTheFileDescribes() throws {
        let path = try CLI.xmlLibraryStore()
        let objects = try dumpLines([path])
        // One counter for the whole store (Formats/xml-store.md §5): authors 1–3, books 4–6.
        XCTAssertEqual(objects.keys.sorted(), ["Author/p1", "Author/p2", "Author/p3", "Book/p4", "Book/p5", "Book/p6"])
        let book5 = objects["Book/p5"]?["values"] as? [String: Any]
        XCTAssertEqual(book5?["title"] as? String, "The Art of Computer Programming")
        XCTAssertEqual(book5?["pages"] as? Int, 700)
        XCTAssertEqual(book5?["author"] as? String, "Author/p2")
        XCTAssertEqual(objects["Book/p5"]?["version"] as? Int, 1)
        XCTAssertEqual((objects["Author/p2"]?["values"] as? [String: Any])?["books"] as? [String], ["Book/p5", "Book/p6"])
        XCTAssertEqual((objects["Author/p3"]?["values"] as? [String: Any])?["books"] as? [String], [])
        XCTAssertNil((objects["Author/p1"]?["values"] as? [String: Any])?["born"], "without a model, absent values are left out")

        XCTAssertEqual(try dumpLines([path, "--entity", "Book", "--where", "pages > 300"]).keys.sorted(), ["Book/p5", "Book/p6"])
        XCTAssertEqual(try dumpLines([path, "--where", "author.name == 'Ada Lovelace'"]).keys.sorted(), ["Book/p4"])
        XCTAssertEqual(try dumpLines([path, "--limit", "4"]).keys.sorted(), ["Author/p1", "Author/p2", "Author/p3", "Book/p4"])
        assertFailure(try CLI.run(["dump", path, "--entity", "Magazine"]), status: 5, mentions: "the store has no such entity (it has Author, Book)")
        assertFailure(try CLI.run(["dump", path, "--where", "pages >"]), status: 5, mentions: "bad predicate for --where")

        let xml = try CLI.run(["dump", path, "--format", "xml", "--entity", "Book"])
        XCTAssertEqual(xml.status, 0, xml.stderr)
        XCTAssertTrue(xml.stdout.contains("<object entity=\"Book\" id=\"Book/p5\" version=\"1\">"), xml.stdout)
        XCTAssertTrue(xml.stdout.contains("<attribute name=\"pages\" type=\"integer\">700</attribute>"), xml.stdout)
        XCTAssertTrue(xml.stdout.contains("<relationship name=\"author\"><ref id=\"Author/p2\"/></relationship>"), xml.stdout)
        let table = try CLI.run(["dump", path])
        XCTAssertEqual(table.status, 0, table.stderr)
        XCTAssertTrue(table.stdout.contains("Book (3 objects)"), table.stdout)
        XCTAssertTrue(table.stdout.split(separator: "\n").contains { $0.hasPrefix("Book/p5") && $0.contains("700") }, table.stdout)
    }

    func testDumpWithTheModelShowsEveryPropertyAndRefusesAModelThatDoesNotMatch() throws {
        let path = try CLI.xmlLibraryStore()
        let objects = try dumpLines([path, "--model", CLI.modelPath])
        XCTAssertEqual(objects.count, 6)
        let ada = objects["Author/p1"]?["values"] as? [String: Any]
        XCTAssertEqual(ada?["name"] as? String, "Ada Lovelace")
        XCTAssertTrue(ada?["born"] is NSNull, "with a model, absent attributes print as null")
        XCTAssertEqual(try dumpLines([path, "--model", CLI.modelPath, "--entity", "Book", "--where", "pages >= 368 AND pages < 700"]).keys.sorted(), ["Book/p6"])

        let other = CLI.temporaryFolder().appendingPathComponent("Other.xcdatamodel")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try String(contentsOf: URL(fileURLWithPath: CLI.modelPath).appendingPathComponent("Library.xcdatamodel/contents"), encoding: .utf8)
            .replacingOccurrences(of: "<attribute name=\"isbn\"", with: "<attribute name=\"edition\" optional=\"YES\" attributeType=\"Integer 16\" usesScalarValueType=\"YES\"/>\n        <attribute name=\"isbn\"")
            .write(to: other.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        assertFailure(try CLI.run(["dump", path, "--model", other.path]), status: 6, mentions: "does not match \(path): entity Book differs")
        assertFailure(try CLI.run(["verify", path, "--model", other.path]), status: 6, mentions: "does not match")
    }

    /// An XML store Apple wrote (Xcode's xcmapping.xml, a fixture of the model tests): read without
    /// its model, subentities inferred from the references (XDDevEntityMapping's property
    /// mappings point at XDDevPropertyMapping, objects are its subentities), the file unchanged.
    func testAnXMLStoreAppleWroteReadsWithoutItsModel() throws {
        let fixture = CLI.packageRoot.appendingPathComponent("Tests/CoreDataModelTests/Fixtures/models/CoreDataPlus/V2toV3.xcmappingmodel/xcmapping.xml").path
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture))
        let verify = try CLI.run(["verify", fixture])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stdout.hasPrefix("intact: 32 objects"), verify.stdout)
        let info = try CLI.json(try CLI.run(["info", fixture, "--json"]).stdout)
        XCTAssertEqual(info["objectsByEntity"] as? [String: Int], ["XDDevAttributeMapping": 14, "XDDevEntityMapping": 5, "XDDevMappingModel": 1, "XDDevRelationshipMapping": 12])
        XCTAssertEqual(info["nextObjectID"] as? Int, 133)
        let numberPlates = try CLI.run(["dump", fixture, "--where", "name == 'numberPlate'", "--format", "jsonl"])
        XCTAssertEqual(numberPlates.status, 0, numberPlates.stderr)
        let ids = try numberPlates.stdout.split(separator: "\n").map { try CLI.json(String($0))["id"] as? String }
        XCTAssertEqual(ids, ["XDDevAttributeMapping/p110", "XDDevAttributeMapping/p114", "XDDevAttributeMapping/p130"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fixture)), before)
    }

    /// log, pages, checkpoint and compact: one line, status 7, and the file untouched.
    func testTheBinaryOnlyCommandsSayAnXMLStoreHasNoLogOrPages() throws {
        let path = try CLI.xmlLibraryStore()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        let before = try CLI.snapshot(folder)
        for (command, lacks) in [("log", "has no log"), ("pages", "has no pages"), ("checkpoint", "has no log to checkpoint"), ("compact", "keeps no old versions to compact")] {
            for extra in [[], ["--json"]] {
                let result = try CLI.run([command, path] + extra)
                assertFailure(result, status: 7, mentions: "\(path) is an XML store, which \(lacks): it is rewritten whole on every save")
                XCTAssertEqual(result.stdout, "")
            }
        }
        let after = try CLI.snapshot(folder)
        XCTAssertEqual(after.keys.sorted(), before.keys.sorted())
        for (name, (bytes, modified)) in before {
            XCTAssertEqual(after[name]?.0, bytes, name)
            XCTAssertEqual(after[name]?.1, modified, name)
        }
    }

    func testReadingAnXMLStoreChangesNothing() throws {
        let path = try CLI.xmlLibraryStore()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        let before = try CLI.snapshot(folder)
        let commands: [[String]] = [
            ["info"], ["info", "--json"], ["verify"], ["verify", "--json"], ["verify", "--model", CLI.modelPath], ["dump"],
            ["dump", "--format", "jsonl"], ["dump", "--format", "xml"], ["dump", "--where", "pages > 100"], ["dump", "--model", CLI.modelPath],
        ]
        for command in commands {
            let result = try CLI.run([command[0], path] + command.dropFirst())
            XCTAssertEqual(result.status, 0, "\(command): \(result.stderr)")
            let after = try CLI.snapshot(folder)
            XCTAssertEqual(after.keys.sorted(), before.keys.sorted(), "\(command) added or removed a file")
            for (name, (bytes, modified)) in before {
                XCTAssertEqual(after[name]?.0, bytes, "\(command) changed \(name)")
                XCTAssertEqual(after[name]?.1, modified, "\(command) touched \(name)")
            }
        }
    }

    /// A flipped byte in the markup, a value that does not parse, a dangling reference and an
    /// unknown entity: verify lists each with its line and exits 1; dump and info refuse.
    func testADamagedXMLStoreIsReportedWithItsLines() throws {
        let path = try CLI.xmlLibraryStore()
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let text = String(decoding: original, as: UTF8.self)
        let folder = CLI.temporaryFolder()

        // A flipped byte in an element name: malformed XML, reported where it is.
        let flipped = folder.appendingPathComponent("Flipped.xml").path
        let offset = try XCTUnwrap(text.utf8.firstRange(of: "<attribute name=\"title\"".utf8)).lowerBound
        var bytes = original
        let at = text.utf8.distance(from: text.utf8.startIndex, to: offset) + 5
        bytes[at] ^= 0x5A
        try Data(bytes).write(to: URL(fileURLWithPath: flipped))
        let flippedLine = line(of: at, in: bytes)
        try checkDamaged(flipped, lines: [flippedLine])

        // Three problems past the reader: each listed, in line order.
        var lines = text.components(separatedBy: "\n")
        let pages = try XCTUnwrap(lines.firstIndex { $0.contains(">700<") })
        lines[pages] = lines[pages].replacingOccurrences(of: ">700<", with: ">7x0<")
        let reference = try XCTUnwrap(lines.firstIndex { $0.contains("idrefs=\"z1\"") })
        lines[reference] = lines[reference].replacingOccurrences(of: "idrefs=\"z1\"", with: "idrefs=\"z99\"")
        let object = try XCTUnwrap(lines.firstIndex { $0.contains("id=\"z6\"") })
        lines[object] = lines[object].replacingOccurrences(of: "type=\"BOOK\"", with: "type=\"BOOX\"")
        // Knuth's books then name an object that is no longer valid: reported too.
        let knuth = try XCTUnwrap(lines.firstIndex { $0.contains("idrefs=\"z5 z6\"") })
        let several = folder.appendingPathComponent("Several.xml").path
        try lines.joined(separator: "\n").write(toFile: several, atomically: true, encoding: .utf8)
        let verify = try checkDamaged(several, lines: [knuth + 1, pages + 1, reference + 1, object + 1])
        XCTAssertTrue(verify.contains("'7x0' is not a valid int32"), verify)
        XCTAssertTrue(verify.contains("refers to z99, which is no object in the file"), verify)
        XCTAssertTrue(verify.contains("refers to z6, which is no object in the file"), verify)
        XCTAssertTrue(verify.contains("has type 'BOOX', which is no entity the metadata's NSStoreModelVersionHashes lists (Author, Book)"), verify)
        let json = try CLI.json(try CLI.run(["verify", several, "--json"]).stdout)
        XCTAssertEqual(json["intact"] as? Bool, false)
        XCTAssertTrue(((json["issues"] as? [[String: Any]]) ?? []).contains { $0["location"] as? String == "line \(pages + 1)" })
        // A misspelt property name reads as another property without the model; the model catches it.
        let misspelt = folder.appendingPathComponent("Misspelt.xml").path
        try text.replacingOccurrences(of: "name=\"pages\"", with: "name=\"pagez\"").write(toFile: misspelt, atomically: true, encoding: .utf8)
        XCTAssertEqual(try CLI.run(["verify", misspelt]).status, 0)
        let withModel = try CLI.run(["verify", misspelt, "--model", CLI.modelPath])
        XCTAssertEqual(withModel.status, 1, withModel.stdout)
        XCTAssertTrue(withModel.stdout.contains("entity 'Book' has no attribute 'pagez'"), withModel.stdout)
    }

    func testATruncatedXMLStoreIsReportedWithTheLineItEndsOn() throws {
        let path = try CLI.xmlLibraryStore()
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let folder = CLI.temporaryFolder()
        for length in [60, 400, original.count / 2, original.count - 20, original.count - 2] {
            let cut = folder.appendingPathComponent("cut-\(length).xml").path
            try Data(original.prefix(length)).write(to: URL(fileURLWithPath: cut))
            try checkDamaged(cut, lines: [line(of: length - 1, in: original)])
        }
    }

    /// verify exits 1 naming each line; dump and info exit 1 with one line naming the first and
    /// print nothing.
    @discardableResult
    private func checkDamaged(_ path: String, lines: [Int], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let verify = try CLI.run(["verify", path])
        XCTAssertEqual(verify.status, 1, verify.stdout + verify.stderr, file: file, line: line)
        let damaged = verify.stdout.split(separator: "\n").filter { $0.hasPrefix("damaged: ") }
        XCTAssertEqual(damaged.count, lines.count, verify.stdout, file: file, line: line)
        for expected in lines {
            XCTAssertTrue(damaged.contains { $0.hasPrefix("damaged: line \(expected): ") }, "line \(expected) not in \(verify.stdout)", file: file, line: line)
        }
        assertFailure(verify, status: 1, mentions: "\(path) is damaged: \(lines.count) damaged location", file: file, line: line)
        for command in [["dump"], ["dump", "--format", "jsonl"], ["dump", "--model", CLI.modelPath], ["info"]] {
            let result = try CLI.run([command[0], path] + command.dropFirst())
            assertFailure(result, status: 1, mentions: "\(path) is damaged: line ", file: file, line: line)
            XCTAssertTrue(lines.contains { result.stderr.contains("is damaged: line \($0): ") }, "\(command): \(result.stderr)", file: file, line: line)
            XCTAssertEqual(result.stdout, "", "\(command) printed from a damaged store", file: file, line: line)
        }
        return verify.stdout
    }
}
