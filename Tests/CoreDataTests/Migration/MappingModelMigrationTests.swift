import CoreData
import Foundation
import XCTest

// Foundation on Linux declares an NSExpression of its own (README: importing Foundation beside CoreData).
fileprivate typealias NSExpression = CoreDataPredicate.NSExpression

/// The CoreDataPlus sample's v2 → v3 migration as its authors wrote it: Makers made from each
/// car's `maker` string by an entity migration policy, previous owners and cars from
/// value expressions. Run with a mapping model built in code (here) and read from Xcode's files
/// (`MappingModelFileTests`), on every store type.
final class V2to3MakerPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard let makerName = sInstance.value(forKey: "maker") as? String else { return }
        guard let car = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first,
              let context = car.managedObjectContext
        else {
            throw NSError(domain: "V2to3MakerPolicy", code: 1)
        }
        let maker = context.registeredObjects.first { !$0.isFault && $0.entity.name == "Maker" && $0.value(forKey: "name") as? String == makerName }
            ?? {
                let maker = NSEntityDescription.insertNewObject(forEntityName: "Maker", into: context)
                maker.setValue(makerName, forKey: "name")
                return maker
            }()
        var cars = maker.value(forKey: "cars") as? Set<NSManagedObject> ?? []
        cars.insert(car)
        maker.setValue(cars, forKey: "cars")
    }
}

