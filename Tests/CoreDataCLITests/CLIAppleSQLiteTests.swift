import CoreData
import Foundation
import XCTest

/// `info`, `verify`, `dump` and `convert` on Apple SQLite stores (Formats/apple-sqlite-store.md),
/// run as a process against the file Core Data saved on an Apple platform
/// (`apple-compiled/SampleModel_V1.sqlite`: 125 cars in three entities, 20 people), each answer
/// checked against the `sqlite3` tool reading the same file; and the binary-only commands
/// refusing it.
final class CLIAppleSQLiteTests: XCTestCase {
    static let fixtures = CLI.packageRoot.appendingPathComponent("Tests/CoreDataModelTests/Fixtures/apple-compiled")
    static let modelPath = CLI.packageRoot.appendingPathComponent("Tests/CoreDataModelTests/Fixtures/models/CoreDataPlus/SampleModel.xcdatamodeld").path
    static let uuid = "753753D3-A961-4901-AB05-8CC48B1D3853"

    /// A writable copy of the V1 fixture (the fixture folder may be read-only) in a new folder.
    private func copyOfVersion1(in folder: URL = CLI.temporaryFolder(), name: String = "SampleModel_V1.sqlite") throws -> String {
        let source = Self.fixtures.appendingPathComponent("SampleModel_V1.sqlite")
        let path = folder.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: source.path, toPath: path)
        // A WAL-mode store is the database and its -wal together; the fixture's log is empty.
        if let log = try? Data(contentsOf: URL(fileURLWithPath: source.path + "-wal")), !log.isEmpty {
            try log.write(to: URL(fileURLWithPath: path + "-wal"))
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        return path
    }

