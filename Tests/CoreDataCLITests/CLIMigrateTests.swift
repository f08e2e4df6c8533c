import CoreData
import Foundation
import XCTest

/// `coredata migrate`: the plan (versions, steps, entity by entity), `--dry-run`, the migration
/// in place, and its failures, run as a process.
final class CLIMigrateTests: XCTestCase {
    private static let samplePackage = CLI.packageRoot
        .appendingPathComponent("Tests/CoreDataModelTests/Fixtures/models/CoreDataPlus/SampleModel.xcdatamodeld")

    /// A copy of the sample package whose current version is `version`.
    private func package(current version: String) throws -> String {
        let copy = CLI.temporaryFolder().appendingPathComponent("SampleModel.xcdatamodeld")
        try FileManager.default.copyItem(at: Self.samplePackage, to: copy)
        try #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\#(version).xcdatamodel</string></dict></plist>"#
            .write(to: copy.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        return copy.path
    }

    /// A store of the sample model's version 1 with a person and two cars.
    private func v1Store(type: String) throws -> String {
        let path = CLI.temporaryFolder().appendingPathComponent("Sample.store").path
        let v1 = try XcodeModelPackage(contentsOf: Self.samplePackage).loadModel(version: "SampleModel")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v1)
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: URL(fileURLWithPath: path), options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var failure: Error?
        context.performAndWait {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue("Grace", forKey: "firstName")
            person.setValue(UUID(), forKey: "id")
            person.setValue(Date(), forKey: "updatedAt")
            for (entity, plate) in [("Car", "A-1"), ("ExpensiveSportCar", "E-1")] {
                let car = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                car.setValue(plate, forKey: "numberPlate")
                car.setValue(person, forKey: "owner")
            }
            do { try context.save() } catch { failure = error }
        }
        if let failure { throw failure }
        try coordinator.remove(store)
        return path
    }

