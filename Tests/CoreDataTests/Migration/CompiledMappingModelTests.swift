@testable import CoreData
import Foundation
import XCTest

// Foundation on Linux declares an NSExpression of its own (README: importing Foundation beside CoreData).
fileprivate typealias NSExpression = CoreDataPredicate.NSExpression

/// Xcode's compiled mapping model (Formats/compiled-model.md §5): `V2toV3.cdm`, as Xcode's mapping
/// model compiler wrote it, reads into the mapping its source `V2toV3.xcmappingmodel` gives, field
/// by field, with Apple's entity version hashes; it migrates a store to the same objects; it is
/// found beside its source; and damaged archives fail with an error naming the file and the key,
/// never a trap.
final class CompiledMappingModelTests: XCTestCase {
    private static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CoreDataModelTests/Fixtures")
    private let sourceFile = fixtures.appendingPathComponent("models/CoreDataPlus/V2toV3.xcmappingmodel")
    private let compiledFile = fixtures.appendingPathComponent("apple-compiled/V2toV3.cdm")
    private let versionInfo = fixtures.appendingPathComponent("apple-compiled/SampleModel.momd/VersionInfo.plist")

    override class func setUp() {
        super.setUp()
        NSEntityMigrationPolicy.registerSubclasses(V2to3MakerPolicy.self)
    }

    // MARK: The same mapping

    /// Every field of an entity mapping the two files both carry, as text.
    private func fields(_ mapping: NSEntityMapping) -> [String] {
        func info(_ userInfo: [AnyHashable: Any]?) -> String { userInfo.map { "\(NSDictionary(dictionary: $0))" } ?? "-" }
        func properties(_ kind: String, _ list: [NSPropertyMapping]?) -> [String] {
            guard let list else { return ["\(kind)s: none"] }
            return list.map { "\(kind) \($0.name ?? "-") = \($0.valueExpression.map { "\($0)" } ?? "-") userInfo \(info($0.userInfo))" }
        }
        return [
            "name \(mapping.name ?? "-")", "type \(mapping.mappingType.rawValue)",
            "source \(mapping.sourceEntityName ?? "-")", "destination \(mapping.destinationEntityName ?? "-")",
            "policy \(mapping.entityMigrationPolicyClassName ?? "-")",
            "sourceExpression \(mapping.sourceExpression.map { "\($0)" } ?? "-")",
            "userInfo \(info(mapping.userInfo))",
        ] + properties("attribute", mapping.attributeMappings) + properties("relationship", mapping.relationshipMappings)
    }