    /// Rows `sqlite3` prints for `sql` (`|`-separated): the independent reader (and, without
    /// `readOnly`, the tool that damages copies).
    @discardableResult
    private func sqlite3(_ path: String, _ sql: String, readOnly: Bool = true, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let result = try CLI.runProcess("/usr/bin/env", ["sqlite3"] + (readOnly ? ["-readonly"] : []) + [path, sql])
        XCTAssertEqual(result.status, 0, "sqlite3 failed: \(result.stderr)", file: file, line: line)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    private func dumpObjects(_ path: String, _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [String: [String: Any]] {
        let result = try CLI.run(["dump", path, "--model", Self.modelPath, "--format", "jsonl"] + extra)
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        var objects: [String: [String: Any]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let object = try CLI.json(String(line))
            objects[object["id"] as? String ?? "?"] = object
        }
        return objects
    }

    // MARK: info

    func testInfoReadsTheStoreWithoutAModel() throws {
        let path = try copyOfVersion1()
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = try CLI.run(["info", path, "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let info = try CLI.json(result.stdout)
        XCTAssertEqual(info["format"] as? String, "sqlite")
        XCTAssertEqual(info["storeUUID"] as? String, Self.uuid)
        XCTAssertEqual(info["storeUUID"] as? String, try sqlite3(path, "SELECT Z_UUID FROM Z_METADATA").first)
        XCTAssertEqual(info["journalMode"] as? String, try sqlite3(path, "PRAGMA journal_mode").first)
        XCTAssertEqual(info["journalMode"] as? String, "wal")
        XCTAssertEqual(info["fileBytes"] as? Int, original.count)

        // Z_PRIMARYKEY, row by row, against sqlite3.
        let entities = try XCTUnwrap(info["entities"] as? [[String: Any]])
        let rows = try sqlite3(path, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        XCTAssertEqual(entities.map { "\($0["number"] as? Int ?? -1)|\($0["name"] as? String ?? "")|\($0["superNumber"] as? Int ?? -1)|\($0["max"] as? Int ?? -1)" }, rows)
        XCTAssertEqual(entities.map { $0["name"] as? String ?? "" }, ["Car", "SportCar", "ExpensiveSportCar", "Person"])
        XCTAssertEqual(entities.map { $0["superentity"] as? String ?? "-" }, ["-", "Car", "SportCar", "-"])
        XCTAssertEqual(entities.map { $0["table"] as? String ?? "" }, ["ZCAR", "ZCAR", "ZCAR", "ZPERSON"])
        var byEntity: [String: Int] = [:]
        for line in try sqlite3(path, "SELECT p.Z_NAME, count(c.Z_PK) FROM Z_PRIMARYKEY p LEFT JOIN (SELECT Z_PK, Z_ENT FROM ZCAR UNION ALL SELECT Z_PK, Z_ENT FROM ZPERSON) c ON c.Z_ENT = p.Z_ENT GROUP BY p.Z_ENT") {
            let fields = line.split(separator: "|").map(String.init)
            byEntity[fields[0]] = Int(fields[1])
        }
        XCTAssertEqual(info["objectsByEntity"] as? [String: Int], byEntity)
        XCTAssertEqual(info["objects"] as? Int, 145)

        // 125 cars (of three entities) in ZCAR, 20 people in ZPERSON.
        let tables = try XCTUnwrap(info["tables"] as? [[String: Any]])
        XCTAssertEqual(tables.map { $0["name"] as? String ?? "" }, ["ZCAR", "ZPERSON"])
        XCTAssertEqual(tables.map { $0["objects"] as? Int ?? -1 }, [125, 20])
        XCTAssertEqual(tables.map { $0["objects"] as? Int ?? -1 }, [
            Int(try sqlite3(path, "SELECT count(*) FROM ZCAR").first ?? "") ?? -2, Int(try sqlite3(path, "SELECT count(*) FROM ZPERSON").first ?? "") ?? -2,
        ])

        // Apple's metadata keys; the version hashes are Apple's, as the compiled model lists them.
        let metadata = try XCTUnwrap(info["metadata"] as? [String: Any])
        XCTAssertEqual(metadata["NSStoreType"] as? String, "SQLite")
        XCTAssertEqual(metadata["NSStoreUUID"] as? String, Self.uuid)
        XCTAssertNotNil(metadata["NSPersistenceFrameworkVersion"])
        XCTAssertNotNil(metadata["NSStoreModelVersionIdentifiers"])
        let hashes = try XCTUnwrap(metadata["NSStoreModelVersionHashes"] as? [String: String])
        let versionInfo = try XCTUnwrap(PropertyListSerialization.propertyList(
            from: Data(contentsOf: Self.fixtures.appendingPathComponent("SampleModel.momd/VersionInfo.plist")), format: nil) as? [String: Any])
        let apple = try XCTUnwrap((versionInfo["NSManagedObjectModel_VersionHashes"] as? [String: Any])?["SampleModel"] as? [String: Data])
        XCTAssertEqual(hashes, apple.mapValues { $0.base64EncodedString() })

        let text = try CLI.run(["info", path])
        XCTAssertEqual(text.status, 0, text.stderr)
        for fragment in [
            "format           Apple SQLite store", "journal mode     wal", "store UUID       \(Self.uuid)",
            "objects          145 (Car 115, ExpensiveSportCar 5, Person 20, SportCar 5)", "tables           ZCAR 125, ZPERSON 20",
            "  1  Car                root, Z_MAX 125, 115 in ZCAR", "  3  ExpensiveSportCar  super 2 SportCar, Z_MAX 0, 5 in ZCAR",
            "  4  Person             root, Z_MAX 20, 20 in ZPERSON", "NSPersistenceFrameworkVersion", "NSStoreModelVersionIdentifiers",
            "    Car  \(hashes["Car"] ?? "?")",
        ] {
            XCTAssertTrue(text.stdout.contains(fragment), "'\(fragment)' not in:\n\(text.stdout)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), original, "info changed the store")
    }

    // MARK: verify

    func testVerifyPassesTheFixtureWithAndWithoutTheModel() throws {
        let path = try copyOfVersion1()
        let plain = try CLI.run(["verify", path])
        XCTAssertEqual(plain.status, 0, plain.stdout + plain.stderr)
        XCTAssertTrue(plain.stdout.contains("intact: 145 objects, Apple SQLite store of "), plain.stdout)
        XCTAssertEqual(plain.stderr, "")
        let checked = try CLI.run(["verify", path, "--model", Self.modelPath])
        XCTAssertEqual(checked.status, 0, checked.stdout + checked.stderr)
        XCTAssertTrue(checked.stdout.contains("every value checked against the model"), checked.stdout)
        let json = try CLI.json(try CLI.run(["verify", path, "--json", "--model", Self.modelPath]).stdout)
        XCTAssertEqual(json["format"] as? String, "sqlite")
        XCTAssertEqual(json["intact"] as? Bool, true)
        XCTAssertEqual((json["issues"] as? [Any])?.count, 0)
        XCTAssertEqual(json["objectsByEntity"] as? [String: Int], ["Car": 115, "SportCar": 5, "ExpensiveSportCar": 5, "Person": 20])

        // Another version's model does not match the tables: a bad model, not damage.
        let other = try CLI.run(["verify", path, "--model", Self.modelPath, "--model-version", "SampleModel2"])
        assertFailure(other, status: 6, mentions: "does not match \(path)")
        XCTAssertEqual(other.stdout, "")
    }

    func testVerifyListsEveryDamagedLocationOfADamagedCopy() throws {
        let folder = CLI.temporaryFolder()
        let path = try copyOfVersion1(in: folder, name: "Damaged.sqlite")
        let car = try XCTUnwrap(try sqlite3(path, "SELECT min(Z_PK) FROM ZCAR WHERE Z_ENT = 1").first)
        try sqlite3(path, "UPDATE ZCAR SET Z_ENT = 99 WHERE Z_PK = \(car)", readOnly: false)
        XCTAssertEqual(try sqlite3(path, "SELECT Z_ENT FROM ZCAR WHERE Z_PK = \(car)"), ["99"])

        let verify = try CLI.run(["verify", path])
        XCTAssertEqual(verify.status, 1, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stdout.contains("damaged: ZCAR Z_PK \(car): Z_ENT is the integer 99, which is no entity of this table (1 Car, 2 SportCar, 3 ExpensiveSportCar)"), verify.stdout)
        assertFailure(verify, status: 1, mentions: "\(path) is damaged: 1 damaged location, the first at ZCAR Z_PK \(car)")
        let json = try CLI.json(try CLI.run(["verify", path, "--json"]).stdout)
        XCTAssertEqual(json["intact"] as? Bool, false)
        XCTAssertEqual((json["issues"] as? [[String: Any]])?.map { $0["location"] as? String ?? "" }, ["ZCAR Z_PK \(car)"])

        // More damage: a key counter below the table's keys, and (seen only with the model) a
        // text column holding a blob and a reference to a row that is gone (a note).
        let other = try XCTUnwrap(try sqlite3(path, "SELECT max(Z_PK) FROM ZCAR WHERE Z_ENT = 1").first)
        let owned = try XCTUnwrap(try sqlite3(path, "SELECT min(Z_PK) FROM ZCAR WHERE ZOWNER IS NOT NULL AND Z_ENT = 2").first)
        try sqlite3(path, """
            UPDATE Z_PRIMARYKEY SET Z_MAX = 100 WHERE Z_NAME = 'Car';
            UPDATE ZCAR SET ZMAKER = x'00FF' WHERE Z_PK = \(other);
            UPDATE ZCAR SET ZOWNER = 999 WHERE Z_PK = \(owned);
            """, readOnly: false)
        let plain = try CLI.run(["verify", path])
        XCTAssertEqual(plain.stdout.split(separator: "\n").filter { $0.hasPrefix("damaged: ") }.count, 2, plain.stdout)
        XCTAssertTrue(plain.stdout.contains("damaged: Z_PRIMARYKEY Z_ENT 1: Z_MAX of 'Car' is 100, below the largest Z_PK 125 of ZCAR"), plain.stdout)
        let checked = try CLI.run(["verify", path, "--model", Self.modelPath])
        let damaged = checked.stdout.split(separator: "\n").filter { $0.hasPrefix("damaged: ") }
        XCTAssertEqual(damaged.count, 3, checked.stdout)
        XCTAssertTrue(checked.stdout.contains("damaged: ZCAR Z_PK \(other) ZMAKER: holds a blob of 2 bytes, which is not a valid String for 'Car.maker'"), checked.stdout)
        XCTAssertTrue(checked.stdout.contains("note: ZCAR Z_PK \(owned) ZOWNER: 'SportCar.owner' refers to ZPERSON Z_PK 999, which is no row"), checked.stdout)
        assertFailure(checked, status: 1, mentions: "is damaged: 3 damaged locations")

        // dump and convert refuse the damaged store and print nothing.
        let dump = try CLI.run(["dump", path, "--model", Self.modelPath])
        assertFailure(dump, status: 1, mentions: "\(path) is damaged: ZCAR Z_PK \(car): Z_ENT is the integer 99")
        XCTAssertEqual(dump.stdout, "")
        let destination = folder.appendingPathComponent("Copy.store").path
        assertFailure(try CLI.run(["convert", path, destination, "--to", "binary", "--model", Self.modelPath]), status: 1, mentions: "is damaged")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
    }

    // MARK: dump

    func testDumpPrintsEveryObjectWithTheSourceModel() throws {
        let path = try copyOfVersion1()
        let objects = try dumpObjects(path)
        XCTAssertEqual(objects.count, 145)
        let entityNames = ["1": "Car", "2": "SportCar", "3": "ExpensiveSportCar"]
        let cars = try sqlite3(path, "SELECT Z_PK, Z_ENT, ZMAKER, ZMODEL, ZNUMBERPLATE, coalesce(ZOWNER, ''), coalesce(ZISLIMITEDEDITION, '') FROM ZCAR")
        XCTAssertEqual(cars.count, 125)
        for line in cars {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            let id = "\(entityNames[fields[1]] ?? "?")/p\(fields[0])"
            let object = try XCTUnwrap(objects[id], "\(id) is not in the dump")
            let values = try XCTUnwrap(object["values"] as? [String: Any])
            XCTAssertEqual(object["entity"] as? String, entityNames[fields[1]])
            XCTAssertEqual(values["maker"] as? String, fields[2], id)
            XCTAssertEqual(values["model"] as? String, fields[3], id)
            XCTAssertEqual(values["numberPlate"] as? String, fields[4], id)
            XCTAssertEqual(values["owner"] as? String ?? "", fields[5].isEmpty ? "" : "Person/p\(fields[5])", id)
            if fields[1] == "3" { XCTAssertEqual((values["isLimitedEdition"] as? Bool).map { $0 ? "1" : "0" }, fields[6], id) }
        }
        var carsOf: [String: Set<String>] = [:]
        for line in try sqlite3(path, "SELECT ZOWNER, Z_PK, Z_ENT FROM ZCAR WHERE ZOWNER IS NOT NULL") {
            let fields = line.split(separator: "|").map(String.init)
            carsOf["Person/p\(fields[0])", default: []].insert("\(entityNames[fields[2]] ?? "?")/p\(fields[1])")
        }
        for line in try sqlite3(path, "SELECT Z_PK, ZFIRSTNAME, ZLASTNAME FROM ZPERSON") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            let id = "Person/p\(fields[0])"
            let values = try XCTUnwrap(objects[id]?["values"] as? [String: Any], "\(id) is not in the dump")
            XCTAssertEqual(values["firstName"] as? String, fields[1], id)
            XCTAssertEqual(values["lastName"] as? String, fields[2], id)
            XCTAssertEqual(Set(values["cars"] as? [String] ?? []), carsOf[id] ?? [], id)
        }

        // --entity takes the subentities along; --where reads through the relationship.
        XCTAssertEqual(try dumpObjects(path, ["--entity", "SportCar"]).count, 10)
        let owner = try XCTUnwrap(try sqlite3(path, "SELECT p.ZFIRSTNAME, count(*) FROM ZCAR c JOIN ZPERSON p ON p.Z_PK = c.ZOWNER GROUP BY p.Z_PK ORDER BY p.Z_PK LIMIT 1").first)
        let parts = owner.split(separator: "|").map(String.init)
        XCTAssertEqual(try dumpObjects(path, ["--entity", "Car", "--where", "owner.firstName == '\(parts[0])'"]).count, Int(parts[1]))

        // Without a model there is nothing to read the columns with.
        let bare = try CLI.run(["dump", path])
        assertFailure(bare, status: 64, mentions: "dump needs --model")
        XCTAssertEqual(bare.stdout, "")
    }

    // MARK: convert

    func testConvertToBinaryAndBackToSQLiteKeepsEveryObject() throws {
        let folder = CLI.temporaryFolder()
        let source = try copyOfVersion1(in: folder)
        let original = try Data(contentsOf: URL(fileURLWithPath: source))
        let binary = folder.appendingPathComponent("Cars.store").path
        let toBinary = try CLI.run(["convert", source, binary, "--to", "binary", "--model", Self.modelPath, "--json"])
        XCTAssertEqual(toBinary.status, 0, toBinary.stderr)
        let report = try CLI.json(toBinary.stdout)
        XCTAssertEqual(report["sourceFormat"] as? String, "sqlite")
        XCTAssertEqual(report["objects"] as? Int, 145)
        XCTAssertEqual(report["objectsByEntity"] as? [String: Int], ["Car": 115, "SportCar": 5, "ExpensiveSportCar": 5, "Person": 20])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: source)), original, "convert changed the source")
        XCTAssertEqual(try CLI.run(["verify", binary]).status, 0)

        let back = folder.appendingPathComponent("Cars.sqlite").path
        let toSQLite = try CLI.run(["convert", binary, back, "--to", "sqlite", "--model", Self.modelPath])
        XCTAssertEqual(toSQLite.status, 0, toSQLite.stderr)
        XCTAssertTrue(toSQLite.stdout.hasPrefix("converted \(binary) (binary) to \(back) (sqlite): 145 objects copied"), toSQLite.stdout)

        // The result, read by sqlite3: Apple's layout with every object.
        XCTAssertEqual(try sqlite3(back, "PRAGMA integrity_check"), ["ok"])
        XCTAssertEqual(try sqlite3(back, "SELECT Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT"), try sqlite3(source, "SELECT Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT"))
        XCTAssertEqual(try sqlite3(back, "SELECT count(*) FROM ZCAR"), ["125"])
        XCTAssertEqual(try sqlite3(back, "SELECT count(*) FROM ZPERSON"), ["20"])
        let perEntity = "SELECT p.Z_NAME, count(*) FROM ZCAR c JOIN Z_PRIMARYKEY p ON p.Z_ENT = c.Z_ENT GROUP BY p.Z_NAME ORDER BY p.Z_NAME"
        XCTAssertEqual(try sqlite3(back, perEntity), try sqlite3(source, perEntity))
        XCTAssertEqual(try sqlite3(back, perEntity), ["Car|115", "ExpensiveSportCar|5", "SportCar|5"])
        // Objects are renumbered: compare what does not depend on keys.
        let cars = "SELECT c.ZNUMBERPLATE, c.ZMAKER, c.ZMODEL, coalesce(p.ZFIRSTNAME || ' ' || p.ZLASTNAME, '') FROM ZCAR c LEFT JOIN ZPERSON p ON p.Z_PK = c.ZOWNER ORDER BY c.ZNUMBERPLATE"
        XCTAssertEqual(try sqlite3(back, cars), try sqlite3(source, cars))
        let people = "SELECT ZFIRSTNAME, ZLASTNAME, hex(ZID), ZUPDATEDAT FROM ZPERSON ORDER BY ZFIRSTNAME, ZLASTNAME"
        XCTAssertEqual(try sqlite3(back, people), try sqlite3(source, people))
        XCTAssertEqual(try sqlite3(back, "SELECT max(Z_PK) <= (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Car') FROM ZCAR"), ["1"])
        XCTAssertNotEqual(try sqlite3(back, "SELECT Z_UUID FROM Z_METADATA"), [Self.uuid], "a copy is a new store")

        // And the CLI reads it back as the Apple SQLite store it is.
        let info = try CLI.json(try CLI.run(["info", back, "--json"]).stdout)
        XCTAssertEqual(info["format"] as? String, "sqlite")
        XCTAssertEqual((info["tables"] as? [[String: Any]])?.map { $0["objects"] as? Int ?? -1 }, [125, 20])
        let verify = try CLI.run(["verify", back, "--model", Self.modelPath])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)

        // convert never overwrites, nor takes a leftover SQLite journal for the new store's.
        assertFailure(try CLI.run(["convert", binary, back, "--to", "sqlite", "--model", Self.modelPath]), status: 8, mentions: "already exists")
        let fresh = folder.appendingPathComponent("Fresh.sqlite").path
        try Data("stale".utf8).write(to: URL(fileURLWithPath: fresh + "-wal"))
        assertFailure(try CLI.run(["convert", binary, fresh, "--to", "sqlite", "--model", Self.modelPath]), status: 8, mentions: "\(fresh)-wal already exists")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fresh))
    }