    func testDryRunPrintsThePlanAndChangesNothing() throws {
        let store = try v1Store(type: NSBinaryStoreType)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let result = try CLI.run(["migrate", store, "--model", try package(current: "SampleModel3"), "--dry-run"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("saved with version 'SampleModel', migrating to 'SampleModel3' in 1 step"), result.stdout)
        XCTAssertTrue(result.stdout.contains("change ExpensiveSportCar → LuxuryCar (renamed)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("add Maker"), result.stdout)
        XCTAssertTrue(result.stdout.contains("color removed"), result.stdout)
        XCTAssertTrue(result.stdout.contains("dry run: nothing changed"), result.stdout)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before)
    }

    func testMigratesInPlace() throws {
        for type in [NSBinaryStoreType, NSXMLStoreType] {
            let store = try v1Store(type: type)
            let model = try package(current: "SampleModel2")
            let result = try CLI.run(["migrate", store, "--model", model])
            XCTAssertEqual(result.status, 0, "\(type): \(result.stderr)")
            XCTAssertTrue(result.stdout.contains("migrated \(store) to version 'SampleModel2'"), result.stdout)
            XCTAssertTrue(result.stdout.contains("1 LuxuryCar"), result.stdout)
            let again = try CLI.run(["migrate", store, "--model", model, "--json"])
            XCTAssertEqual(again.status, 0, again.stderr)
            XCTAssertEqual(try CLI.json(again.stdout)["version"] as? String, "SampleModel2", type)
        }
    }

    func testToVersionAndRefusedChange() throws {
        let store = try v1Store(type: NSBinaryStoreType)
        let model = try package(current: "SampleModel3")
        let result = try CLI.run(["migrate", store, "--model", model, "--to-version", "SampleModel2", "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("\"migrated\""), result.stdout)

        let unknown = try CLI.run(["migrate", store, "--model", CLI.modelPath])
        assertFailure(unknown, status: 9, mentions: "saved with a model version this app does not have")
        let notPackage = try CLI.run(["migrate", store, "--model", Self.samplePackage.appendingPathComponent("SampleModel.xcdatamodel").path])
        assertFailure(notPackage, status: 6, mentions: "not a versioned model package")
    }

    /// Xcode's compiled package: every version listed, the current one from VersionInfo.plist,
    /// and the same migration inference as from the source.
    func testModelPrintsACompiledPackage() throws {
        let momd = CLI.packageRoot.appendingPathComponent("Tests/CoreDataModelTests/Fixtures/apple-compiled/SampleModel.momd")
        let result = try CLI.run(["model", momd.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        for line in ["version SampleModel (current)", "version SampleModel2", "version SampleModel3", "entity LuxuryCar"] {
            XCTAssertTrue(result.stdout.contains(line), "\(line) in \(result.stdout)")
        }
        let changes = try CLI.run(["model", momd.path, "--changes-from", "SampleModel", "--model-version", "SampleModel2"])
        XCTAssertEqual(changes.status, 0, changes.stderr)
        XCTAssertTrue(changes.stdout.contains("change ExpensiveSportCar → LuxuryCar (renamed)"), changes.stdout)
    }

    func testModelHashesAreApplesBase64() throws {
        // VersionInfo.plist holds what Xcode computed: every entity hash of every version.
        let momd = CLI.packageRoot.appendingPathComponent("Tests/CoreDataModelTests/Fixtures/apple-compiled/SampleModel.momd")
        let info = try XCTUnwrap(PropertyListSerialization.propertyList(
            from: Data(contentsOf: momd.appendingPathComponent("VersionInfo.plist")), options: [], format: nil) as? [String: Any])
        let expected = try XCTUnwrap(info["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
        for source in [momd.path, Self.samplePackage.path] {
            let result = try CLI.run(["model", source, "--hashes", "--json"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let versions = try XCTUnwrap(try CLI.json(result.stdout)["versions"] as? [[String: Any]])
            var compared = 0
            for version in versions {
                let name = try XCTUnwrap(version["name"] as? String)
                for entity in try XCTUnwrap(version["entities"] as? [[String: Any]]) {
                    let entityName = try XCTUnwrap(entity["name"] as? String)
                    XCTAssertEqual(entity["versionHash"] as? String, expected[name]?[entityName]?.base64EncodedString(), "\(source) \(name).\(entityName)")
                    compared += 1
                }
            }
            XCTAssertEqual(compared, 13, source)
        }
        let text = try CLI.run(["model", momd.path, "--hashes", "--model-version", "SampleModel"])
        XCTAssertTrue(text.stdout.contains("entity Car  hash \(expected["SampleModel"]?["Car"]?.base64EncodedString() ?? "?")"), text.stdout)
    }

    func testModelChangesFrom() throws {
        let result = try CLI.run(["model", Self.samplePackage.path, "--changes-from", "SampleModel", "--model-version", "SampleModel2"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("SampleModel → SampleModel2: lightweight migration maps it"), result.stdout)
        XCTAssertTrue(result.stdout.contains("change ExpensiveSportCar → LuxuryCar (renamed)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("change Person: id removed"), result.stdout)

        let package = CLI.temporaryFolder().appendingPathComponent("Items.xcdatamodeld")
        for (name, type) in [("Items", "String"), ("Items 2", "Date")] {
            let version = package.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0"><entity name="Item"><attribute name="added" optional="YES" attributeType="\(type)"/></entity></model>
                """.write(to: version.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        try #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Items 2.xcdatamodel</string></dict></plist>"#
            .write(to: package.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        let refused = try CLI.run(["model", package.path, "--changes-from", "Items"])
        assertFailure(refused, status: 9, mentions: "Item.added: String → Date")
    }

    private static let mappingModel = CLI.packageRoot
        .appendingPathComponent("Tests/CoreDataModelTests/Fixtures/models/CoreDataPlus/V2toV3.xcmappingmodel")

    /// The shipped mapping model without its policy class names: a mapping the CLI can run.
    private func mappingWithoutPolicies() throws -> String {
        let folder = CLI.temporaryFolder().appendingPathComponent("NoPolicy.xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let xml = try String(contentsOf: Self.mappingModel.appendingPathComponent("xcmapping.xml"), encoding: .utf8)
        let stripped = xml.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("migrationpolicyclassname") }.joined(separator: "\n")
        try stripped.write(to: folder.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
        return folder.path
    }

    func testMappingModelRunsItsStep() throws {
        for type in [NSBinaryStoreType, NSXMLStoreType] {
            let store = try v1Store(type: type)
            let model = try package(current: "SampleModel3")
            let dry = try CLI.run(["migrate", store, "--model", model, "--mapping", Self.mappingModel.path, "--dry-run"])
            XCTAssertEqual(dry.status, 0, dry.stderr)
            XCTAssertTrue(dry.stdout.contains("in 2 steps"), dry.stdout)
            XCTAssertTrue(dry.stdout.contains("SampleModel2 → SampleModel3 (mapping model)"), dry.stdout)
            XCTAssertTrue(dry.stdout.contains("custom Car (policy REPLACE_AT_RUNTIME.V2to3MakerPolicy)"), dry.stdout)

            let before = try Data(contentsOf: URL(fileURLWithPath: store))
            let refused = try CLI.run(["migrate", store, "--model", model, "--mapping", Self.mappingModel.path])
            XCTAssertEqual(refused.status, 9, refused.stderr)
            XCTAssertTrue(refused.stderr.contains("REPLACE_AT_RUNTIME.V2to3MakerPolicy"), refused.stderr)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "\(type): a refused migration changes nothing")

            let result = try CLI.run(["migrate", store, "--model", model, "--mapping", try mappingWithoutPolicies()])
            XCTAssertEqual(result.status, 0, "\(type): \(result.stderr)")
            XCTAssertTrue(result.stdout.contains("migrated \(store) to version 'SampleModel3'"), result.stdout)
            XCTAssertTrue(result.stdout.contains("1 LuxuryCar"), result.stdout)
            XCTAssertTrue(result.stdout.contains("0 Maker"), result.stdout)
        }
    }

    func testMappingModelThatFitsNoStepOrCannotBeRead() throws {
        let store = try v1Store(type: NSBinaryStoreType)
        let model = try package(current: "SampleModel2")
        let misfit = try CLI.run(["migrate", store, "--model", model, "--mapping", Self.mappingModel.path, "--dry-run"])
        XCTAssertEqual(misfit.status, 9, misfit.stderr)
        XCTAssertTrue(misfit.stderr.contains("fits no step of the migration from 'SampleModel' to 'SampleModel2'"), misfit.stderr)
        let missing = try CLI.run(["migrate", store, "--model", model, "--mapping", "/nonexistent/X.cdm"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("/nonexistent/X.cdm cannot be read: no file is there"), missing.stderr)
    }
}
