@testable import CoreData
import Foundation
import XCTest

/// A compiled model's validation predicates, fetch request templates, fetched properties, derived
/// and composite attributes and configurations (Formats/compiled-model.md §2–2.3) work as those of a
/// source model do, on every store: the derived `SampleModel3+Templates.mom` (Xcode's compiled
/// SampleModel3 with them added under the keys Core Data's encoders write).
final class CompiledModelTemplateTests: XCTestCase {
    private static func load(_ name: String) -> NSManagedObjectModel {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CoreDataModelTests/Fixtures/derived/\(name)")
        guard let model = NSManagedObjectModel(contentsOf: url) else { preconditionFailure("CoreData tests: \(url.path) does not load") }
        return model
    }

    private static let model = load("SampleModel3+Templates.mom")
    /// The same with a composite attribute, which the SQLite and PostgreSQL stores and the test's
    /// dictionary-backed incremental store do not keep.
    private static let compositeModel = load("SampleModel3+Composite.mom")

    private func forEachStore(
        model: NSManagedObjectModel = CompiledModelTemplateTests.model, kinds: [StoreKind] = StoreKind.allCases,
        _ body: (StoreKind, NSManagedObjectContext) throws -> Void
    ) {
        _ = StoreKind.sharedModel  // registers the user-written store types
        for kind in kinds {
            do {
                try body(kind, try kind.makeContainer(model: model).viewContext)
            } catch {
                XCTFail("[\(kind)] \(error)")
            }
        }
    }