    func testCompiledFileEqualsItsSource() throws {
        let source = try NSMappingModel(validatingContentsOf: sourceFile)
        let compiled = try NSMappingModel(validatingContentsOf: compiledFile)
        // What the editor leaves empty, the compiler fills in from the models: resolve it the same way.
        source.resolveGeneratedExpressions(from: try SampleMigration.v2, to: try SampleMigration.v3)

        XCTAssertEqual(compiled.entityMappings.map(\.name), source.entityMappings.map(\.name), "the order the migration runs them in")
        XCTAssertEqual(compiled.entityMappings.map(\.name), ["CarToCar", "LuxuryCarToLuxuryCar", "PersonToPerson", "SportCarToSportCar", "Maker"])
        XCTAssertEqual(Set(compiled.entityMappingsByName.keys), Set(source.entityMappingsByName.keys))
        for (compiledMapping, sourceMapping) in zip(compiled.entityMappings, source.entityMappings) {
            let (left, right) = (fields(compiledMapping), fields(sourceMapping))
            XCTAssertEqual(left.count, right.count, compiledMapping.name ?? "")
            for (compiledLine, sourceLine) in zip(left, right) { XCTAssertEqual(compiledLine, sourceLine, compiledMapping.name ?? "") }
            XCTAssertTrue(compiledMapping.versionHashesAreApples, compiledMapping.name ?? "")
            for property in (compiledMapping.attributeMappings ?? []) + (compiledMapping.relationshipMappings ?? []) {
                XCTAssertFalse(property.generatesExpression, "\(compiledMapping.name ?? "").\(property.name ?? ""): the compiler wrote every expression")
            }
        }

        // Spot checks against the archive as plistlib shows it, so that equal is not equally wrong.
        let car = try XCTUnwrap(compiled.entityMappingsByName["CarToCar"])
        XCTAssertEqual(car.mappingType, .customEntityMappingType)
        XCTAssertEqual(car.entityMigrationPolicyClassName, "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        XCTAssertEqual(car.attributeMappings?.map(\.name), ["markedForDeletionAsOf", "model", "numberPlate"])
        XCTAssertEqual(car.relationshipMappings?.map(\.name), ["createdBy", "owner", "previousOwners"])
        XCTAssertNil(car.relationshipMappings?[0].valueExpression, "createdBy: $null, the policy sets it")
        XCTAssertEqual(
            car.sourceExpression.map { "\($0)" },
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"), $manager.sourceContext, NO)"#)
        XCTAssertEqual(car.attributeMappings?[2].valueExpression.map { "\($0)" }, "$source.numberPlate")
        XCTAssertTrue(car.sourceExpression is NSFetchRequestExpression)
        let person = try XCTUnwrap(compiled.entityMappingsByName["PersonToPerson"])
        XCTAssertEqual(person.mappingType, .copyEntityMappingType)
        XCTAssertNil(person.entityMigrationPolicyClassName)
        XCTAssertEqual(
            person.relationshipMappings?[1].valueExpression.map { "\($0)" },
            #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)"#)
        let maker = try XCTUnwrap(compiled.entityMappingsByName["Maker"])
        XCTAssertEqual(maker.mappingType, .addEntityMappingType)
        XCTAssertNil(maker.sourceEntityName)
        XCTAssertNil(maker.sourceExpression)
        XCTAssertNil(maker.sourceEntityVersionHash)
        XCTAssertEqual(maker.attributeMappings?.map(\.name), ["name"])
        XCTAssertNil(maker.attributeMappings?[0].valueExpression)
    }

    /// The version hashes are Apple's: the ones Xcode's model compiler wrote into the compiled
    /// model package's `VersionInfo.plist` for the source and destination versions.
    func testVersionHashesAreThoseOfTheCompiledModels() throws {
        let compiled = try NSMappingModel(validatingContentsOf: compiledFile)
        let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: versionInfo), format: nil) as? [String: Any]
        let hashes = try XCTUnwrap(plist?["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
        let (v2, v3) = (try XCTUnwrap(hashes["SampleModel2"]), try XCTUnwrap(hashes["SampleModel3"]))
        for mapping in compiled.entityMappings {
            if let name = mapping.sourceEntityName {
                XCTAssertEqual(mapping.sourceEntityVersionHash, v2[name], "\(mapping.name ?? ""): source hash")
            } else {
                XCTAssertNil(mapping.sourceEntityVersionHash, mapping.name ?? "")
            }
            let name = try XCTUnwrap(mapping.destinationEntityName)
            XCTAssertEqual(mapping.destinationEntityVersionHash, v3[name], "\(mapping.name ?? ""): destination hash")
            XCTAssertEqual(mapping.destinationEntityVersionHash?.count, 32)
        }
        // The editor's file carries no hashes: the compiler computes them from the models.
        let source = try NSMappingModel(validatingContentsOf: sourceFile)
        XCTAssertTrue(source.entityMappings.allSatisfy { $0.sourceEntityVersionHash == nil && $0.destinationEntityVersionHash == nil })
    }

    // MARK: The same migration

    /// A v2 store migrated with the compiled file and with its source: the same objects, values
    /// and relationships, and the ones the sample's authors expect.
    func testMigratingWithTheCompiledFileGivesTheSameStore() throws {
        var dumps: [[String]] = []
        for file in [compiledFile, sourceFile] {
            let folder = try MigrationFixtures.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let store = folder.appendingPathComponent("v2.store")
            let migrated = folder.appendingPathComponent("v3.store")
            try SampleMigration.fillV2(store, type: NSXMLStoreType)
            let manager = NSMigrationManager(sourceModel: try SampleMigration.v2, destinationModel: try SampleMigration.v3)
            try manager.migrateStore(
                from: store, sourceType: NSXMLStoreType, with: try NSMappingModel(validatingContentsOf: file),
                toDestinationURL: migrated, destinationType: NSXMLStoreType)
            dumps.append(try dump(migrated, type: NSXMLStoreType, checking: file.lastPathComponent))
        }
        XCTAssertEqual(dumps[0].count, 8, "2 people, 2 cars, a sport car, a luxury car, 2 makers")
        XCTAssertEqual(dumps[0], dumps[1])
    }

    /// Every object of the v3 store at `url` as one line (attributes, then relationships by the
    /// destinations' names or plates), sorted; the store is checked by the sample's own checks too.
    private func dump(_ url: URL, type: String, checking label: String) throws -> [String] {
        let model = try SampleMigration.v3
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
        defer { try? coordinator.remove(store) }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try SampleMigration.checkV3(in: context, label)
        func describe(_ object: NSManagedObject) -> String {
            let key = ["numberPlate", "firstName", "name"].first { object.entity.attributesByName[$0] != nil } ?? ""
            return "\(object.entity.name ?? "")(\(object.value(forKey: key).map { "\($0)" } ?? "-"))"
        }
        var lines: [String] = []
        var failure: Error?
        context.performAndWait {
            do {
                for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
                    let request = NSFetchRequest<NSManagedObject>(entityName: entity.name ?? "")
                    request.includesSubentities = false
                    for object in try context.fetch(request) {
                        var parts = [describe(object)]
                        for key in entity.attributesByName.keys.sorted() {
                            parts.append("\(key)=\(object.value(forKey: key).map { "\($0)" } ?? "nil")")
                        }
                        for key in entity.relationshipsByName.keys.sorted() {
                            let value = object.value(forKey: key)
                            let targets = (value as? Set<NSManagedObject>).map { Array($0) } ?? (value as? NSManagedObject).map { [$0] } ?? []
                            parts.append("\(key)→[\(targets.map(describe).sorted().joined(separator: ","))]")
                        }
                        lines.append(parts.joined(separator: " "))
                    }
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return lines.sorted()
    }

    // MARK: Finding and picking the reader

    func testTheContentPicksTheReaderAndTheSearchFindsCompiledFiles() throws {
        let folder = try MigrationFixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: compiledFile, to: folder.appendingPathComponent("V2toV3.cdm"))
        try FileManager.default.copyItem(at: sourceFile, to: folder.appendingPathComponent("V2toV3.xcmappingmodel"))
        try Data("not a mapping model".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        XCTAssertEqual(MappingModelSearch.files(in: [folder]).map(\.lastPathComponent), ["V2toV3.cdm", "V2toV3.xcmappingmodel"])
        let loaded = MappingModelSearch.load(in: [folder])
        XCTAssertEqual(loaded.count, 2)
        XCTAssertEqual(loaded.map { $0.entityMappings.count }, [5, 5])
        XCTAssertEqual(loaded[0].entityMappings[0].versionHashesAreApples, true, "the .cdm, read by the compiled reader")

        // A compiled file under another name is still one: its bytes decide, not its name.
        let renamed = folder.appendingPathComponent("renamed.mapping")
        try FileManager.default.copyItem(at: compiledFile, to: renamed)
        XCTAssertEqual(try NSMappingModel(validatingContentsOf: renamed).entityMappings.count, 5)
    }

    // MARK: Damaged archives

    /// The error of reading `bytes` as a compiled mapping model named `name`; nil when it loads.
    private func failure(_ bytes: [UInt8], _ name: String = "Damaged.cdm") -> NSError? {
        do {
            _ = try CompiledMappingModelReader.read(Data(bytes), path: name)
            return nil
        } catch {
            return error as NSError
        }
    }

    /// `bytes` with every binary property list ASCII string object `old` (marker and all, so that
    /// a longer string it begins is left alone) replaced by `new`, of the same length.
    private func replacingString(_ old: String, with new: String, in bytes: [UInt8], count: Int = 1) -> [UInt8] {
        func object(_ string: String) -> [UInt8] {
            let characters = Array(string.utf8)
            let marker: [UInt8] = characters.count < 15 ? [0x50 | UInt8(characters.count)] : [0x5F, 0x10, UInt8(characters.count)]
            return marker + characters
        }
        let (from, to) = (object(old), object(new))
        XCTAssertEqual(from.count, to.count, "a replacement must keep the length")
        // Xcode's writer mostly shares one string object between its uses, but not always (some
        // class names are two): callers say how many there are, so a changed fixture is noticed.
        return replacingBytes(from, with: to, in: bytes, count: count)
    }

    /// `bytes` with each run of `old` replaced by `new`, of the same length; there must be `count`.
    private func replacingBytes(_ old: [UInt8], with new: [UInt8], in bytes: [UInt8], count expected: Int) -> [UInt8] {
        var result = bytes
        var count = 0
        var index = 0
        while index + old.count <= result.count {
            if Array(result[index..<index + old.count]) == old {
                result.replaceSubrange(index..<index + old.count, with: new)
                count += 1
                index += old.count
            } else {
                index += 1
            }
        }
        XCTAssertEqual(count, expected, "runs of \(old) in the archive")
        return result
    }

    func testDamagedArchivesNameTheFileAndTheKey() throws {
        let bytes = [UInt8](try Data(contentsOf: compiledFile))
        XCTAssertNil(failure(bytes), "the fixture itself loads")
        let cases: [(String, [UInt8], String)] = [
            ("root class", replacingString("NSMappingModel", with: "NSMappingMode2", in: bytes, count: 2), "the root object is object 1 (NSMappingMode2), not an NSMappingModel"),
            ("entity mapping class", replacingString("NSEntityMapping", with: "NSEntityMappinX", in: bytes, count: 2), "an element of NSEntityMappings is not an NSEntityMapping"),
            ("property mapping class", replacingString("NSPropertyMapping", with: "NSPropertyMappinX", in: bytes, count: 2), "an element of NSAttributeMappings is not an NSPropertyMapping"),
            ("entity mappings key", replacingString("NSEntityMappings", with: "NSEntityMappingX", in: bytes), "object 1 (NSMappingModel): NSEntityMappings is missing"),
            ("mapping name key", replacingString("NSMappingName", with: "NSMappingNamX", in: bytes), "object 3 (NSEntityMapping): NSMappingName is missing"),
            ("mapping type key", replacingString("NSMappingType", with: "NSMappingTypX", in: bytes), "object 3 (NSEntityMapping): NSMappingType is missing"),
            ("property name key", replacingString("NSDestinationPropertyName", with: "NSDestinationPropertyNamX", in: bytes), "(NSPropertyMapping): NSDestinationPropertyName is missing"),
            ("fetch request key", replacingString("NSFRExpression", with: "NSFRExpressioX", in: bytes), "(NSFetchRequestExpression): NSFRExpression is missing"),
            ("expression class", replacingString("NSKeyPathSpecifierExpression", with: "NSKeyPathSpecifierExpressioX", in: bytes), "NSKeyPathSpecifierExpressioX"),
            // The two UID objects of archive object 212 (SportCarToSportCar, in NSEntityMappings
            // and NSEntityMappingsByName) made UID 83 (LuxuryCarToLuxuryCar).
            ("duplicate names", replacingBytes([0x80, 0xD4], with: [0x80, 0x53], in: bytes, count: 2), "holds two entity mappings named 'LuxuryCarToLuxuryCar'"),
            ("truncated", Array(bytes.dropLast(100)), "not a compiled mapping model: binary property list"),
            ("empty", [], "not a compiled mapping model"),
            ("a compiled model", [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent("apple-compiled/SampleModel.momd/SampleModel2.mom"))), "not an NSMappingModel"),
        ]
        for (label, damaged, expected) in cases {
            guard let error = failure(damaged) else {
                XCTFail("\(label): loaded")
                continue
            }
            XCTAssertEqual(error.domain, NSCocoaErrorDomain, label)
            XCTAssertEqual(error.code, NSMigrationError, label)
            XCTAssertTrue(error.localizedDescription.contains("the mapping model Damaged.cdm cannot be read: "), "\(label): \(error.localizedDescription)")
            XCTAssertTrue(error.localizedDescription.contains(expected), "\(label): \(error.localizedDescription)")
        }
    }

    /// Through the file: the path is in the message and in `NSFilePathErrorKey`, and a `.cdm`
    /// that is not a property list is reported as not a compiled mapping model, not as bad XML.
    func testDamagedFilesAreNamed() throws {
        let folder = try MigrationFixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = try Data(contentsOf: compiledFile)
        let cases: [(String, Data, String)] = [
            ("Truncated.cdm", bytes.prefix(bytes.count / 2), "not a compiled mapping model"),
            ("Text.cdm", Data("<?xml version=\"1.0\"?><database/>".utf8), "not a compiled mapping model"),
        ]
        for (name, data, expected) in cases {
            let url = folder.appendingPathComponent(name)
            try data.write(to: url)
            XCTAssertNil(NSMappingModel(contentsOf: url), name)
            XCTAssertThrowsError(try NSMappingModel(validatingContentsOf: url), name) { error in
                let error = error as NSError
                XCTAssertEqual(error.code, NSMigrationError, name)
                XCTAssertEqual(error.userInfo[NSFilePathErrorKey] as? String, url.path, name)
                XCTAssertTrue(error.localizedDescription.contains("\(url.path) cannot be read: \(expected)"), "\(name): \(error.localizedDescription)")
            }
        }
    }

    /// Every prefix and a sample of byte flips of the real `.cdm` load or throw; none traps.
    func testHostileBytesNeverTrap() throws {
        let bytes = [UInt8](try Data(contentsOf: compiledFile))
        var errors = 0
        for length in stride(from: 0, to: bytes.count, by: 37) where failure(Array(bytes[..<length])) != nil { errors += 1 }
        XCTAssertEqual(errors, (bytes.count + 36) / 37, "every prefix fails")
        var generator = SystemRandomNumberGenerator()
        var loaded = 0
        for _ in 0..<500 {
            var damaged = bytes
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if let error = failure(damaged) {
                XCTAssertFalse(error.localizedDescription.isEmpty)
            } else {
                loaded += 1
            }
        }
        // Flips inside strings or hashes still load; the count only shows both paths ran.
        print("hostile .cdm bytes: \(loaded) of 500 flipped archives loaded, the rest threw")
    }
}
