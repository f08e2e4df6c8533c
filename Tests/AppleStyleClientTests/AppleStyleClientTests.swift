// Code written the way Apple-platform Core Data code is written: Foundation, XCTest and CoreData
// imported side by side, Apple's names and spellings, no Linux-specific imports. If this file stops
// compiling, code shared with an iOS or macOS app stops compiling too.
import Foundation
import XCTest
import CoreData

final class AppleStyleClientTests: XCTestCase {
    private var fixtures: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CoreDataModelTests/Fixtures/models")
    }

    /// The model-in-code recipe from Apple's documentation and countless blog posts.
    func makeModel() -> NSManagedObjectModel {
        let model = NSManagedObjectModel()

        let person = NSEntityDescription()
        person.name = "Person"
        person.managedObjectClassName = "Person"

        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false

        let age = NSAttributeDescription()
        age.name = "age"
        age.type = .integer16
        age.defaultValue = Int16(0)

        let pets = NSRelationshipDescription()
        pets.name = "pets"
        pets.minCount = 0
        pets.maxCount = 0
        pets.deleteRule = .cascadeDeleteRule

        let pet = NSEntityDescription()
        pet.name = "Pet"
        let owner = NSRelationshipDescription()
        owner.name = "owner"
        owner.maxCount = 1
        owner.deleteRule = .nullifyDeleteRule
        owner.destinationEntity = person
        owner.inverseRelationship = pets
        pets.destinationEntity = pet
        pets.inverseRelationship = owner

        person.properties = [name, age, pets]
        pet.properties = [owner]
        person.uniquenessConstraints = [["name"]]
        let byName = NSFetchIndexDescription(name: "byName", elements: [NSFetchIndexElementDescription(property: name, collationType: .binary)])
        byName.partialIndexPredicate = NSPredicate(format: "name != nil")
        person.indexes = [byName]
        model.entities = [person, pet]
        return model
    }

    func testModelBuiltInCodeReadsBackLikeApples() {
        let model = makeModel()
        guard let person = model.entitiesByName["Person"] else {
            return XCTFail("Person entity missing")
        }
        XCTAssertEqual(person.attributesByName["age"]?.attributeType, .integer16AttributeType)
        XCTAssertEqual(person.attributesByName["age"]?.defaultValue as? Int16, 0)
        XCTAssertEqual(person.relationshipsByName["pets"]?.isToMany, true)
        XCTAssertEqual(person.relationshipsByName["pets"]?.inverseRelationship?.name, "owner")
        XCTAssertEqual(model.entitiesByName["Pet"]?.relationshipsByName["owner"]?.isToMany, false)
        XCTAssertEqual(person.versionHash.count, 32)
        XCTAssertEqual(model.entityVersionHashesByName.keys.sorted(), ["Person", "Pet"])
        XCTAssertEqual(person.indexes.first?.partialIndexPredicate?.predicateFormat, "name != nil")
    }

    func testLoadingAModelTheAppleWay() throws {
        let url = fixtures.appendingPathComponent("CoreDataPlus/SampleModel.xcdatamodeld")
        guard let model = NSManagedObjectModel(contentsOf: url) else {
            return XCTFail("SampleModel failed to load")
        }
        let entity: NSEntityDescription? = model.entitiesByName["Car"]
        let attribute: NSAttributeDescription? = entity?.attributesByName["numberPlate"]
        XCTAssertEqual(attribute?.isOptional, false)
        XCTAssertEqual(model.versionIdentifiers, ["1"])

        let missing = fixtures.appendingPathComponent("Nope.xcdatamodeld")
        XCTAssertNil(NSManagedObjectModel(contentsOf: missing))
    }

    /// Apple's `Bundle.main.url(forResource: "Model", withExtension: "momd")` finds a compiled
    /// model; on Linux a copy of the `.xcdatamodeld` named `Model.momd` plays that part.
    func testMergedModelFromABundleFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(
            at: fixtures.appendingPathComponent("CoreDataPlus/SampleModel.xcdatamodeld"),
            to: folder.appendingPathComponent("Sample.momd"))
        try FileManager.default.copyItem(
            at: fixtures.appendingPathComponent("CoreStore/Model.xcdatamodeld/Model.xcdatamodel"),
            to: folder.appendingPathComponent("Store.xcdatamodel"))
        guard let bundle = Bundle(url: folder) else { return XCTFail("no bundle at \(folder.path)") }

        let momd = try XCTUnwrap(bundle.url(forResource: "Sample", withExtension: "momd"))
        XCTAssertEqual(NSManagedObjectModel(contentsOf: momd)?.entities.count, 4)

        let merged = try XCTUnwrap(NSManagedObjectModel.mergedModel(from: [bundle]))
        XCTAssertEqual(
            merged.entities.compactMap(\.name).sorted(),
            ["Car", "ExpensiveSportCar", "Person", "SportCar", "TestEntity1AAA", "TestEntity2"])
        XCTAssertEqual(merged.configurations, ["Config1", "Config2"])
    }

    func testMergedModelOfAnEmptyBundleIsNil() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try XCTUnwrap(Bundle(url: folder))
        XCTAssertNil(NSManagedObjectModel.mergedModel(from: [bundle]))
    }
}
