@testable import CoreData
import Foundation
import XCTest

/// Composite attributes: a dictionary value whose elements each store keeps as a value of its
/// own, reachable by key path in code, predicates and sort descriptors, on every store that
/// takes them: the in-memory, binary and XML stores. The Apple SQLite store refuses them (Apple's
/// column layout is not reproduced); stores written by users on `NSIncrementalStore` and
/// `NSAtomicStore` do not get them (Apple supports composites only in SQLite stores).
final class CompositeAttributeTests: XCTestCase {
    /// `Person`: `name`, composite `address` { `city` (optional), `zip` (required, default
    /// "00000"), `geo` { `lat` (Double, optional) } }.
    static let model: NSManagedObjectModel = {
        NSPersistentStoreCoordinator.registerStoreClass(DictionaryIncrementalStore.self, type: DictionaryIncrementalStore.storeType)
        NSPersistentStoreCoordinator.registerStoreClass(JSONAtomicStore.self, type: JSONAtomicStore.storeType)
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, defaultValue: Any? = nil) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = optional
            attribute.defaultValue = defaultValue
            return attribute
        }
        let geo = NSCompositeAttributeDescription()
        geo.name = "geo"
        geo.elements = [attribute("lat", .doubleAttributeType)]
        let address = NSCompositeAttributeDescription()
        address.name = "address"
        address.elements = [attribute("city", .stringAttributeType), attribute("zip", .stringAttributeType, optional: false, defaultValue: "00000"), geo]
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [attribute("name", .stringAttributeType), address]
        let model = NSManagedObjectModel()
        model.entities = [person]
        return model
    }()

    private static let kinds: [StoreKind] = [.inMemory, .binary, .xml]

    private func forEachKind(_ body: (StoreKind, NSPersistentContainer) throws -> Void) {
        for kind in Self.kinds {
            do {
                try body(kind, kind.makeContainer(model: Self.model))
            } catch {
                XCTFail("[\(kind)] \(error)")
            }
        }
    }

    func testValueIsADictionaryOfItsElements() throws {
        let container = try StoreKind.inMemory.makeContainer(model: Self.model)
        let person = container.viewContext.make("Person", ["name": "Ada"])
        // Defaults apply per element; an optional element without a value is left out.
        XCTAssertEqual(person.value(forKey: "address") as? [String: String], ["zip": "00000"])
        person.setValue(["city": "Paris", "zip": "75001", "geo": ["lat": 48.85]], forKey: "address")
        let value = try XCTUnwrap(person.value(forKey: "address") as? [String: Any])
        XCTAssertEqual(value["city"] as? String, "Paris")
        XCTAssertEqual(value["zip"] as? String, "75001")
        XCTAssertEqual((value["geo"] as? [String: Any])?["lat"] as? Double, 48.85)
        XCTAssertEqual(person.value(forKeyPath: "address.city") as? String, "Paris")
        XCTAssertEqual(person.value(forKeyPath: "address.geo.lat") as? Double, 48.85)
        XCTAssertEqual(person.changedValues()["address"].flatMap { $0 as? [String: Any] }?["city"] as? String, "Paris")
        // Setting a dictionary without an element clears that element.
        person.setValue(["zip": "1"], forKey: "address")
        XCTAssertNil(person.value(forKeyPath: "address.city"))
        XCTAssertEqual(person.value(forKey: "address") as? [String: String], ["zip": "1"])
    }

    func testCompositeValuesSaveFetchAndSortOnEveryStore() {
        forEachKind { kind, container in
            let context = container.viewContext
            for (name, city, zip) in [("Ada", "Paris", "75001"), ("Bob", "Lyon", "69001"), ("Cy", "Arles", "13200")] {
                context.make("Person", ["name": name, "address": ["city": city, "zip": zip, "geo": ["lat": Double(zip.prefix(2)) ?? 0]]])
            }
            context.make("Person", ["name": "Dee"])
            try context.save()

            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let paris = try reader.all("Person", where: "address.city == %@", "Paris")
                XCTAssertEqual(names(paris), ["Ada"], "[\(kind)]")
                let value = paris.first?.value(forKey: "address") as? [String: Any]
                XCTAssertEqual(value?["zip"] as? String, "75001", "[\(kind)]")
                XCTAssertEqual((value?["geo"] as? [String: Any])?["lat"] as? Double, 75, "[\(kind)]")
                XCTAssertEqual(names(try reader.all("Person", where: "address.city != nil", sortedBy: "address.city")), ["Cy", "Bob", "Ada"], "[\(kind)]")
                XCTAssertEqual(names(try reader.all("Person", where: "address.geo.lat > 20", sortedBy: "address.zip")), ["Bob", "Ada"], "[\(kind)]")
                let dee = try reader.all("Person", where: "name == 'Dee'")
                XCTAssertEqual(dee.first?.value(forKey: "address") as? [String: String], ["zip": "00000"], "[\(kind)]")
                XCTAssertNil(dee.first?.value(forKeyPath: "address.city"), "[\(kind)]")
            }

            // An update of one element saves.
            let ada = try context.all("Person", where: "name == 'Ada'")
            ada.first?.setValue(["city": "Nice", "zip": "06000"], forKey: "address")
            try context.save()
            let again = container.newBackgroundContext()
            try again.performAndWait {
                XCTAssertEqual(names(try again.all("Person", where: "address.city == 'Nice'")), ["Ada"], "[\(kind)]")
                XCTAssertNil(try again.all("Person", where: "name == 'Ada'").first?.value(forKeyPath: "address.geo.lat"), "[\(kind)]")
            }
        }
    }

    func testARequiredElementIsValidated() throws {
        let container = try StoreKind.binary.makeContainer(model: Self.model)
        let context = container.viewContext
        let person = context.make("Person", ["name": "Eve"])
        person.setValue(["city": "Rome"], forKey: "address")
        XCTAssertThrowsError(try context.save()) { error in
            let error = error as NSError
            XCTAssertEqual(error.code, NSValidationMissingMandatoryPropertyError)
            XCTAssertEqual(error.userInfo[NSValidationKeyErrorKey] as? String, "address.zip")
        }
        person.setValue(["city": "Rome", "zip": "00100"], forKey: "address")
        XCTAssertNoThrow(try context.save())
    }

    func testTheSQLStoresRefuseCompositeAttributes() {
        for kind in [StoreKind.appleSQLite, .postgreSQL] {
            XCTAssertThrowsError(try kind.makeContainer(model: Self.model)) { error in
                XCTAssertTrue("\(error)".contains("composite attribute 'Person.address'"), "[\(kind)] \(error)")
            }
        }
    }
}