    private func seed(_ context: NSManagedObjectContext) throws -> (ada: NSManagedObject, byron: NSManagedObject, grace: NSManagedObject) {
        func person(_ first: String, _ last: String) -> NSManagedObject {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue(first, forKey: "firstName")
            person.setValue(last, forKey: "lastName")
            person.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "updatedAt")
            return person
        }
        func car(_ plate: String, _ model: String, _ owner: NSManagedObject, entity: String = "Car") {
            let car = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
            car.setValue(plate, forKey: "numberPlate")
            car.setValue(model, forKey: "model")
            car.setValue(owner, forKey: "owner")
        }
        let ada = person("Ada", "Lovelace"), byron = person("Byron", "Lovelace"), grace = person("Grace", "Hopper")
        car("AL-1", "Engine GT", ada)
        car("BL-2", "Tourer", byron, entity: "SportCar")
        car("GH-3", "Compiler GT", grace)
        try context.save()
        return (ada, byron, grace)
    }

    func testATemplateWithVariablesFetches() {
        forEachStore { kind, context in
            _ = try seed(context)
            let model = Self.model
            XCTAssertEqual(model.fetchRequestTemplate(forName: "carsWithPlate")?.predicate?.predicateFormat,
                           "numberPlate == $PLATE AND model CONTAINS \"GT\"", "[\(kind)]")
            let request = try XCTUnwrap(model.fetchRequestFromTemplate(withName: "carsWithPlate", substitutionVariables: ["PLATE": "GH-3"]))
            XCTAssertEqual(request.fetchLimit, 5)
            XCTAssertEqual(request.relationshipKeyPathsForPrefetching ?? [], ["owner", "createdBy"])
            let found = try context.fetch(request).compactMap { $0 as? NSManagedObject }
            XCTAssertEqual(found.map { $0.value(forKey: "numberPlate") as? String }, ["GH-3"], "[\(kind)]")
            let none = try XCTUnwrap(model.fetchRequestFromTemplate(withName: "carsWithPlate", substitutionVariables: ["PLATE": "BL-2"]))
            XCTAssertTrue(try context.fetch(none).isEmpty, "[\(kind)] BL-2 is no GT")
            let everyone = try XCTUnwrap(model.fetchRequestTemplate(forName: "everyone"))
            XCTAssertEqual(try context.count(for: everyone), 3, "[\(kind)]")
        }
    }

    func testAFetchedPropertyReadsThroughItsSource() {
        forEachStore { kind, context in
            let (ada, _, grace) = try seed(context)
            context.refreshAllObjects()
            let lovelaceCars = (ada.value(forKey: "carsWithItsLastName") as? [NSManagedObject] ?? []).compactMap { $0.value(forKey: "numberPlate") as? String }
            XCTAssertEqual(Set(lovelaceCars), ["AL-1", "BL-2"], "[\(kind)] subentities included")
            let hopperCars = (grace.value(forKey: "carsWithItsLastName") as? [NSManagedObject] ?? []).compactMap { $0.value(forKey: "numberPlate") as? String }
            XCTAssertEqual(hopperCars, ["GH-3"], "[\(kind)]")
        }
    }

    func testDerivedAttributesAreComputed() {
        forEachStore { kind, context in
            _ = try seed(context)
            context.reset()
            let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            let counts = Dictionary(uniqueKeysWithValues: people.map { ($0.value(forKey: "firstName") as? String ?? "", $0.value(forKey: "carCount") as? Int) })
            XCTAssertEqual(counts, ["Ada": 1, "Byron": 1, "Grace": 1], "[\(kind)]")
        }
    }

    func testCompositeAttributesWork() {
        forEachStore(model: Self.compositeModel, kinds: [.inMemory, .binary, .xml]) { kind, context in
            let ada = try seed(context).ada
            ada.setValue(["city": "London", "zip": "W1"], forKey: "address")
            try context.save()
            context.reset()
            let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            let byName = Dictionary(uniqueKeysWithValues: people.map { ($0.value(forKey: "firstName") as? String ?? "", $0) })
            XCTAssertEqual(byName["Ada"]?.value(forKey: "carCount") as? Int, 1, "[\(kind)]")
            XCTAssertEqual(byName["Ada"]?.value(forKeyPath: "address.city") as? String, "London", "[\(kind)]")
            let londoners = NSFetchRequest<NSManagedObject>(entityName: "Person")
            londoners.predicate = NSPredicate(format: "address.zip == %@", "W1")
            XCTAssertEqual(try context.fetch(londoners).compactMap { $0.value(forKey: "lastName") as? String }, ["Lovelace"], "[\(kind)]")
        }
    }

    /// The compiled model's validation predicates are checked at save: a failing one reports its
    /// warning, an error code (`NSValidationStringTooShortError`) or a message.
    func testValidationPredicatesAreChecked() {
        forEachStore { kind, context in
            let maker = NSEntityDescription.insertNewObject(forEntityName: "Maker", into: context)
            maker.setValue("X", forKey: "name")
            XCTAssertThrowsError(try context.save(), "[\(kind)]") { error in
                XCTAssertEqual((error as NSError).code, NSValidationStringTooShortError, "[\(kind)] \(error)")
            }
            maker.setValue("XY", forKey: "name")
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue(Date(), forKey: "updatedAt")
            person.setValue("ada", forKey: "firstName")
            XCTAssertThrowsError(try context.save(), "[\(kind)]") { error in
                XCTAssertTrue((error as NSError).localizedDescription.contains("A first name starts with a capital"), "[\(kind)] \(error)")
            }
            person.setValue("Ada", forKey: "firstName")
            try context.save()
            XCTAssertFalse(maker.objectID.isTemporaryID, "[\(kind)]")
        }
    }

    /// The model's entities are all related, so one coordinator takes one of its two
    /// configurations: its store holds that configuration's entities and no other.
    func testAConfigurationDecidesWhatItsStoreHolds() throws {
        let model = Self.model
        XCTAssertEqual(Set(model.configurations), ["Vehicles", "People"])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let people = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "People", at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        person.setValue(Date(), forKey: "updatedAt")
        try context.save()
        XCTAssertTrue(person.objectID.persistentStore === people)

        let maker = NSEntityDescription.insertNewObject(forEntityName: "Maker", into: context)
        maker.setValue("Analytical", forKey: "name")
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertTrue((error as NSError).localizedDescription.contains("'Maker'"), "\(error)")
        }
    }
}
