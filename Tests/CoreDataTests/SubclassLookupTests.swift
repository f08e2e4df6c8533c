@testable import CoreData
import Foundation
import XCTest

// Subclasses found by the entity's class name alone: none of them is registered or used through
// `init(context:)` before a test looks it up (each is used by one test only).

/// Found by its own name (`representedClassName="LookupCar"`, Xcode's "Current Product Module").
final class LookupCar: NSManagedObject {
    @Managed var name: String?
    private(set) var awakeFromInsertCalls = 0
    override func awakeFromInsert() {
        super.awakeFromInsert()
        awakeFromInsertCalls += 1
    }
}

/// Found by its module-qualified name.
final class LookupTruck: NSManagedObject {}

/// Found by its own name behind a leading `.`.
final class LookupBike: NSManagedObject {}

/// Found by the name of its enclosing type and its own.
enum LookupGarage {
    final class Van: NSManagedObject {}
    final class Cab: NSManagedObject {}
}

/// Two classes of one name: the name alone finds neither.
enum LookupTwinsA { final class LookupTwin: NSManagedObject {} }
enum LookupTwinsB { final class LookupTwin: NSManagedObject {} }

/// Two classes of one name; the nested one is registered, and then wins over the top-level one.
final class LookupRegistered: NSManagedObject {}
enum LookupElsewhere { final class LookupRegistered: NSManagedObject {} }

/// Looked up from many threads at once.
final class LookupScooter: NSManagedObject {}

/// A class that is no managed object, and a struct.
final class LookupNotManaged: NSObject {}
struct LookupStruct {}

/// Also defined in AppleStyleClientTests (linked into the same test bundle): the name alone is
/// ambiguous until this module is registered with `registerModule(named:)`.
final class LookupSharedName: NSManagedObject {}

/// An entity's class name (`representedClassName`) finds its subclass with no registration call,
/// as Apple's Core Data finds it through the Objective-C runtime.
final class SubclassLookupTests: XCTestCase {
    /// One entity per class name, each with a `name` attribute.
    private static let model: NSManagedObjectModel = {
        let classNames = [
            "Car": "LookupCar", "Truck": "CoreDataTests.LookupTruck", "Bike": ".LookupBike",
            "Van": "LookupGarage.Van", "Cab": "CoreDataTests.LookupGarage.Cab",
            "Twin": "LookupTwin", "TwinA": "LookupTwinsA.LookupTwin",
            "Registered": "LookupRegistered", "Missing": "LookupNoSuchClass", "WrongModule": "NoSuchModule.LookupTruck",
            "NotManaged": "LookupNotManaged", "Struct": "LookupStruct", "Shared": "LookupSharedName",
            "Plain": "NSManagedObject", "Scooter": "LookupScooter",
        ]
        let model = NSManagedObjectModel()
        model.entities = classNames.keys.sorted().map { entityName in
            let entity = NSEntityDescription()
            entity.name = entityName
            entity.managedObjectClassName = classNames[entityName]
            let name = NSAttributeDescription()
            name.name = "name"
            name.attributeType = .stringAttributeType
            entity.properties = [name]
            return entity
        }
        return model
    }()

    private func makeContainer(_ kind: StoreKind = .inMemory) throws -> NSPersistentContainer {
        _ = StoreKind.sharedModel  // registers the custom store kinds
        return try kind.makeContainer(model: Self.model)
    }

    private func makeContext() throws -> NSManagedObjectContext {
        try makeContainer().viewContext
    }

    private func warnings(naming className: String) -> [String] {
        EntityClassRegistry.warnings.filter { $0.contains("'\(className)'") }
    }

