@testable import CoreData
import Foundation
import XCTest

/// Xcode's mapping model files as shipped: the editor's `V2toV3.xcmappingmodel` and the
/// compiler's `V2toV3.cdm` read into the same mapping, run on every store type, found beside the
/// model package by a migration at open, and damaged ones refused with the file and the place.
final class MappingModelFileTests: XCTestCase {
    private static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CoreDataModelTests/Fixtures")
    private let sourceFile = fixtures.appendingPathComponent("models/CoreDataPlus/V2toV3.xcmappingmodel")
    private let compiledFile = fixtures.appendingPathComponent("apple-compiled/V2toV3.cdm")

    override class func setUp() {
        super.setUp()
        NSEntityMigrationPolicy.registerSubclasses(V2to3MakerPolicy.self)
    }

    /// Every entity mapping and property mapping as text, for comparing mappings.
    private func summary(_ mapping: NSMappingModel) -> [String] {
        (mapping.entityMappings ?? []).flatMap { entity -> [String] in
            var lines = ["\(entity.name ?? "-") \(entity.mappingType.rawValue) \(entity.sourceEntityName ?? "-")→\(entity.destinationEntityName ?? "-") policy \(entity.entityMigrationPolicyClassName ?? "-") from \(entity.sourceExpression.map { "\($0)" } ?? "-")"]
            for property in entity.attributeMappings ?? [] { lines.append("  attribute \(property.name ?? "-") = \(property.valueExpression.map { "\($0)" } ?? "-")") }
            for property in entity.relationshipMappings ?? [] { lines.append("  relationship \(property.name ?? "-") = \(property.valueExpression.map { "\($0)" } ?? "-")") }
            return lines
        }
    }

