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

    // MARK: Batch requests

    /// A context reading what the store kept: on a reopened store where the kind keeps its
    /// objects across coordinators (every kind but the in-memory store), on the same store otherwise.
    private func readBack(_ kind: StoreKind, _ container: NSPersistentContainer) throws -> NSManagedObjectContext {
        guard kind != .inMemory else { return container.newBackgroundContext() }
        let coordinator = container.persistentStoreCoordinator
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        let reopened = NSPersistentContainer(name: "Reopened", managedObjectModel: Self.model)
        reopened.persistentStoreDescriptions = container.persistentStoreDescriptions
        var failure: Error?
        reopened.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        return reopened.newBackgroundContext()
    }

    private func one(_ entity: String, _ format: String, _ argument: Any, in context: NSManagedObjectContext) throws -> NSManagedObject {
        let objects = try context.all(entity, where: format, argument)
        try require(objects, count: 1, "\(entity) where \(format) \(argument)")
        return objects[0]
    }

    func testBatchUpdateRecomputesDerivedValuesOnEveryStore() {
        forEachKind { kind, container in
            let context = container.viewContext
            let ann = context.make("Owner", ["name": "Ann"])
            context.make("Item", ["title": "a", "price": 1.0, "owner": ann])
            context.make("Item", ["title": "b", "price": 2.0, "owner": ann])
            context.make("Owner", ["name": "Bob"])
            try context.save()

            // A source attribute of the owner's own derivations, and of its items' owner.name.
            let rename = NSBatchUpdateRequest(entityName: "Owner")
            rename.predicate = NSPredicate(format: "name == %@", "Ann")
            rename.propertiesToUpdate = ["name": "Åsa Öberg"]
            rename.resultType = .updatedObjectsCountResultType
            XCTAssertEqual((try context.execute(rename) as? NSBatchUpdateResult)?.result as? Int, 1, "[\(kind)] only the owner the request matched")
            // A source attribute of the owner's items.@sum.price, one relationship away.
            let reprice = NSBatchUpdateRequest(entityName: "Item")
            reprice.predicate = NSPredicate(format: "title == %@", "a")
            reprice.propertiesToUpdate = ["price": NSExpression(forConstantValue: 5.0)]
            reprice.resultType = .updatedObjectIDsResultType
            let repriced = (try context.execute(reprice) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID]
            XCTAssertEqual(repriced?.count, 1, "[\(kind)] the owner whose total changed is not among the updated objects")

            let reader = try readBack(kind, container)
            try reader.performAndWait {
                let owner = try one("Owner", "searchName == %@", "asa oberg", in: reader)
                XCTAssertEqual(owner.value(forKey: "lowerName") as? String, "åsa öberg", "[\(kind)]")
                XCTAssertEqual(owner.value(forKey: "upperName") as? String, "ÅSA ÖBERG", "[\(kind)]")
                XCTAssertEqual(owner.value(forKey: "nameCopy") as? String, "Åsa Öberg", "[\(kind)]")
                XCTAssertEqual(owner.value(forKey: "itemCount") as? Int64, 2, "[\(kind)]")
                XCTAssertEqual(owner.value(forKey: "total") as? Double, 7, "[\(kind)]")
                let items = try reader.all("Item", sortedBy: "title")
                XCTAssertEqual(items.map { $0.value(forKey: "ownerName") as? String }, ["Åsa Öberg", "Åsa Öberg"], "[\(kind)]")
                XCTAssertEqual(try one("Owner", "name == %@", "Bob", in: reader).value(forKey: "searchName") as? String, "bob", "[\(kind)] untouched")
            }
        }
    }

    /// Apple's batch inserts set attributes only, so they change no other object's `@count`:
    /// the inserted objects get their own derived values.
    func testBatchInsertComputesTheInsertedObjectsDerivedValuesOnEveryStore() {
        forEachKind { kind, container in
            let context = container.viewContext
            let before = Date()
            let insert = NSBatchInsertRequest(entityName: "Owner", objects: [["name": "Zoë"], ["name": "Ünal"]])
            insert.resultType = .count
            XCTAssertEqual((try context.execute(insert) as? NSBatchInsertResult)?.result as? Int, 2, "[\(kind)]")
            let after = Date()
            let items = NSBatchInsertRequest(entityName: "Item", objects: [["title": "loose", "price": 3.0]])
            items.resultType = .objectIDs
            XCTAssertEqual(((try context.execute(items) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])?.count, 1, "[\(kind)]")

            let reader = try readBack(kind, container)
            try reader.performAndWait {
                let zoe = try one("Owner", "searchName == %@", "zoe", in: reader)
                XCTAssertEqual(zoe.value(forKey: "upperName") as? String, "ZOË", "[\(kind)]")
                XCTAssertEqual(zoe.value(forKey: "itemCount") as? Int64, 0, "[\(kind)]")
                let stamp = try XCTUnwrap(zoe.value(forKey: "stamp") as? Date, "[\(kind)]")
                XCTAssertTrue(stamp >= before.addingTimeInterval(-1) && stamp <= after.addingTimeInterval(1), "[\(kind)] \(stamp)")
                XCTAssertEqual(try one("Owner", "lowerName == %@", "ünal", in: reader).value(forKey: "searchName") as? String, "unal", "[\(kind)]")
                XCTAssertNil(try one("Item", "title == %@", "loose", in: reader).value(forKey: "ownerName"), "[\(kind)]")
            }
        }
    }

    func testBatchDeleteRecomputesCountsOnEveryStore() {
        forEachKind { kind, container in
            let context = container.viewContext
            let ann = context.make("Owner", ["name": "Ann"])
            for (title, price) in [("a", 1.0), ("b", 2.0), ("c", 4.0)] { context.make("Item", ["title": title, "price": price, "owner": ann]) }
            let bob = context.make("Owner", ["name": "Bob"])
            let bobsItem = context.make("Item", ["title": "d", "price": 8.0, "owner": bob])
            try context.save()
            XCTAssertEqual(ann.value(forKey: "itemCount") as? Int64, 3, "[\(kind)]")

            // By fetch request: two of Ann's three items.
            let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
            fetch.predicate = NSPredicate(format: "title IN %@", ["b", "c"])
            let byFetch = NSBatchDeleteRequest(fetchRequest: fetch)
            byFetch.resultType = .resultTypeCount
            XCTAssertEqual((try context.execute(byFetch) as? NSBatchDeleteResult)?.result as? Int, 2, "[\(kind)] the owner recomputed is not counted")
            // By ID: Bob's only item.
            let byID = NSBatchDeleteRequest(objectIDs: [bobsItem.objectID])
            byID.resultType = .resultTypeObjectIDs
            XCTAssertEqual((try context.execute(byID) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID], [bobsItem.objectID], "[\(kind)]")

            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let owner = try one("Owner", "name == %@", "Ann", in: reader)
                XCTAssertEqual(owner.value(forKey: "itemCount") as? Int64, 1, "[\(kind)]")
                XCTAssertEqual(owner.value(forKey: "total") as? Double, 1, "[\(kind)]")
                // As in Apple's SQLite store, where a to-many is its destinations' foreign keys:
                // the deleted items are gone from the relationship too.
                XCTAssertEqual((owner.value(forKey: "items") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "title") as? String }, ["a"], "[\(kind)]")
                XCTAssertEqual(try one("Owner", "name == %@", "Bob", in: reader).value(forKey: "itemCount") as? Int64, 0, "[\(kind)]")
            }
            // Deleting an owner empties its items' owner.name (batch deletes run no delete rule).
            try context.execute(NSBatchDeleteRequest(objectIDs: [ann.objectID]))

            let reopened = try readBack(kind, container)
            try reopened.performAndWait {
                XCTAssertEqual(try reopened.all("Owner", where: "itemCount == 0").count, 1, "[\(kind)] Bob")
                let left = try reopened.all("Item")
                XCTAssertEqual(left.map { $0.value(forKey: "title") as? String }, ["a"], "[\(kind)]")
                XCTAssertNil(left.first?.value(forKey: "ownerName"), "[\(kind)]")
            }
        }
    }

    // MARK: Migration

    /// Version 1 of a migrated model: `Owner` (`name`, to-many `items`) and `Item` (`title`,
    /// `price`, to-one `owner`), with the derived attributes `derived` adds.
    private static func shopVersion(owner: String = "", item: String = "", ownerName: String = "name", itemExtra: String = "") -> String {
        """
        <entity name="Owner"><attribute name="\(ownerName)" optional="YES" attributeType="String"\(ownerName == "name" ? "" : #" elementID="name""#)/>\(owner)\
        <relationship name="items" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Item" inverseName="owner" inverseEntity="Item"/></entity>
        <entity name="Item"><attribute name="title" optional="YES" attributeType="String"/>\
        <attribute name="price" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>\(itemExtra)\(item)\
        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Owner" inverseName="items" inverseEntity="Owner"/></entity>
        """
    }

    private static func derivedXML(_ name: String, _ type: String, _ expression: String, optional: Bool = true) -> String {
        #"<attribute name="\#(name)" optional="\#(optional ? "YES" : "NO")" attributeType="\#(type)" derived="YES" derivationExpression="\#(expression)"/>"#
    }

    /// The kinds a migration applies to: an in-memory store starts empty, so it has nothing to migrate.
    private static let migratingKinds = StoreKind.allCases.filter { $0 != .inMemory }
    /// The kinds that migrate when opened with a new model version: ``DictionaryIncrementalStore``
    /// keeps no model version hashes in its metadata, so opening it with another version finds
    /// nothing to migrate (its records go through the manager instead, in
    /// ``testMappingModelMigrationComputesDerivedValuesFromTheDestinationOnEveryStore()``).
    private static let migratingInPlaceKinds = migratingKinds.filter { $0 != .incremental }

    private func storeURL(_ kind: StoreKind) throws -> URL {
        _ = Self.model  // registers the custom store classes
        if kind == .postgreSQL {
            guard let url = PostgreSQLTestStores.freshURL() else {
                throw ScenarioStopped(description: "no PostgreSQL server for the tests: \(PostgreSQLTestStores.unavailableReason)")
            }
            return url
        }
        return try MigrationFixtures.folder().appendingPathComponent("Shop.store")
    }

    /// Fills a store of `kind` with `old`, opens it with `new` (migrating at open, as Apple's
    /// container does) and runs `check` on it, then once more after closing and reopening it.
    private func migrate(
        _ kind: StoreKind, from old: String, to new: String, fill: (NSManagedObjectContext) throws -> Void,
        check: (NSManagedObjectContext) throws -> Void
    ) throws {
        let package = try MigrationFixtures.package([("Shop", old), ("Shop 2", new)])
        let url = try storeURL(kind)
        try MigrationFixtures.fill(url, type: kind.type, model: try XcodeModelPackage(contentsOf: package).loadModel(version: "Shop"), fill)
        let current = try XCTUnwrap(NSManagedObjectModel(contentsOf: package))
        for _ in 0..<2 {
            let (container, context) = try MigrationFixtures.open(url, type: kind.type, model: current)
            try context.performAndWait { try check(context) }
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        }
    }

    private static func fillShop(_ context: NSManagedObjectContext) {
        let zola = context.make("Owner", ["name": "Émile Zola"])
        context.make("Item", ["title": "Nana", "price": 10.5, "owner": zola])
        context.make("Item", ["title": "Germinal", "price": 4.5, "owner": zola])
        context.make("Owner", ["name": "Ann"])
    }

    func testMigrationAddingDerivedAttributesComputesThemForExistingObjectsOnEveryStore() {
        let new = Self.shopVersion(
            owner: Self.derivedXML("searchName", "String", "canonical:(name)") + Self.derivedXML("itemCount", "Integer 64", "items.@count", optional: false)
                + Self.derivedXML("total", "Double", "items.@sum.price"),
            item: Self.derivedXML("ownerName", "String", "owner.name"))
        for kind in Self.migratingInPlaceKinds {
            do {
                try migrate(kind, from: Self.shopVersion(), to: new, fill: Self.fillShop) { context in
                    let zola = try one("Owner", "searchName == %@", "emile zola", in: context)
                    XCTAssertEqual(zola.value(forKey: "itemCount") as? Int64, 2, "[\(kind)]")
                    XCTAssertEqual(zola.value(forKey: "total") as? Double, 15, "[\(kind)]")
                    let ann = try one("Owner", "name == %@", "Ann", in: context)
                    XCTAssertEqual(ann.value(forKey: "searchName") as? String, "ann", "[\(kind)]")
                    XCTAssertEqual(ann.value(forKey: "itemCount") as? Int64, 0, "[\(kind)]")
                    let items = try context.all("Item", sortedBy: "title")
                    XCTAssertEqual(items.map { $0.value(forKey: "ownerName") as? String }, ["Émile Zola", "Émile Zola"], "[\(kind)]")
                }
            } catch {
                XCTFail("[\(kind)] \(error)")
            }
        }
    }

    /// A model with derived attributes migrates to one whose derivations read a renamed attribute
    /// and a new one: every migrated object holds the values of the new derivations.
    func testMigrationOfDerivedAttributesKeepsThemRightOnEveryStore() {
        let old = Self.shopVersion(
            owner: Self.derivedXML("searchName", "String", "canonical:(name)") + Self.derivedXML("itemCount", "Integer 64", "items.@count"),
            item: Self.derivedXML("ownerName", "String", "owner.name"))
        let new = Self.shopVersion(
            owner: Self.derivedXML("searchName", "String", "canonical:(fullName)") + Self.derivedXML("itemCount", "Integer 64", "items.@count")
                + Self.derivedXML("quantityTotal", "Integer 64", "items.@sum.quantity"),
            item: Self.derivedXML("ownerName", "String", "owner.fullName"),
            ownerName: "fullName",
            itemExtra: #"<attribute name="quantity" attributeType="Integer 64" defaultValueString="2" usesScalarValueType="YES"/>"#)
        for kind in Self.migratingInPlaceKinds {
            do {
                try migrate(kind, from: old, to: new, fill: Self.fillShop) { context in
                    let zola = try one("Owner", "fullName == %@", "Émile Zola", in: context)
                    XCTAssertEqual(zola.value(forKey: "searchName") as? String, "emile zola", "[\(kind)]")
                    XCTAssertEqual(zola.value(forKey: "itemCount") as? Int64, 2, "[\(kind)]")
                    XCTAssertEqual(zola.value(forKey: "quantityTotal") as? Int64, 4, "[\(kind)]")
                    let ann = try one("Owner", "fullName == %@", "Ann", in: context)
                    XCTAssertEqual(ann.value(forKey: "itemCount") as? Int64, 0, "[\(kind)]")
                    XCTAssertEqual(ann.value(forKey: "quantityTotal") as? Int64, 0, "[\(kind)]")
                    let items = try context.all("Item", sortedBy: "title")
                    XCTAssertEqual(items.map { $0.value(forKey: "ownerName") as? String }, ["Émile Zola", "Émile Zola"], "[\(kind)]")
                }
            } catch {
                XCTFail("[\(kind)] \(error)")
            }
        }
    }

    /// Through ``NSMigrationManager`` with a mapping model: the inferred mapping (rows), and the
    /// same mapping with a value expression that makes it run through managed objects. The derived
    /// values are computed from the destination's values (the upper-cased name).
    func testMappingModelMigrationComputesDerivedValuesFromTheDestinationOnEveryStore() {
        let newEntities = Self.shopVersion(
            owner: Self.derivedXML("searchName", "String", "canonical:(name)") + Self.derivedXML("itemCount", "Integer 64", "items.@count")
                + Self.derivedXML("total", "Double", "items.@sum.price"),
            item: Self.derivedXML("ownerName", "String", "owner.name"))
        for kind in Self.migratingKinds {
            for upperCasing in [false, true] {
                do {
                    let old = try MigrationFixtures.model(Self.shopVersion())
                    let new = try MigrationFixtures.model(newEntities)
                    let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: old, destinationModel: new)
                    if upperCasing {
                        let owners = try XCTUnwrap(mapping.entityMappings?.first { $0.destinationEntityName == "Owner" }, "[\(kind)]")
                        let name = NSPropertyMapping()
                        name.name = "name"
                        name.valueExpression = NSExpression(format: "uppercase:($source.name)")
                        owners.attributeMappings = (owners.attributeMappings ?? []).filter { $0.name != "name" } + [name]
                    }
                    let source = try storeURL(kind)
                    let destination = try storeURL(kind)
                    try MigrationFixtures.fill(source, type: kind.type, model: old, Self.fillShop)
                    try NSMigrationManager(sourceModel: old, destinationModel: new).migrateStore(
                        from: source, sourceType: kind.type, with: mapping, toDestinationURL: destination, destinationType: kind.type)
                    let (container, context) = try MigrationFixtures.open(destination, type: kind.type, model: new)
                    let expected = upperCasing ? "ÉMILE ZOLA" : "Émile Zola"
                    try context.performAndWait {
                        let zola = try one("Owner", "name == %@", expected, in: context)
                        XCTAssertEqual(zola.value(forKey: "searchName") as? String, "emile zola", "[\(kind)] \(upperCasing)")
                        XCTAssertEqual(zola.value(forKey: "itemCount") as? Int64, 2, "[\(kind)] \(upperCasing)")
                        XCTAssertEqual(zola.value(forKey: "total") as? Double, 15, "[\(kind)] \(upperCasing)")
                        let items = try context.all("Item", sortedBy: "title")
                        XCTAssertEqual(items.map { $0.value(forKey: "ownerName") as? String }, [expected, expected], "[\(kind)] \(upperCasing)")
                    }
                    for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
                } catch {
                    XCTFail("[\(kind)] \(upperCasing): \(error)")
                }
            }
        }
    }
}