    func testAnUnqualifiedClassNameFindsItsClassInsertedAndFetchedOnEveryStore() throws {
        for kind in StoreKind.allCases {
            let container = try makeContainer(kind)
            let context = container.viewContext
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            XCTAssertTrue(type(of: car) == LookupCar.self, "[\(kind)] \(type(of: car))")
            XCTAssertEqual((car as? LookupCar)?.awakeFromInsertCalls, 1, "[\(kind)]")
            (car as? LookupCar)?.name = "Beetle"
            try context.save()

            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                let fetched = try fresh.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
                try require(fetched, count: 1, "[\(kind)] cars")
                XCTAssertTrue(type(of: fetched[0]) == LookupCar.self, "[\(kind)] \(type(of: fetched[0]))")
                XCTAssertEqual((fetched[0] as? LookupCar)?.name, "Beetle", "[\(kind)]")
                let typed = try fresh.fetch(NSFetchRequest<LookupCar>(entityName: "Car"))
                XCTAssertEqual(typed.map(\.name), ["Beetle"], "[\(kind)]")
            }
        }
        XCTAssertEqual(warnings(naming: "LookupCar"), [])
    }

    func testModuleQualifiedAndDotPrefixedNamesFindTheirClasses() throws {
        let context = try makeContext()
        XCTAssertTrue(type(of: context.make("Truck")) == LookupTruck.self)
        XCTAssertTrue(type(of: context.make("Bike")) == LookupBike.self)
        XCTAssertEqual(warnings(naming: "CoreDataTests.LookupTruck"), [])
        XCTAssertEqual(warnings(naming: "LookupBike"), [])
    }

    func testANestedClassIsFoundByItsEnclosingTypesName() throws {
        let context = try makeContext()
        XCTAssertTrue(type(of: context.make("Van")) == LookupGarage.Van.self)
        XCTAssertTrue(type(of: context.make("Cab")) == LookupGarage.Cab.self)
        XCTAssertTrue(LookupGarage.Van.entity() === context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Van"])
        XCTAssertTrue(type(of: LookupGarage.Cab(context: context)) == LookupGarage.Cab.self)
    }

    func testANameThatIsNoClassGivesPlainObjectsAndOneWarning() throws {
        let context = try makeContext()
        let first = context.make("Missing")
        let second = context.make("Missing")
        XCTAssertTrue(type(of: first) == NSManagedObject.self)
        XCTAssertTrue(type(of: second) == NSManagedObject.self)
        first.setValue("still usable", forKey: "name")
        try context.save()
        XCTAssertEqual(
            warnings(naming: "LookupNoSuchClass"),
            ["CoreData: warning: Unable to load class named 'LookupNoSuchClass' for entity 'Missing'.  Class not found, using default NSManagedObject instead."],
            "Apple's warning, printed once per class name")

        XCTAssertTrue(type(of: context.make("WrongModule")) == NSManagedObject.self, "a module prefix must name the class's module")
        XCTAssertEqual(warnings(naming: "NoSuchModule.LookupTruck").count, 1)
        XCTAssertTrue(type(of: context.make("Struct")) == NSManagedObject.self)
        XCTAssertEqual(warnings(naming: "LookupStruct").count, 1)
        XCTAssertTrue(type(of: context.make("Plain")) == NSManagedObject.self)
        XCTAssertEqual(warnings(naming: "NSManagedObject"), [], "NSManagedObject itself is no miss")
    }

    func testAClassThatIsNoManagedObjectSubclassIsNotUsed() throws {
        let context = try makeContext()
        XCTAssertTrue(type(of: context.make("NotManaged")) == NSManagedObject.self)
        let warning = warnings(naming: "LookupNotManaged")
        XCTAssertEqual(warning.count, 1)
        XCTAssertTrue(warning.first?.contains("is not a subclass of NSManagedObject") ?? false, "\(warning)")
    }

    func testANameTwoClassesShareFindsNeitherUntilQualified() throws {
        let context = try makeContext()
        XCTAssertTrue(type(of: context.make("Twin")) == NSManagedObject.self)
        let warning = warnings(naming: "LookupTwin")
        XCTAssertEqual(warning.count, 1)
        XCTAssertTrue(warning.first?.hasPrefix("CoreData: warning: Failed to find a unique match for an NSEntityDescription to a managed object subclass") ?? false, "\(warning)")
        XCTAssertTrue(warning.first?.contains("CoreDataTests.LookupTwinsA.LookupTwin, CoreDataTests.LookupTwinsB.LookupTwin") ?? false, "\(warning)")
        XCTAssertTrue(type(of: context.make("TwinA")) == LookupTwinsA.LookupTwin.self)
    }

    func testARegisteredClassIsTheFastPathAndWinsOverTheSearch() throws {
        let container = try makeContainer()
        let context = container.viewContext
        _ = StoreKind.sharedModel  // registers AuthorObject: CoreDataTests is a module of registered classes
        XCTAssertTrue(
            type(of: context.make("Registered")) == LookupRegistered.self,
            "found as CoreDataTests.LookupRegistered, the one top-level class of the name in the modules of registered classes")
        NSManagedObject.registerSubclasses(LookupElsewhere.LookupRegistered.self)
        XCTAssertTrue(
            type(of: context.make("Registered")) == LookupElsewhere.LookupRegistered.self,
            "the registered class wins over the search, and registering clears the cached answer")
        try context.save()
        let fresh = container.newBackgroundContext()
        let types = try fresh.performAndWait { try fresh.all("Registered").map { String(reflecting: type(of: $0)) } }
        XCTAssertEqual(types, ["CoreDataTests.LookupElsewhere.LookupRegistered", "CoreDataTests.LookupElsewhere.LookupRegistered"])
        XCTAssertEqual(warnings(naming: "LookupRegistered"), [])
    }

    func testARegisteredModuleIsSearchedFirst() throws {
        // A class of each test module registered: both are modules of registered classes, and
        // each has a LookupSharedName.
        guard let marker = _typeByName("AppleStyleClientTests.LookupAppleModuleMarker") as? NSManagedObject.Type,
              _typeByName("AppleStyleClientTests.LookupSharedName") != nil
        else {
            throw XCTSkip("AppleStyleClientTests is not linked into this test bundle")
        }
        _ = StoreKind.sharedModel
        NSManagedObject.registerSubclasses(marker)
        let context = try makeContext()
        XCTAssertTrue(type(of: context.make("Shared")) == NSManagedObject.self, "one class of the name in each test module")
        let warning = warnings(naming: "LookupSharedName")
        XCTAssertEqual(warning.count, 1)
        XCTAssertTrue(warning.first?.contains("AppleStyleClientTests.LookupSharedName, CoreDataTests.LookupSharedName") ?? false, "\(warning)")
        NSManagedObject.registerModule(named: "CoreDataTests")
        XCTAssertTrue(type(of: context.make("Shared")) == LookupSharedName.self)
        XCTAssertTrue(type(of: context.make("Twin")) == NSManagedObject.self, "a registered module does not settle nested names")
    }

    func testLookupsFromManyThreadsAgree() throws {
        let context = try makeContext()
        guard let entity = context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Scooter"] else {
            return XCTFail("no Scooter entity")
        }
        final class Found: @unchecked Sendable {
            let lock = NSLock()
            var names: Set<String> = []
        }
        let found = Found()
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let name = String(reflecting: EntityClassRegistry.objectClass(for: entity))
            found.lock.lock()
            found.names.insert(name)
            found.lock.unlock()
        }
        XCTAssertEqual(found.names, ["CoreDataTests.LookupScooter"])
    }
}