    // MARK: What does not apply

    func testBinaryOnlyCommandsRefuseAnAppleSQLiteStore() throws {
        let path = try copyOfVersion1()
        let log = try CLI.run(["log", path])
        assertFailure(log, status: 7, mentions: "\(path) is an Apple SQLite store, which has no log of ours")
        XCTAssertEqual(log.stdout, "")
        for command in ["pages", "checkpoint", "compact"] {
            let result = try CLI.run([command, path])
            assertFailure(result, status: 7, mentions: "is an Apple SQLite store, which")
            XCTAssertTrue(result.stderr.contains("coredata \(command) applies to binary stores only"), result.stderr)
            XCTAssertEqual(result.stdout, "")
        }
    }

    func testMigrateKeepsAnAppleSQLiteStoreSQLite() throws {
        let path = try copyOfVersion1()
        let result = try CLI.run(["migrate", path, "--model", Self.modelPath, "--to-version", "SampleModel2"])
        XCTAssertEqual(result.status, 0, result.stderr)
        // Version 2's layout in the same SQLite file: the renamed entity, the dropped columns.
        XCTAssertEqual(try sqlite3(path, "SELECT Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT"), ["Car", "SportCar", "LuxuryCar", "Person"])
        XCTAssertEqual(try sqlite3(path, "SELECT count(*) FROM ZCAR"), ["125"])
        XCTAssertEqual(try sqlite3(path, "SELECT count(*) FROM pragma_table_info('ZPERSON') WHERE name = 'ZID'"), ["0"])
        XCTAssertEqual(try CLI.run(["verify", path, "--model", Self.modelPath, "--model-version", "SampleModel2"]).status, 0)
    }

    func testAnSQLiteDatabaseThatIsNoCoreDataStore() throws {
        let path = CLI.temporaryFolder().appendingPathComponent("other.sqlite").path
        try sqlite3(path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('hello')", readOnly: false)
        for command in [["info"], ["verify"], ["dump", "--model", Self.modelPath]] {
            let result = try CLI.run([command[0], path] + command.dropFirst())
            assertFailure(result, status: 3, mentions: "\(path) is an SQLite database but not a Core Data store")
            XCTAssertEqual(result.stdout, "")
        }
    }
}