    func testSourceAndCompiledFilesGiveTheSameMapping() throws {
        let source = try NSMappingModel(validatingContentsOf: sourceFile)
        let compiled = try NSMappingModel(validatingContentsOf: compiledFile)
        XCTAssertEqual(compiled.entityMappings.map { $0.name }, ["CarToCar", "LuxuryCarToLuxuryCar", "PersonToPerson", "SportCarToSportCar", "Maker"])
        XCTAssertEqual(compiled.entityMappings.map { $0.mappingType }, [.customEntityMappingType, .customEntityMappingType, .copyEntityMappingType, .customEntityMappingType, .addEntityMappingType])
        XCTAssertEqual(compiled.entityMappings[0].entityMigrationPolicyClassName, "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        XCTAssertEqual(compiled.entityMappings[0].sourceEntityVersionHash?.count, 32)
        XCTAssertEqual(
            "\(compiled.entityMappings[0].relationshipMappings?[1].valueExpression.map { "\($0)" } ?? "-")",
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#)

        // The editor's file leaves what Xcode's compiler fills in to the models.
        source.resolveGeneratedExpressions(from: try SampleMigration.v2, to: try SampleMigration.v3)
        XCTAssertEqual(summary(source), summary(compiled))
        XCTAssertEqual(summary(source), summary(SampleMigration.mappingInCode()), "the mapping spelled in code is the same")
    }

    func testShippedMappingModelsMigrateEveryStoreType() throws {
        for file in [sourceFile, compiledFile] {
            for type in [NSBinaryStoreType, NSXMLStoreType] {
                let mapping = try XCTUnwrap(NSMappingModel(contentsOf: file))
                try SampleMigration.migrateAndCheck(type: type, mapping: mapping, "\(file.lastPathComponent) on \(type)")
            }
            let folder = try MigrationFixtures.folder()
            let store = folder.appendingPathComponent("v2.store")
            try SampleMigration.fillV2(store, type: NSBinaryStoreType)
            let manager = NSMigrationManager(sourceModel: try SampleMigration.v2, destinationModel: try SampleMigration.v3)
            try manager.migrateStore(
                from: store, sourceType: NSBinaryStoreType, with: try XCTUnwrap(NSMappingModel(contentsOf: file)),
                toDestinationURL: folder.appendingPathComponent("memory"), destinationType: NSInMemoryStoreType)
            XCTAssertEqual(manager.migrationProgress, 1, "\(file.lastPathComponent) into memory")
        }
    }

    /// A v1 store opened with v3 and the mapping model beside the package: v1 → v2 is inferred,
    /// v2 → v3 runs the mapping model with its policy, in one open.
    func testOpeningAV1StoreWalksThroughTheMappingModel() throws {
        for type in [NSBinaryStoreType, NSXMLStoreType] {
            let package = try MigrationFixtures.samplePackage(current: "SampleModel3")
            try FileManager.default.copyItem(at: sourceFile, to: package.deletingLastPathComponent().appendingPathComponent("V2toV3.xcmappingmodel"))
            let url = package.deletingLastPathComponent().appendingPathComponent("Sample.store")
            let v1 = try XcodeModelPackage(contentsOf: package).loadModel(version: "SampleModel")
            try MigrationFixtures.fill(url, type: type, model: v1) { context in
                let ada = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                ada.setValue("Ada", forKey: "firstName")
                ada.setValue(UUID(), forKey: "id")
                ada.setValue(Date(timeIntervalSince1970: 1000), forKey: "updatedAt")
                for (entity, plate, maker) in [("Car", "A-1", "Fiat"), ("SportCar", "S-1", "Ferrari"), ("ExpensiveSportCar", "E-1", "Ferrari")] {
                    let car = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                    car.setValue(plate, forKey: "numberPlate")
                    car.setValue(maker, forKey: "maker")
                    car.setValue(ada, forKey: "owner")
                }
            }
            let v3 = try XCTUnwrap(NSManagedObjectModel(contentsOf: package))
            let (container, context) = try MigrationFixtures.open(url, type: type, model: v3)
            let makers = try MigrationFixtures.objects("Maker", sortedBy: "name", in: context)
            let luxury = try MigrationFixtures.objects("LuxuryCar", sortedBy: "numberPlate", in: context)
            let people = try MigrationFixtures.objects("Person", sortedBy: "firstName", in: context)
            context.performAndWait {
                XCTAssertEqual(makers.map { $0.value(forKey: "name") as? String }, ["Ferrari", "Fiat"], type)
                let ferrariCars = ((makers.first?.value(forKey: "cars") as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "numberPlate") as? String }.sorted()
                XCTAssertEqual(ferrariCars, ["E-1", "S-1"], "\(type): the v1 expensive sport car arrives as a LuxuryCar made by Ferrari")
                XCTAssertEqual(luxury.map { $0.value(forKey: "numberPlate") as? String }, ["E-1"], type)
                let previous = ((people.first?.value(forKey: "previousCars") as? Set<NSManagedObject>) ?? []).count
                XCTAssertEqual(previous, 3, type)
            }
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
            XCTAssertEqual(MigrationFixtures.siblings(of: url).filter { $0.contains(".migrating") }, [], "\(type): no staging file left")
        }
    }

    func testMappingModelIsFoundInABundleForItsVersionsOnly() throws {
        let folder = try MigrationFixtures.folder()
        try FileManager.default.copyItem(at: compiledFile, to: folder.appendingPathComponent("V2toV3.cdm"))
        let bundle = try XCTUnwrap(Bundle(url: folder))
        let v1 = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage).loadModel(version: "SampleModel")
        XCTAssertNotNil(NSMappingModel(from: [bundle], forSourceModel: try SampleMigration.v2, destinationModel: try SampleMigration.v3))
        XCTAssertNil(NSMappingModel(from: [bundle], forSourceModel: v1, destinationModel: try SampleMigration.v3), "v1 has no LuxuryCar: not this mapping's source")
        XCTAssertNil(NSMappingModel(from: [bundle], forSourceModel: try SampleMigration.v2, destinationModel: v1))
    }

    func testDamagedMappingModelFilesAreNamed() throws {
        let folder = try MigrationFixtures.folder()
        let xml = try String(contentsOf: sourceFile.appendingPathComponent("xcmapping.xml"), encoding: .utf8)
        func write(_ name: String, _ contents: String) throws -> URL {
            let package = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
            try contents.write(to: package.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
            return package
        }
        let cases: [(URL, String)] = [
            (try write("Truncated.xcmappingmodel", String(xml.prefix(xml.count / 2))), "Truncated.xcmappingmodel/xcmapping.xml cannot be read"),
            (try write("BadBase64.xcmappingmodel", xml.replacingOccurrences(of: "YnBsaXN0MDDU", with: "!!!!")), "is not base64"),
            (try write("NotAnArchive.xcmappingmodel", xml.replacingOccurrences(of: "YnBsaXN0MDDU", with: "AAAA")), "the value expression of"),
            (try write("Dangling.xcmappingmodel", xml.replacingOccurrences(of: #"idrefs="z115 z119"#, with: #"idrefs="z999 z119"#)), "refers to z999"),
            (folder.appendingPathComponent("Missing.cdm"), "no file is there"),
        ]
        for (url, expected) in cases {
            XCTAssertNil(NSMappingModel(contentsOf: url), url.lastPathComponent)
            XCTAssertThrowsError(try NSMappingModel(validatingContentsOf: url), url.lastPathComponent) { error in
                XCTAssertTrue(error.localizedDescription.contains(expected), "\(url.lastPathComponent): \(error.localizedDescription)")
            }
        }
        var archive = try Data(contentsOf: compiledFile)
        archive[archive.count / 2] ^= 0xFF
        archive.removeLast(40)
        let broken = folder.appendingPathComponent("Broken.cdm")
        try archive.write(to: broken)
        XCTAssertThrowsError(try NSMappingModel(validatingContentsOf: broken)) { error in
            XCTAssertTrue(error.localizedDescription.contains("Broken.cdm"), error.localizedDescription)
        }
    }
}
