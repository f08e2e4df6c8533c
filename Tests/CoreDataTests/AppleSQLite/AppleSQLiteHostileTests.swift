import CoreData
import CoreDataSQLiteStore
import CoreDataStorage
import Foundation
import XCTest

/// The Apple SQLite engine under what a review found: another connection's save racing ours,
/// UNIQUE indexes of the file, hostile keys and versions, strings with NUL, values SQL and the
/// evaluator could read differently, names that are no SQL identifiers, failed creations.
final class AppleSQLiteHostileTests: XCTestCase {
    private typealias NSPredicate = CoreDataPredicate.NSPredicate

    static let model: NSManagedObjectModel = {
        let source = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                <entity name="Item" representedClassName="Item">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <attribute name="flag" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
                    <attribute name="when" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                    <attribute name="score" optional="YES" attributeType="Float" usesScalarValueType="YES"/>
                    <attribute name="small" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
                    <attribute name="big" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                    <attribute name="price" optional="YES" attributeType="Decimal"/>
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="items" inverseEntity="Person"/>
                </entity>
                <entity name="Person" representedClassName="Person">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="owner" inverseEntity="Item"/>
                </entity>
                <entity name="Car" representedClassName="Car">
                    <attribute name="plate" optional="YES" attributeType="String"/>
                </entity>
                <entity name="SportCar" representedClassName="SportCar" parentEntity="Car">
                    <uniquenessConstraints><uniquenessConstraint><constraint value="plate"/></uniquenessConstraint></uniquenessConstraints>
                </entity>
            </model>
            """
        do {
            let model = try NSManagedObjectModel(xcodeModelContents: Data(source.utf8))
            _ = NSPersistentStoreCoordinator(managedObjectModel: model)
            return model
        } catch {
            preconditionFailure("the test model does not load: \(error)")
        }
    }()

    private func path(_ name: String) throws -> String {
        try MigrationFixtures.folder().appendingPathComponent("\(name).sqlite").path
    }

    private func open(_ path: String, sql: Bool = true, model: NSManagedObjectModel = model) throws -> AppleSQLiteStore {
        var options = AppleSQLiteStoreOptions()
        options.translatesFetchesToSQL = sql
        return try AppleSQLiteStore(path: path, model: model, metadata: StoreMetadata(), options: options)
    }

    private func sqlite3(_ path: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", path, sql]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, sql)
    }

    private func item(_ key: Int64, _ values: [String: StoreValue]) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: "Item", primaryKey: key), version: 1, values: values)
    }

    private func ids(_ store: AppleSQLiteStore, _ entity: String, _ format: String, _ arguments: [Any] = []) throws -> [Int64] {
        let request = StoreFetchRequest(
            entity: try XCTUnwrap(Self.model.entitiesByName[entity]), predicate: NSPredicate(format: format, argumentArray: arguments), resultType: .objectIDs)
        guard case .objectIDs(let found) = try store.execute(request) else { return [] }
        return found.map(\.primaryKey)
    }

    /// SQL's candidates and the evaluator alone agree on `format`.
    private func assertSameAnswer(_ path: String, _ entity: String, _ format: String, _ arguments: [Any] = [], line: UInt = #line) throws {
        let translated = try open(path, sql: true)
        let evaluated = try open(path, sql: false)
        defer {
            try? translated.close()
            try? evaluated.close()
        }
        XCTAssertEqual(try ids(translated, entity, format, arguments), try ids(evaluated, entity, format, arguments), format, line: line)
    }

    func testAnotherConnectionsSaveIsNeverOverwritten() throws {
        let path = try path("lost")
        let setup = try open(path)
        _ = try setup.save(StoreChangeSet(inserted: [item(1, ["name": .string("orig")])]))
        try setup.close()
        let a = try open(path), b = try open(path)
        let id = StoreObjectID(entityName: "Item", primaryKey: 1)
        let stale = try XCTUnwrap(try a.row(for: id))
        var theirs = try XCTUnwrap(try b.row(for: id))
        theirs["name"] = .string("B's change")
        _ = try b.save(StoreChangeSet(updated: [theirs]))
        // Reserving keys commits too; it must not mark B's save as seen.
        _ = try a.newPrimaryKeys(entityName: "Item", count: 1)
        var mine = stale
        mine["big"] = .integer(42)
        XCTAssertThrowsError(try a.save(StoreChangeSet(updated: [mine]))) { error in
            guard case StoreError.optimisticLockingFailure = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try open(path).row(for: id)?["name"], .string("B's change"))
    }

    func testASubentitysConstraintBindsOnlyItsObjects() throws {
        let path = try path("unique")
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: [
            StoreRow(objectID: StoreObjectID(entityName: "Car", primaryKey: 1), version: 1, values: ["plate": .string("X")]),
            StoreRow(objectID: StoreObjectID(entityName: "SportCar", primaryKey: 2), version: 1, values: ["plate": .string("X")]),
        ]))
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [
            StoreRow(objectID: StoreObjectID(entityName: "SportCar", primaryKey: 3), version: 1, values: ["plate": .string("X")]),
        ])))
        try store.close()
        XCTAssertEqual(try ids(try open(path), "Car", "TRUEPREDICATE"), [1, 2])
    }

    func testKeysAndVersionsBeyondTheLimitAreDamage() throws {
        for (name, sql, opensCorrupt) in [
            ("pk", "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT) VALUES (9223372036854775807, 2, 1)", true),
            ("zmax", "UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807 WHERE Z_ENT = 3", true),
            ("zopt", "UPDATE ZITEM SET Z_OPT = 9223372036854775807", true),
            ("full", "UPDATE Z_PRIMARYKEY SET Z_MAX = \(1 << 62) WHERE Z_ENT = 3", false),
        ] {
            let path = try path(name)
            let store = try open(path)
            _ = try store.save(StoreChangeSet(inserted: [item(1, ["name": .string("x")])]))
            try store.close()
            try sqlite3(path, sql)
            if opensCorrupt {
                XCTAssertThrowsError(try open(path), name) { error in
                    guard case StoreError.corrupt = error else { return XCTFail("\(name): \(error)") }
                }
            } else {
                // A store whose keys are used up refuses new ones rather than overflowing.
                XCTAssertThrowsError(try open(path).newPrimaryKeys(entityName: "Item", count: 1), name)
            }
        }
    }

    func testStringsWithNULAreKeptWhole() throws {
        let path = try path("nul")
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: [item(1, ["name": .string("a\u{0}b")]), item(2, ["name": .string("a")])]))
        try store.close()
        XCTAssertEqual(try open(path).row(for: StoreObjectID(entityName: "Item", primaryKey: 1))?["name"], .string("a\u{0}b"))
        try assertSameAnswer(path, "Item", "name == %@", ["a\u{0}b"])
        XCTAssertEqual(try ids(try open(path), "Item", "name == %@", ["a\u{0}b"]), [1])
    }

    func testSQLAndTheEvaluatorAgreeOnAwkwardValues() throws {
        let path = try path("awkward")
        let store = try open(path)
        let person = StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: 1), version: 1, values: [
            "name": .string("P"), "items": .references([StoreObjectID(entityName: "Item", primaryKey: 1)]),
        ])
        _ = try store.save(StoreChangeSet(inserted: [
            person,
            item(1, ["name": .string("abc"), "flag": .bool(true), "when": .date(Date(timeIntervalSinceReferenceDate: 0)), "small": .integer(5), "owner": .reference(person.objectID)]),
            item(2, ["name": .string(""), "flag": .bool(false)]),
            item(3, [:]),
        ]))
        try store.close()
        // Values another writer left: a boolean 2, a float column's 0.1.
        try sqlite3(path, "UPDATE ZITEM SET ZFLAG = 2, ZSCORE = 0.1 WHERE Z_PK = 1")
        let predicates: [(String, [Any])] = [
            ("name ENDSWITH ''", []), ("name CONTAINS ''", []), ("name BEGINSWITH ''", []),
            ("when != 0", []), ("when == 0", []), ("small < %@", [NSNumber(value: UInt64.max)]),
            ("flag == YES", []), ("flag != YES", []), ("score != 0.1", []), ("score == 0.1", []),
            ("ALL name == 'abc'", []), ("ALL owner.name == 'P'", []), ("ANY name == nil", []), ("ANY owner.name != 'x'", []),
            ("owner.name != 'x'", []), ("NOT (owner.name == 'P')", []),
        ]
        for (format, arguments) in predicates { try assertSameAnswer(path, "Item", format, arguments) }
        // After a batch delete leaves a key naming no row.
        let writer = try open(path)
        _ = try writer.batchDelete(StoreFetchRequest(entity: try XCTUnwrap(Self.model.entitiesByName["Person"])))
        try writer.close()
        for format in ["owner == nil", "owner != nil", "owner.name == nil", "owner.name != 'P'"] { try assertSameAnswer(path, "Item", format) }
    }

    func testValuesTheAttributeCannotHoldAreDamage() throws {
        let path = try path("small")
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: [item(1, ["small": .integer(5)])]))
        // And it refuses to write one.
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [item(2, ["small": .integer(70_000)])])))
        try store.close()
        try sqlite3(path, "UPDATE ZITEM SET ZSMALL = 70000 WHERE Z_PK = 1")
        XCTAssertThrowsError(try open(path)) { error in
            XCTAssertTrue("\(error)".contains("ZSMALL"), "\(error)")
        }
    }

    func testDecimalsKeepWhatARealHolds() throws {
        let path = try path("decimal")
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: [item(1, ["price": .decimal(try XCTUnwrap(Decimal(string: "3.14159265358979323846")))])]))
        try store.close()
        // Apple's stores hold decimals in REAL columns too: 15 to 17 significant digits survive.
        guard case .decimal(let read)? = try open(path).row(for: StoreObjectID(entityName: "Item", primaryKey: 1))?["price"] else { return XCTFail() }
        XCTAssertEqual(NSDecimalNumber(decimal: read).doubleValue, 3.141592653589793)
    }

    func testNamesThatAreNoIdentifiersAreRefusedAndLeaveNoFile() throws {
        let model = try NSManagedObjectModel(xcodeModelContents: Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Note" representedClassName="Note">
                    <attribute name="b VARCHAR); CREATE TABLE PWNED (x); --" optional="YES" attributeType="String"/>
                </entity>
            </model>
            """.utf8))
        _ = NSPersistentStoreCoordinator(managedObjectModel: model)
        let path = try path("names")
        for _ in 0..<2 {
            XCTAssertThrowsError(try open(path, model: model)) { error in
                XCTAssertTrue("\(error)".contains("cannot name an SQLite column"), "\(error)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        }
    }

    func testEquivalentButDifferentStringsAreTwoValues() throws {
        let path = try path("nfc")
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: [StoreRow(objectID: StoreObjectID(entityName: "SportCar", primaryKey: 1), version: 1, values: ["plate": .string("\u{E9}")])]))
        // As the file's BINARY index sees it: "e" + combining acute is another plate.
        _ = try store.save(StoreChangeSet(inserted: [StoreRow(objectID: StoreObjectID(entityName: "SportCar", primaryKey: 2), version: 1, values: ["plate": .string("e\u{301}")])]))
        try store.close()
        XCTAssertEqual(try ids(try open(path), "SportCar", "TRUEPREDICATE"), [1, 2])
    }

    func testARowOfAnotherTablesEntityIsDamage() throws {
        let path = try path("kind")
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: [
            StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: 1), version: 1, values: ["name": .string("P"), "items": .references([])]),
            item(1, ["name": .string("x")]),
        ]))
        try store.close()
        // The owner's row now claims to be a SportCar (entity 2), an entity of another table.
        try sqlite3(path, "UPDATE ZITEM SET ZOWNER = 1")
        try sqlite3(path, "UPDATE ZPERSON SET Z_ENT = 2")
        XCTAssertThrowsError(try open(path)) { error in
            guard case StoreError.corrupt = error else { return XCTFail("\(error)") }
        }
    }

    func testMetadataWithoutAUUIDKeepsTheStores() throws {
        let path = try path("uuid")
        let store = try open(path)
        let uuid = try XCTUnwrap(try store.metadata()["NSStoreUUID"] as? String)
        try store.setMetadata(StoreMetadata(["Custom": "value"]))
        XCTAssertEqual(try store.metadata()["NSStoreUUID"] as? String, uuid)
        try store.close()
        XCTAssertEqual(try open(path).metadata()["NSStoreUUID"] as? String, uuid)
        XCTAssertEqual(try open(path).metadata()["Custom"] as? String, "value")
    }
}