enum SampleMigration {
    static var v2: NSManagedObjectModel {
        get throws { try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage).loadModel(version: "SampleModel2") }
    }
    static var v3: NSManagedObjectModel {
        get throws { try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage).loadModel(version: "SampleModel3") }
    }

    /// The mapping Xcode compiles from `V2toV3.xcmappingmodel` (the `.cdm` beside the fixtures),
    /// spelled in code.
    static func mappingInCode() -> NSMappingModel {
        func source(_ key: String) -> NSExpression { NSExpression(format: "$source.\(key)") }
        func attributes(_ names: [String], hasSource: Bool = true) -> [NSPropertyMapping] {
            names.map { name in
                let mapping = NSPropertyMapping()
                mapping.name = name
                mapping.valueExpression = hasSource ? source(name) : nil
                return mapping
            }
        }
        func relationship(_ name: String, _ format: String?) -> NSPropertyMapping {
            let mapping = NSPropertyMapping()
            mapping.name = name
            mapping.valueExpression = format.map { NSExpression(format: $0) }
            return mapping
        }
        func everyObject(of entity: String) -> NSExpression {
            NSFetchRequestExpression.expression(
                forFetch: NSExpression(format: #"FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "\#(entity)", "TRUEPREDICATE")"#),
                context: NSExpression(format: "$manager.sourceContext"), countOnly: false)
        }
        let ownerToPerson = #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#
        func car(_ entity: String, extra: [String] = []) -> NSEntityMapping {
            let mapping = NSEntityMapping()
            mapping.name = "\(entity)To\(entity)"
            mapping.mappingType = .customEntityMappingType
            mapping.sourceEntityName = entity
            mapping.destinationEntityName = entity
            mapping.entityMigrationPolicyClassName = "REPLACE_AT_RUNTIME.V2to3MakerPolicy"
            mapping.sourceExpression = everyObject(of: entity)
            mapping.attributeMappings = attributes(extra + ["markedForDeletionAsOf", "model", "numberPlate"])
            mapping.relationshipMappings = [relationship("createdBy", nil), relationship("owner", ownerToPerson), relationship("previousOwners", ownerToPerson)]
            return mapping
        }
        let person = NSEntityMapping()
        person.name = "PersonToPerson"
        person.mappingType = .copyEntityMappingType
        person.sourceEntityName = "Person"
        person.destinationEntityName = "Person"
        person.sourceExpression = everyObject(of: "Person")
        person.attributeMappings = attributes(["firstName", "lastName", "updatedAt"])
        person.relationshipMappings = [
            relationship("cars", #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)"#),
            relationship("previousCars", #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)"#),
        ]
        let maker = NSEntityMapping()
        maker.name = "Maker"
        maker.mappingType = .addEntityMappingType
        maker.destinationEntityName = "Maker"
        maker.attributeMappings = attributes(["name"], hasSource: false)
        maker.relationshipMappings = [relationship("cars", nil)]
        let mapping = NSMappingModel()
        mapping.entityMappings = [car("Car"), car("LuxuryCar", extra: ["isLimitedEdition"]), person, car("SportCar"), maker]
        return mapping
    }

    private static func insert(_ entity: String, _ values: [String: Any], into context: NSManagedObjectContext) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    /// The v2 objects: two people; a car and a sport car of Ada's, a luxury car of Grace's, and a
    /// car with neither maker nor owner.
    static func fillV2(_ url: URL, type: String) throws {
        try MigrationFixtures.fill(url, type: type, model: try v2) { context in
            let ada = insert("Person", ["firstName": "Ada", "lastName": "Lovelace", "updatedAt": Date(timeIntervalSince1970: 1000)], into: context)
            let grace = insert("Person", ["firstName": "Grace", "lastName": "Hopper", "updatedAt": Date(timeIntervalSince1970: 2000)], into: context)
            _ = insert("Car", ["numberPlate": "A-1", "maker": "Fiat", "model": "500", "owner": ada, "markedForDeletionAsOf": Date(timeIntervalSince1970: 5)], into: context)
            _ = insert("Car", ["numberPlate": "B-1"], into: context)
            _ = insert("SportCar", ["numberPlate": "S-1", "maker": "Ferrari", "model": "F40", "owner": ada], into: context)
            _ = insert("LuxuryCar", ["numberPlate": "L-1", "maker": "Ferrari", "isLimitedEdition": true, "owner": grace], into: context)
        }
    }

    /// Checks every object, value and relationship of the migrated store in `context`.
    static func checkV3(in context: NSManagedObjectContext, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let cars = try MigrationFixtures.objects("Car", sortedBy: "numberPlate", in: context)
        let sport = try MigrationFixtures.objects("SportCar", sortedBy: "numberPlate", in: context)
        let luxury = try MigrationFixtures.objects("LuxuryCar", sortedBy: "numberPlate", in: context)
        let people = try MigrationFixtures.objects("Person", sortedBy: "firstName", in: context)
        let makers = try MigrationFixtures.objects("Maker", sortedBy: "name", in: context)
        context.performAndWait {
            func plates(_ value: Any?) -> [String] {
                ((value as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "numberPlate") as? String }.sorted()
            }
            func names(_ value: Any?) -> [String] {
                ((value as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "firstName") as? String }.sorted()
            }
            XCTAssertEqual(cars.map { $0.value(forKey: "numberPlate") as? String }, ["A-1", "B-1"], label, file: file, line: line)
            XCTAssertEqual(sport.map { $0.value(forKey: "numberPlate") as? String }, ["S-1"], label, file: file, line: line)
            XCTAssertEqual(luxury.map { $0.value(forKey: "numberPlate") as? String }, ["L-1"], label, file: file, line: line)
            XCTAssertEqual(makers.map { $0.value(forKey: "name") as? String }, ["Ferrari", "Fiat"], "\(label): one Maker per maker name", file: file, line: line)
            XCTAssertEqual(people.map { $0.value(forKey: "lastName") as? String }, ["Lovelace", "Hopper"], label, file: file, line: line)
            guard cars.count == 2, sport.count == 1, luxury.count == 1, makers.count == 2, people.count == 2 else { return }
            let (a1, b1, s1, l1) = (cars[0], cars[1], sport[0], luxury[0])
            let (ferrari, fiat) = (makers[0], makers[1])
            let (ada, grace) = (people[0], people[1])
            XCTAssertEqual(a1.value(forKey: "model") as? String, "500", label, file: file, line: line)
            XCTAssertEqual(a1.value(forKey: "markedForDeletionAsOf") as? Date, Date(timeIntervalSince1970: 5), label, file: file, line: line)
            XCTAssertEqual(s1.value(forKey: "model") as? String, "F40", label, file: file, line: line)
            XCTAssertEqual(l1.value(forKey: "isLimitedEdition") as? Bool, true, label, file: file, line: line)
            XCTAssertNil(b1.value(forKey: "model"), label, file: file, line: line)
            XCTAssertEqual(ada.value(forKey: "updatedAt") as? Date, Date(timeIntervalSince1970: 1000), label, file: file, line: line)
            XCTAssertEqual(grace.value(forKey: "updatedAt") as? Date, Date(timeIntervalSince1970: 2000), label, file: file, line: line)

            XCTAssertTrue(a1.value(forKey: "createdBy") as? NSManagedObject === fiat, "\(label): A-1 made by Fiat", file: file, line: line)
            XCTAssertTrue(s1.value(forKey: "createdBy") as? NSManagedObject === ferrari, label, file: file, line: line)
            XCTAssertTrue(l1.value(forKey: "createdBy") as? NSManagedObject === ferrari, label, file: file, line: line)
            XCTAssertNil(b1.value(forKey: "createdBy"), label, file: file, line: line)
            XCTAssertEqual(plates(ferrari.value(forKey: "cars")), ["L-1", "S-1"], label, file: file, line: line)
            XCTAssertEqual(plates(fiat.value(forKey: "cars")), ["A-1"], label, file: file, line: line)

            XCTAssertTrue(a1.value(forKey: "owner") as? NSManagedObject === ada, label, file: file, line: line)
            XCTAssertTrue(l1.value(forKey: "owner") as? NSManagedObject === grace, label, file: file, line: line)
            XCTAssertNil(b1.value(forKey: "owner"), label, file: file, line: line)
            XCTAssertEqual(names(a1.value(forKey: "previousOwners")), ["Ada"], "\(label): previous owners from $source.owner", file: file, line: line)
            XCTAssertEqual(names(l1.value(forKey: "previousOwners")), ["Grace"], label, file: file, line: line)
            XCTAssertEqual(names(b1.value(forKey: "previousOwners")), [], label, file: file, line: line)
            XCTAssertEqual(plates(ada.value(forKey: "cars")), ["A-1", "S-1"], label, file: file, line: line)
            XCTAssertEqual(plates(ada.value(forKey: "previousCars")), ["A-1", "S-1"], "\(label): previous cars from $source.cars", file: file, line: line)
            XCTAssertEqual(plates(grace.value(forKey: "previousCars")), ["L-1"], label, file: file, line: line)
        }
    }

    /// Migrates a v2 store of `type` with `mapping` through the manager into a new store of the
    /// same type, opens it and checks it.
    static func migrateAndCheck(type: String, mapping: NSMappingModel, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let folder = try MigrationFixtures.folder()
        let source = folder.appendingPathComponent("v2.store")
        let destination = folder.appendingPathComponent("v3.store")
        try fillV2(source, type: type)
        let manager = NSMigrationManager(sourceModel: try v2, destinationModel: try v3)
        try manager.migrateStore(from: source, sourceType: type, with: mapping, toDestinationURL: destination, destinationType: type)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try v3)
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: destination, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try checkV3(in: context, label, file: file, line: line)
        try coordinator.remove(store)
    }
}

final class MappingModelMigrationTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        NSEntityMigrationPolicy.registerSubclasses(V2to3MakerPolicy.self)
    }

    func testSampleV2ToV3WithAPolicyOnTheFileStores() throws {
        for type in [NSBinaryStoreType, NSXMLStoreType] {
            try SampleMigration.migrateAndCheck(type: type, mapping: SampleMigration.mappingInCode(), type)
        }
    }

    /// An in-memory destination: the objects are made, validated and saved into it. The store
    /// lives only as long as the migration, so the added Maker mapping's policy checks every
    /// object, value and relationship in the destination context at its end, after validation.
    func testSampleV2ToV3WithAPolicyIntoMemory() throws {
        final class Checking: NSEntityMigrationPolicy {
            nonisolated(unsafe) static var checked = false
            override func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {
                try SampleMigration.checkV3(in: manager.destinationContext, "in-memory destination")
                Self.checked = true
            }
        }
        NSEntityMigrationPolicy.register(Checking.self, forClassName: "CheckingPolicy")
        let folder = try MigrationFixtures.folder()
        let source = folder.appendingPathComponent("v2.store")
        try SampleMigration.fillV2(source, type: NSXMLStoreType)
        let destination = folder.appendingPathComponent("v3-memory")
        let mapping = SampleMigration.mappingInCode()
        mapping.entityMappings[4].entityMigrationPolicyClassName = "CheckingPolicy"
        let manager = NSMigrationManager(sourceModel: try SampleMigration.v2, destinationModel: try SampleMigration.v3)
        Checking.checked = false
        try manager.migrateStore(from: source, sourceType: NSXMLStoreType, with: mapping, toDestinationURL: destination, destinationType: NSInMemoryStoreType)
        XCTAssertTrue(Checking.checked)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "an in-memory destination writes no file")
        XCTAssertEqual(manager.migrationProgress, 1)
    }

    func testPolicyOverridesRunInApplesOrder() throws {
        final class Recording: NSEntityMigrationPolicy {
            nonisolated(unsafe) static var calls: [String] = []
            override func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws { Self.calls.append("begin \(mapping.name!)") }
            override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
                Self.calls.append("create \(sInstance.value(forKey: "title") as? String ?? "")")
                try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
            }
            override func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws { Self.calls.append("endInstances") }
            override func createRelationships(forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
                Self.calls.append("relate \(dInstance.value(forKey: "name") as? String ?? "")")
                try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
            }
            override func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws { Self.calls.append("endRelationships") }
            override func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws { Self.calls.append("validate") }
            override func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws { Self.calls.append("end") }
            override func migrationFunction(_ selector: String, arguments: [Any?]) -> Any? {
                selector == "shout:" ? (arguments.first as? String)?.uppercased() : nil
            }
        }
        NSEntityMigrationPolicy.register(Recording.self, forClassName: "MyApp.RecordingPolicy")
        let v1 = try MigrationFixtures.model(#"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/></entity>"#)
        let v2 = try MigrationFixtures.model(#"<entity name="Item"><attribute name="name" attributeType="String"/></entity>"#)
        let folder = try MigrationFixtures.folder()
        let source = folder.appendingPathComponent("v1.store")
        try MigrationFixtures.fill(source, type: NSBinaryStoreType, model: v1) { context in
            for title in ["a", "b"] { NSEntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(title, forKey: "title") }
        }
        let entityMapping = NSEntityMapping()
        entityMapping.name = "ItemToItem"
        entityMapping.mappingType = .customEntityMappingType
        entityMapping.sourceEntityName = "Item"
        entityMapping.destinationEntityName = "Item"
        entityMapping.entityMigrationPolicyClassName = "MyApp.RecordingPolicy"
        let name = NSPropertyMapping()
        name.name = "name"
        name.valueExpression = NSExpression(format: #"FUNCTION($entityPolicy, "shout:", $source.title)"#)
        entityMapping.attributeMappings = [name]
        let mapping = NSMappingModel()
        mapping.entityMappings = [entityMapping]
        Recording.calls = []
        let destination = folder.appendingPathComponent("v2.store")
        try NSMigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(
            from: source, sourceType: NSBinaryStoreType, with: mapping, toDestinationURL: destination, destinationType: NSBinaryStoreType)
        XCTAssertEqual(Recording.calls.sorted { _, _ in false }.count, 9)
        XCTAssertEqual(Recording.calls.first, "begin ItemToItem")
        XCTAssertEqual(Array(Recording.calls[1...2]).sorted(), ["create a", "create b"])
        XCTAssertEqual(Recording.calls[3], "endInstances")
        XCTAssertEqual(Array(Recording.calls[4...5]).sorted(), ["relate A", "relate B"], "relationships see the custom function's values")
        XCTAssertEqual(Array(Recording.calls[6...]), ["endRelationships", "validate", "end"])
        let (container, context) = try MigrationFixtures.open(destination, type: NSBinaryStoreType, model: v2)
        let items = try MigrationFixtures.objects("Item", sortedBy: "name", in: context)
        context.performAndWait { XCTAssertEqual(items.map { $0.value(forKey: "name") as? String }, ["A", "B"]) }
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
    }

    func testUnknownPolicyClassIsNamed() throws {
        let folder = try MigrationFixtures.folder()
        let source = folder.appendingPathComponent("v2.store")
        try SampleMigration.fillV2(source, type: NSBinaryStoreType)
        let mapping = SampleMigration.mappingInCode()
        mapping.entityMappings[0].entityMigrationPolicyClassName = "Nowhere.NoSuchPolicy"
        let destination = folder.appendingPathComponent("v3.store")
        XCTAssertThrowsError(try NSMigrationManager(sourceModel: try SampleMigration.v2, destinationModel: try SampleMigration.v3).migrateStore(
            from: source, sourceType: NSBinaryStoreType, with: mapping, toDestinationURL: destination, destinationType: NSBinaryStoreType)
        ) { error in
            let error = error as NSError
            XCTAssertEqual(error.code, NSEntityMigrationPolicyError)
            XCTAssertTrue(error.localizedDescription.contains("'Nowhere.NoSuchPolicy'"), error.localizedDescription)
            XCTAssertTrue(error.localizedDescription.contains("CarToCar"), error.localizedDescription)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "a failed migration leaves no destination")
    }

    /// A policy's objects that break the destination model fail the whole migration with
    /// 134110, naming the object's entity and property; nothing is written.
    func testInvalidMigratedObjectFailsTheMigration() throws {
        final class Blanking: NSEntityMigrationPolicy {
            override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
                try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
                for car in manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]) {
                    car.setValue(nil, forKey: "numberPlate")
                }
            }
        }
        NSEntityMigrationPolicy.register(Blanking.self, forClassName: "Blanking")
        let folder = try MigrationFixtures.folder()
        let source = folder.appendingPathComponent("v2.store")
        try SampleMigration.fillV2(source, type: NSBinaryStoreType)
        let before = MigrationFixtures.snapshot(source)
        let mapping = SampleMigration.mappingInCode()
        mapping.entityMappings[2].entityMigrationPolicyClassName = nil
        mapping.entityMappings[3].entityMigrationPolicyClassName = "Blanking"
        let destination = folder.appendingPathComponent("v3.store")
        XCTAssertThrowsError(try NSMigrationManager(sourceModel: try SampleMigration.v2, destinationModel: try SampleMigration.v3).migrateStore(
            from: source, sourceType: NSBinaryStoreType, with: mapping, toDestinationURL: destination, destinationType: NSBinaryStoreType)
        ) { error in
            let error = error as NSError
            XCTAssertEqual(error.code, NSMigrationError)
            XCTAssertEqual(error.userInfo[NSValidationKeyErrorKey] as? String, "numberPlate")
            XCTAssertTrue(error.localizedDescription.contains("SportCar"), error.localizedDescription)
            XCTAssertTrue(error.localizedDescription.contains("SportCarToSportCar"), error.localizedDescription)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(MigrationFixtures.snapshot(source), before, "the source store is unchanged")
    }

    /// A user's `NSAtomicStore` (its data is the file at its URL) migrates at open as the file
    /// stores do, and through the manager with the shipped mapping's policy.
    func testAtomicCustomStoreMigrates() throws {
        _ = StoreKind.sharedModel  // registers JSONAtomicStore
        let type = JSONAtomicStore.storeType
        let v1 = #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/></entity>"#
        let v2 = #"<entity name="Item"><attribute name="name" optional="YES" attributeType="String" elementID="title"/><attribute name="done" attributeType="Boolean" defaultValueString="NO"/></entity>"#
        let package = try MigrationFixtures.package([("Items", v1), ("Items 2", v2)])
        let url = package.deletingLastPathComponent().appendingPathComponent("Items.json")
        try MigrationFixtures.fill(url, type: type, model: try XcodeModelPackage(contentsOf: package).loadModel(version: "Items")) { context in
            for title in ["a", "b"] { NSEntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(title, forKey: "title") }
        }
        let current = try XCTUnwrap(NSManagedObjectModel(contentsOf: package))
        let (container, context) = try MigrationFixtures.open(url, type: type, model: current)
        let items = try MigrationFixtures.objects("Item", sortedBy: "name", in: context)
        context.performAndWait {
            XCTAssertEqual(items.map { $0.value(forKey: "name") as? String }, ["a", "b"], "renamed")
            XCTAssertEqual(items.map { $0.value(forKey: "done") as? Bool }, [false, false], "added with its default")
        }
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        XCTAssertEqual(MigrationFixtures.siblings(of: url).filter { $0.contains(".migrating") }, [])

        try SampleMigration.migrateAndCheck(type: type, mapping: SampleMigration.mappingInCode(), "JSONAtomicStore")
    }
}
