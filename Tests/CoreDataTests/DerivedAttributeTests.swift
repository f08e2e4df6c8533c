@testable import CoreData
import Foundation
import XCTest

/// Derived attributes computed when a context saves, on every store kind: key paths, to-one key
/// paths, `canonical:`, `lowercase:`, `uppercase:`, `@count`, `@sum`, `now()`; recomputed when a
/// related object changes; fetched and sorted like stored attributes.
final class DerivedAttributeTests: XCTestCase {
    /// `Owner`: `name`, derived `searchName` (`canonical:(name)`), `lowerName`, `upperName`,
    /// `itemCount` (`items.@count`), `total` (`items.@sum.price`), `stamp` (`now()`), `nameCopy`
    /// (`name`), to-many `items`. `Item`: `title`, `price`, derived `ownerName` (`owner.name`),
    /// to-one `owner`.
    static let model: NSManagedObjectModel = {
        NSPersistentStoreCoordinator.registerStoreClass(DictionaryIncrementalStore.self, type: DictionaryIncrementalStore.storeType)
        NSPersistentStoreCoordinator.registerStoreClass(JSONAtomicStore.self, type: JSONAtomicStore.storeType)
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            return attribute
        }
        func derived(_ name: String, _ type: NSAttributeType, _ format: String) -> NSDerivedAttributeDescription {
            let attribute = NSDerivedAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.derivationExpression = NSExpression(format: format)
            return attribute
        }
        let owner = NSEntityDescription()
        owner.name = "Owner"
        let item = NSEntityDescription()
        item.name = "Item"
        let items = NSRelationshipDescription()
        items.name = "items"
        items.destinationEntity = item
        items.maxCount = 0
        items.deleteRule = .cascadeDeleteRule
        let ownerLink = NSRelationshipDescription()
        ownerLink.name = "owner"
        ownerLink.destinationEntity = owner
        ownerLink.maxCount = 1
        items.inverseRelationship = ownerLink
        ownerLink.inverseRelationship = items
        owner.properties = [
            attribute("name", .stringAttributeType),
            derived("searchName", .stringAttributeType, "canonical:(name)"),
            derived("lowerName", .stringAttributeType, "lowercase:(name)"),
            derived("upperName", .stringAttributeType, "uppercase:(name)"),
            derived("nameCopy", .stringAttributeType, "name"),
            derived("itemCount", .integer64AttributeType, "items.@count"),
            derived("total", .doubleAttributeType, "items.@sum.price"),
            derived("stamp", .dateAttributeType, "now()"),
            items,
        ]
        item.properties = [
            attribute("title", .stringAttributeType),
            attribute("price", .doubleAttributeType),
            derived("ownerName", .stringAttributeType, "owner.name"),
            ownerLink,
        ]
        let model = NSManagedObjectModel()
        model.entities = [owner, item]
        return model
    }()

    private func forEachKind(_ body: (StoreKind, NSPersistentContainer) throws -> Void) {
        for kind in StoreKind.allCases {
            do {
                try body(kind, kind.makeContainer(model: Self.model))
            } catch {
                XCTFail("[\(kind)] \(error)")
            }
        }
    }

    func testDerivedValuesAreComputedAtSaveOnEveryStore() {
        forEachKind { kind, container in
            let context = container.viewContext
            let owner = context.make("Owner", ["name": "Émile Zola"])
            context.make("Item", ["title": "Nana", "price": 10.5, "owner": owner])
            context.make("Item", ["title": "Germinal", "price": 4.5, "owner": owner])
            // Before the save the derived attributes keep their last saved value (none yet).
            XCTAssertNil(owner.value(forKey: "searchName"), "[\(kind)]")
            XCTAssertNil(owner.value(forKey: "itemCount"), "[\(kind)]")
            let before = Date()
            try context.save()
            let after = Date()
            XCTAssertEqual(owner.value(forKey: "searchName") as? String, "emile zola", "[\(kind)]")
            XCTAssertEqual(owner.value(forKey: "lowerName") as? String, "émile zola", "[\(kind)]")
            XCTAssertEqual(owner.value(forKey: "upperName") as? String, "ÉMILE ZOLA", "[\(kind)]")
            XCTAssertEqual(owner.value(forKey: "nameCopy") as? String, "Émile Zola", "[\(kind)]")
            XCTAssertEqual(owner.value(forKey: "itemCount") as? Int64, 2, "[\(kind)]")
            XCTAssertEqual(owner.value(forKey: "total") as? Double, 15, "[\(kind)]")
            let stamp = try XCTUnwrap(owner.value(forKey: "stamp") as? Date, "[\(kind)]")
            XCTAssertTrue(stamp >= before && stamp <= after, "[\(kind)] \(stamp)")
            XCTAssertFalse(context.hasChanges, "[\(kind)]")

            // A fresh context reads what the store kept.
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let items = try reader.all("Item", sortedBy: "title")
                XCTAssertEqual(items.map { $0.value(forKey: "ownerName") as? String }, ["Émile Zola", "Émile Zola"], "[\(kind)]")
                let owners = try reader.all("Owner", where: "searchName == %@", "emile zola")
                XCTAssertEqual(owners.count, 1, "[\(kind)]")
                XCTAssertEqual(owners.first?.value(forKey: "itemCount") as? Int64, 2, "[\(kind)]")
            }
        }
    }

    func testChangesToRelatedObjectsRecomputeInTheSameSave() {
        forEachKind { kind, container in
            let context = container.viewContext
            let owner = context.make("Owner", ["name": "Ann"])
            let first = context.make("Item", ["title": "a", "price": 1.0, "owner": owner])
            try context.save()
            XCTAssertEqual(first.value(forKey: "ownerName") as? String, "Ann", "[\(kind)]")

            // Renaming the owner recomputes its items' owner.name.
            owner.setValue("Beth", forKey: "name")
            try context.save()
            XCTAssertEqual(first.value(forKey: "ownerName") as? String, "Beth", "[\(kind)]")
            XCTAssertEqual(owner.value(forKey: "searchName") as? String, "beth", "[\(kind)]")

            // Adding an item recomputes the owner's count; changing a price, its sum.
            context.make("Item", ["title": "b", "price": 2.0, "owner": owner])
            try context.save()
            XCTAssertEqual(owner.value(forKey: "itemCount") as? Int64, 2, "[\(kind)]")
            XCTAssertEqual(owner.value(forKey: "total") as? Double, 3, "[\(kind)]")
            first.setValue(5.0, forKey: "price")
            try context.save()
            XCTAssertEqual(owner.value(forKey: "total") as? Double, 7, "[\(kind)]")

            // Deleting an item recomputes the count.
            context.delete(first)
            try context.save()
            XCTAssertEqual(owner.value(forKey: "itemCount") as? Int64, 1, "[\(kind)]")
            XCTAssertEqual(owner.value(forKey: "total") as? Double, 2, "[\(kind)]")

            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let owners = try reader.all("Owner")
                XCTAssertEqual(owners.first?.value(forKey: "itemCount") as? Int64, 1, "[\(kind)]")
                XCTAssertEqual(owners.first?.value(forKey: "upperName") as? String, "BETH", "[\(kind)]")
            }
        }
    }

    func testFetchAndSortByDerivedAttributes() {
        forEachKind { kind, container in
            let context = container.viewContext
            for (name, count) in [("Zed", 1), ("amy", 3), ("Bob", 2)] {
                let owner = context.make("Owner", ["name": name])
                for index in 0..<count { context.make("Item", ["title": "\(name)\(index)", "price": 1.0, "owner": owner]) }
            }
            try context.save()
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                XCTAssertEqual(names(try reader.all("Owner", sortedBy: "itemCount")), ["Zed", "Bob", "amy"], "[\(kind)]")
                XCTAssertEqual(names(try reader.all("Owner", sortedBy: "searchName")), ["amy", "Bob", "Zed"], "[\(kind)]")
                XCTAssertEqual(names(try reader.all("Owner", where: "itemCount >= 2", sortedBy: "lowerName")), ["amy", "Bob"], "[\(kind)]")
                XCTAssertEqual(try reader.all("Item", where: "ownerName == %@", "Bob").count, 2, "[\(kind)]")
            }
        }
    }

    func testSettingADerivedAttributeIsMisuse() throws {
        let owner = try XCTUnwrap(Self.model.entitiesByName["Owner"])
        let table = owner.slotTable
        let slot = try XCTUnwrap(table.layout.slot(of: "searchName"))
        XCTAssertTrue(table.traits[slot].isDerived)
        XCTAssertFalse(table.traits[try XCTUnwrap(table.layout.slot(of: "name"))].isDerived)
        XCTAssertEqual(
            NSManagedObject.derivedAttributeMessage("searchName", of: owner),
            "CoreData: 'searchName' of Owner is a derived attribute; its value is computed when the context saves and cannot be set")
    }

    func testAChildContextSaveLeavesDerivationToTheParentsSave() throws {
        let container = try StoreKind.inMemory.makeContainer(model: Self.model)
        let child = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        child.parent = container.viewContext
        let owner = child.make("Owner", ["name": "Kim"])
        try child.save()
        XCTAssertNil(owner.value(forKey: "searchName"))
        let parentOwner = try container.viewContext.existingObject(with: owner.objectID)
        XCTAssertNil(parentOwner.value(forKey: "searchName"))
        try container.viewContext.save()
        XCTAssertEqual(parentOwner.value(forKey: "searchName") as? String, "kim")
    }
}
