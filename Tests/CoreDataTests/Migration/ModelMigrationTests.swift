import CoreData
import Foundation
import XCTest

/// Opening a store saved with an older model version: found in the model's package, mapped
/// (inferred, directly or version by version), migrated into a staging file and installed in
/// place, on the binary and XML stores; and every way it can fail leaves the store as it was.
final class ModelMigrationTests: XCTestCase {
    private let fileStores = [NSBinaryStoreType, NSXMLStoreType]

    private func insert(_ entity: String, _ values: [String: Any], into context: NSManagedObjectContext) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    /// The sample package's v1 objects: two people, a car, a sport car, an expensive sport car.
    private func fillSampleV1(_ url: URL, type: String) throws -> URL {
        let v1 = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage).loadModel(version: "SampleModel")
        var adaURI: URL?
        try MigrationFixtures.fill(url, type: type, model: v1) { context in
            let ada = insert("Person", ["firstName": "Ada", "lastName": "Lovelace", "id": UUID(), "updatedAt": Date(timeIntervalSince1970: 1000)], into: context)
            let grace = insert("Person", ["firstName": "Grace", "lastName": "Hopper", "id": UUID(), "updatedAt": Date(timeIntervalSince1970: 2000)], into: context)
            _ = insert("Car", ["numberPlate": "A-1", "maker": "Fiat", "model": "500", "owner": ada], into: context)
            _ = insert("SportCar", ["numberPlate": "S-1", "maker": "Ferrari", "owner": ada], into: context)
            _ = insert("ExpensiveSportCar", ["numberPlate": "E-1", "maker": "Bugatti", "isLimitedEdition": true, "owner": grace], into: context)
            try context.obtainPermanentIDs(for: [ada])
            adaURI = ada.objectID.uriRepresentation()
        }
        return try XCTUnwrap(adaURI)
    }

    func testSampleModelMigratesFromV1ToV2Inferred() throws {
        for type in fileStores {
            let url = try MigrationFixtures.folder().appendingPathComponent("Sample.store")
            let adaURI = try fillSampleV1(url, type: type)
            let v2 = try XCTUnwrap(NSManagedObjectModel(contentsOf: try MigrationFixtures.samplePackage(current: "SampleModel2")))
            let (container, context) = try MigrationFixtures.open(url, type: type, model: v2)

            let luxury = try MigrationFixtures.objects("LuxuryCar", sortedBy: "numberPlate", in: context)
            let cars = try MigrationFixtures.objects("Car", sortedBy: "numberPlate", in: context)
            let sport = try MigrationFixtures.objects("SportCar", sortedBy: "numberPlate", in: context)
            let people = try MigrationFixtures.objects("Person", sortedBy: "firstName", in: context)
            context.performAndWait {
                XCTAssertEqual(luxury.map { $0.value(forKey: "numberPlate") as? String }, ["E-1"], type)
                XCTAssertEqual(luxury.first?.value(forKey: "isLimitedEdition") as? Bool, true, type)
                XCTAssertEqual(luxury.first?.value(forKey: "maker") as? String, "Bugatti", type)
                XCTAssertEqual((luxury.first?.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "firstName") as? String, "Grace", type)
                XCTAssertEqual(cars.map { $0.value(forKey: "model") as? String }, ["500"], type)
                XCTAssertEqual(sport.map { $0.value(forKey: "maker") as? String }, ["Ferrari"], type)
                XCTAssertEqual(people.map { $0.value(forKey: "lastName") as? String }, ["Lovelace", "Hopper"], type)
                XCTAssertEqual(people.first?.value(forKey: "updatedAt") as? Date, Date(timeIntervalSince1970: 1000), type)
                let adaCars = (people.first?.value(forKey: "cars") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "numberPlate") as? String }.sorted()
                XCTAssertEqual(adaCars, ["A-1", "S-1"], type)
                XCTAssertEqual(people.first?.objectID.uriRepresentation(), adaURI, "\(type): the object keeps its URI (store UUID and key kept)")
            }
            XCTAssertEqual(MigrationFixtures.siblings(of: url).filter { $0.contains(".migrating") }, [], "\(type): no staging file left")
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
            let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: url)
            XCTAssertTrue(v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), type)

            // Opened again, the store needs no migration and holds the same objects.
            let (again, context2) = try MigrationFixtures.open(url, type: type, model: v2)
            XCTAssertEqual(try MigrationFixtures.objects("LuxuryCar", sortedBy: "numberPlate", in: context2).count, 1, type)
            for store in again.persistentStoreCoordinator.persistentStores { try again.persistentStoreCoordinator.remove(store) }
        }
    }

    /// The same migration on a PostgreSQL store (`Formats/postgresql-store.md` §10): migrated
    /// into a staging schema and installed by renaming schemas in one transaction.
    func testSampleModelMigratesFromV1ToV2InferredOnPostgreSQL() throws {
        guard let url = PostgreSQLTestStores.freshURL() else {
            return XCTFail("no PostgreSQL server for the tests: \(PostgreSQLTestStores.unavailableReason)")
        }
        let adaURI = try fillSampleV1(url, type: NSPostgreSQLStoreType)
        let v2 = try XCTUnwrap(NSManagedObjectModel(contentsOf: try MigrationFixtures.samplePackage(current: "SampleModel2")))
        let (container, context) = try MigrationFixtures.open(url, type: NSPostgreSQLStoreType, model: v2)
        let luxury = try MigrationFixtures.objects("LuxuryCar", sortedBy: "numberPlate", in: context)
        let people = try MigrationFixtures.objects("Person", sortedBy: "firstName", in: context)
        context.performAndWait {
            XCTAssertEqual(luxury.map { $0.value(forKey: "numberPlate") as? String }, ["E-1"])
            XCTAssertEqual(luxury.first?.value(forKey: "isLimitedEdition") as? Bool, true)
            XCTAssertEqual((luxury.first?.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "firstName") as? String, "Grace")
            XCTAssertEqual(people.map { $0.value(forKey: "lastName") as? String }, ["Lovelace", "Hopper"])
            let adaCars = (people.first?.value(forKey: "cars") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "numberPlate") as? String }.sorted()
            XCTAssertEqual(adaCars, ["A-1", "S-1"])
            XCTAssertEqual(people.first?.objectID.uriRepresentation(), adaURI, "the object keeps its URI")
        }
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: url)
        XCTAssertTrue(v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        // No staging schema is left (the test schemas' names are short: no cut).
        let staging = try XCTUnwrap(URL(string: url.absoluteString + "_migrating_1"))
        XCTAssertThrowsError(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: staging))
    }

    /// An app that ships only Xcode's compiled `.momd`: a store made with the source's version 1
    /// opens with the compiled version 2, migrating through the package's compiled versions.
    func testAStoreMigratesWithOnlyTheCompiledPackage() throws {
        let momd = try MigrationFixtures.folder().appendingPathComponent("SampleModel.momd")
        try FileManager.default.copyItem(at: MigrationFixtures.compiledSamplePackage, to: momd)
        let info = try PropertyListSerialization.data(fromPropertyList: ["NSManagedObjectModel_CurrentVersionName": "SampleModel2"], format: .xml, options: 0)
        try info.write(to: momd.appendingPathComponent("VersionInfo.plist"))
        for type in fileStores {
            let url = try MigrationFixtures.folder().appendingPathComponent("Sample.store")
            _ = try fillSampleV1(url, type: type)
            let v2 = try XCTUnwrap(NSManagedObjectModel(contentsOf: momd))
            let (container, context) = try MigrationFixtures.open(url, type: type, model: v2)
            let luxury = try MigrationFixtures.objects("LuxuryCar", sortedBy: "numberPlate", in: context)
            context.performAndWait {
                XCTAssertEqual(luxury.map { $0.value(forKey: "numberPlate") as? String }, ["E-1"], type)
                XCTAssertEqual(luxury.first?.value(forKey: "isLimitedEdition") as? Bool, true, type)
            }
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        }
    }

    func testSampleModelMigratesFromV1ToV3InOneOpen() throws {
        for type in fileStores {
            let url = try MigrationFixtures.folder().appendingPathComponent("Sample.store")
            _ = try fillSampleV1(url, type: type)
            let v3 = try XCTUnwrap(NSManagedObjectModel(contentsOf: try MigrationFixtures.samplePackage(current: "SampleModel3")))
            let (container, context) = try MigrationFixtures.open(url, type: type, model: v3)
            let luxury = try MigrationFixtures.objects("LuxuryCar", sortedBy: "numberPlate", in: context)
            context.performAndWait {
                XCTAssertEqual(luxury.first?.value(forKey: "isLimitedEdition") as? Bool, true, type)
                XCTAssertNil(luxury.first?.value(forKey: "createdBy"), "\(type): a new relationship is empty")
                XCTAssertEqual((luxury.first?.value(forKey: "previousOwners") as? Set<NSManagedObject>)?.count, 0, type)
            }
            XCTAssertEqual(try MigrationFixtures.objects("Maker", sortedBy: "name", in: context).count, 0, type)
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        }
    }

    /// v1 → v3 cannot be inferred directly (an optional attribute becomes mandatory without a
    /// default), but v1 → v2 (mandatory with a default) and v2 → v3 can: the open walks the chain.
    func testMigrationWalksIntermediateVersions() throws {
        let v1 = #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/><attribute name="n" optional="YES" attributeType="Integer 16"/></entity>"#
        let v2 = #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/><attribute name="n" attributeType="Integer 32" defaultValueString="0"/></entity>"#
        let v3 = #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/><attribute name="n" attributeType="Integer 64"/></entity>"#
        XCTAssertThrowsError(try NSMappingModel.inferredMappingModel(forSourceModel: try MigrationFixtures.model(v1), destinationModel: try MigrationFixtures.model(v3)))
        for type in fileStores {
            let package = try MigrationFixtures.package([("Model", v1), ("Model 2", v2), ("Model 3", v3)])
            let url = try MigrationFixtures.folder().appendingPathComponent("Items.store")
            try MigrationFixtures.fill(url, type: type, model: try MigrationFixtures.model(v1)) { context in
                _ = insert("Item", ["title": "a"], into: context)
                _ = insert("Item", ["title": "b", "n": Int16(5)], into: context)
            }
            let current = try XCTUnwrap(NSManagedObjectModel(contentsOf: package))
            let (container, context) = try MigrationFixtures.open(url, type: type, model: current)
            let items = try MigrationFixtures.objects("Item", sortedBy: "title", in: context)
            context.performAndWait {
                XCTAssertEqual(items.map { ($0.value(forKey: "n") as? Int64) ?? -1 }, [0, 5], type)
            }
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        }
    }

    /// More objects than one batch of the migration: every object, value and relationship arrives.
    func testMigrationInBatches() throws {
        let v1 = #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/><attribute name="n" optional="YES" attributeType="Integer 32"/><relationship name="tag" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/></entity><entity name="Tag"><attribute name="name" optional="YES" attributeType="String"/><relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tag" inverseEntity="Item"/></entity>"#
        let v2 = #"<entity name="Item"><attribute name="heading" optional="YES" attributeType="String" elementID="title"/><attribute name="n" optional="YES" attributeType="Integer 64"/><attribute name="added" attributeType="Boolean" defaultValueString="YES"/><relationship name="tag" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/></entity><entity name="Tag"><attribute name="name" optional="YES" attributeType="String"/><relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tag" inverseEntity="Item"/></entity>"#
        let package = try MigrationFixtures.package([("Model", v1), ("Model 2", v2)])
        let url = try MigrationFixtures.folder().appendingPathComponent("Items.store")
        let count = 12_001
        try MigrationFixtures.fill(url, type: NSBinaryStoreType, model: try MigrationFixtures.model(v1)) { context in
            let tags = (0..<3).map { insert("Tag", ["name": "t\($0)"], into: context) }
            for index in 0..<count { _ = insert("Item", ["title": "item \(index)", "n": Int32(index), "tag": tags[index % 3]], into: context) }
        }
        let (container, context) = try MigrationFixtures.open(url, type: NSBinaryStoreType, model: try XCTUnwrap(NSManagedObjectModel(contentsOf: package)))
        let items = try MigrationFixtures.objects("Item", sortedBy: "n", in: context)
        let tags = try MigrationFixtures.objects("Tag", sortedBy: "name", in: context)
        context.performAndWait {
            XCTAssertEqual(items.count, count)
            XCTAssertEqual(items.last?.value(forKey: "heading") as? String, "item \(count - 1)")
            XCTAssertEqual(items.last?.value(forKey: "n") as? Int64, Int64(count - 1))
            XCTAssertEqual(items.last?.value(forKey: "added") as? Bool, true)
            XCTAssertEqual((items.last?.value(forKey: "tag") as? NSManagedObject)?.value(forKey: "name") as? String, "t\((count - 1) % 3)")
            XCTAssertEqual(tags.map { ($0.value(forKey: "items") as? Set<NSManagedObject>)?.count ?? -1 }, [4_001, 4_000, 4_000])
        }
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
    }

    /// A store added with a configuration records its entities' hashes only; it migrates with
    /// that configuration's entities.
    func testStoreOfAConfigurationMigrates() throws {
        let v1 = #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/></entity><entity name="Note"><attribute name="text" optional="YES" attributeType="String"/></entity><configuration name="Local"><memberEntity name="Item"/></configuration><configuration name="Notes"><memberEntity name="Note"/></configuration>"#
        let v2 = #"<entity name="Item"><attribute name="heading" optional="YES" attributeType="String" elementID="title"/></entity><entity name="Note"><attribute name="text" optional="YES" attributeType="String"/></entity><configuration name="Local"><memberEntity name="Item"/></configuration><configuration name="Notes"><memberEntity name="Note"/></configuration>"#
        let package = try MigrationFixtures.package([("Model", v1), ("Model 2", v2)])
        let url = try MigrationFixtures.folder().appendingPathComponent("Local.store")
        let old = try MigrationFixtures.model(v1)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: old)
        let store = try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: "Local", at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            _ = insert("Item", ["title": "kept"], into: context)
            try context.save()
        }
        try coordinator.remove(store)

        let current = NSPersistentStoreCoordinator(managedObjectModel: try XCTUnwrap(NSManagedObjectModel(contentsOf: package)))
        let options = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
        let migrated = try current.addPersistentStore(ofType: NSBinaryStoreType, configurationName: "Local", at: url, options: options)
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = current
        let items = try MigrationFixtures.objects("Item", sortedBy: "heading", in: reader)
        reader.performAndWait { XCTAssertEqual(items.map { $0.value(forKey: "heading") as? String }, ["kept"]) }
        try current.remove(migrated)
    }

    func testRefusedChangeNamesItAndLeavesTheStore() throws {
        let v1 = #"<entity name="Item"><attribute name="added" optional="YES" attributeType="String"/></entity>"#
        let v2 = #"<entity name="Item"><attribute name="added" optional="YES" attributeType="Date"/></entity>"#
        for type in fileStores {
            let package = try MigrationFixtures.package([("Model", v1), ("Model 2", v2)])
            let url = try MigrationFixtures.folder().appendingPathComponent("Items.store")
            let old = try MigrationFixtures.model(v1)
            try MigrationFixtures.fill(url, type: type, model: old) { context in _ = insert("Item", ["added": "yesterday"], into: context) }
            let before = MigrationFixtures.snapshot(url)
            let current = try XCTUnwrap(NSManagedObjectModel(contentsOf: package))
            XCTAssertThrowsError(try MigrationFixtures.open(url, type: type, model: current)) { error in
                let error = error as NSError
                XCTAssertEqual(error.code, NSMigrationMissingMappingModelError, type)
                XCTAssertTrue(error.localizedDescription.contains("Item.added: String → Date"), "\(type): \(error.localizedDescription)")
                XCTAssertEqual((error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code, NSInferredMappingModelError, type)
            }
            XCTAssertEqual(MigrationFixtures.snapshot(url), before, "\(type): the store's files are unchanged")
            XCTAssertEqual(MigrationFixtures.siblings(of: url).filter { $0.contains(".migrating") }, [], type)
            let (container, context) = try MigrationFixtures.open(url, type: type, model: old)
            let items = try MigrationFixtures.objects("Item", sortedBy: "added", in: context)
            context.performAndWait { XCTAssertEqual(items.map { $0.value(forKey: "added") as? String }, ["yesterday"], type) }
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        }
    }

    /// A to-many relationship that becomes to-one infers, but an object with two destinations
    /// cannot migrate: the whole migration fails, naming it, and the store stays as it was.
    func testFailingObjectFailsTheWholeMigration() throws {
        let v1 = """
            <entity name="A"><attribute name="name" optional="YES" attributeType="String"/><relationship name="bs" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="B" inverseName="a" inverseEntity="B"/></entity>
            <entity name="B"><relationship name="a" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="A" inverseName="bs" inverseEntity="A"/></entity>
            """
        let v2 = """
            <entity name="A"><attribute name="name" optional="YES" attributeType="String"/><relationship name="bs" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="B" inverseName="a" inverseEntity="B"/></entity>
            <entity name="B"><relationship name="a" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="A" inverseName="bs" inverseEntity="A"/></entity>
            """
        for type in fileStores {
            let package = try MigrationFixtures.package([("Model", v1), ("Model 2", v2)])
            let url = try MigrationFixtures.folder().appendingPathComponent("AB.store")
            try MigrationFixtures.fill(url, type: type, model: try MigrationFixtures.model(v1)) { context in
                let a = insert("A", ["name": "one"], into: context)
                _ = insert("B", ["a": a], into: context)
                _ = insert("B", ["a": a], into: context)
            }
            let before = MigrationFixtures.snapshot(url)
            XCTAssertThrowsError(try MigrationFixtures.open(url, type: type, model: try XCTUnwrap(NSManagedObjectModel(contentsOf: package)))) { error in
                let error = error as NSError
                XCTAssertEqual(error.code, NSMigrationError, type)
                XCTAssertTrue(error.localizedDescription.contains("A.bs"), "\(type): \(error.localizedDescription)")
                XCTAssertTrue(error.localizedDescription.contains("2 destinations cannot become a to-one relationship"), "\(type): \(error.localizedDescription)")
            }
            XCTAssertEqual(MigrationFixtures.snapshot(url), before, "\(type): the store's files are unchanged")
            XCTAssertEqual(MigrationFixtures.siblings(of: url).filter { $0.contains(".migrating") }, [], type)
        }
    }

    func testWithoutMigrationOptionsAnOlderStoreIsIncompatible() throws {
        let url = try MigrationFixtures.folder().appendingPathComponent("Sample.store")
        _ = try fillSampleV1(url, type: NSBinaryStoreType)
        let before = MigrationFixtures.snapshot(url)
        let v2 = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage).loadModel(version: "SampleModel2")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v2)
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: nil)) { error in
            XCTAssertEqual((error as NSError).code, NSPersistentStoreIncompatibleVersionHashError)
        }
        XCTAssertEqual(MigrationFixtures.snapshot(url), before)
    }

    func testInferenceOffWithoutAMappingModelFails() throws {
        let url = try MigrationFixtures.folder().appendingPathComponent("Sample.store")
        _ = try fillSampleV1(url, type: NSBinaryStoreType)
        let v2 = try XCTUnwrap(NSManagedObjectModel(contentsOf: try MigrationFixtures.samplePackage(current: "SampleModel2")))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v2)
        let options = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: false]
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: options)) { error in
            XCTAssertEqual((error as NSError).code, NSMigrationMissingMappingModelError)
            XCTAssertTrue((error as NSError).localizedDescription.contains("'SampleModel'"), (error as NSError).localizedDescription)
        }
    }

    func testUnknownSourceVersionIsNamed() throws {
        let url = try MigrationFixtures.folder().appendingPathComponent("Items.store")
        try MigrationFixtures.fill(url, type: NSBinaryStoreType, model: try MigrationFixtures.model(#"<entity name="Other"><attribute name="x" optional="YES" attributeType="String"/></entity>"#)) { context in
            _ = insert("Other", ["x": "1"], into: context)
        }
        let v2 = try XCTUnwrap(NSManagedObjectModel(contentsOf: try MigrationFixtures.samplePackage(current: "SampleModel2")))
        XCTAssertThrowsError(try MigrationFixtures.open(url, type: NSBinaryStoreType, model: v2)) { error in
            XCTAssertEqual((error as NSError).code, NSMigrationMissingSourceModelError)
            XCTAssertTrue((error as NSError).localizedDescription.contains("Other"), (error as NSError).localizedDescription)
        }
    }

    func testLeftoverStagingFilesOfACrashedMigrationAreIgnored() throws {
        let url = try MigrationFixtures.folder().appendingPathComponent("Sample.store")
        _ = try fillSampleV1(url, type: NSBinaryStoreType)
        // A migration killed mid-way leaves a half-written staging store; the store itself was never touched.
        try Data("half-written".utf8).write(to: URL(fileURLWithPath: url.path + ".migrating-1"))
        try Data("half-written".utf8).write(to: URL(fileURLWithPath: url.path + ".migrating-1-wal"))
        let v2 = try XCTUnwrap(NSManagedObjectModel(contentsOf: try MigrationFixtures.samplePackage(current: "SampleModel2")))
        let (container, context) = try MigrationFixtures.open(url, type: NSBinaryStoreType, model: v2)
        XCTAssertEqual(try MigrationFixtures.objects("LuxuryCar", sortedBy: "numberPlate", in: context).count, 1)
        XCTAssertEqual(MigrationFixtures.siblings(of: url).filter { $0.contains(".migrating") }, [])
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
    }

    func testMigrationManagerLeavesTheSourceStore() throws {
        for type in fileStores {
            let folder = try MigrationFixtures.folder()
            let url = folder.appendingPathComponent("Sample.store")
            _ = try fillSampleV1(url, type: type)
            let before = MigrationFixtures.snapshot(url)
            let package = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage)
            let v1 = try package.loadModel(version: "SampleModel")
            let v2 = try package.loadModel(version: "SampleModel2")
            let manager = NSMigrationManager(sourceModel: v1, destinationModel: v2)
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
            let destination = folder.appendingPathComponent("Migrated.store")
            try manager.migrateStore(from: url, sourceType: type, with: mapping, toDestinationURL: destination, destinationType: type)
            XCTAssertEqual(manager.migrationProgress, 1, type)
            XCTAssertEqual(MigrationFixtures.snapshot(url), before, "\(type): the source is read only")
            let (container, context) = try MigrationFixtures.open(destination, type: type, model: v2)
            XCTAssertEqual(try MigrationFixtures.objects("Person", sortedBy: "firstName", in: context).count, 2, type)
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
            // A destination that exists already is refused.
            XCTAssertThrowsError(try manager.migrateStore(from: url, sourceType: type, with: mapping, toDestinationURL: destination, destinationType: type)) { error in
                XCTAssertEqual((error as NSError).code, NSMigrationManagerDestinationStoreError, type)
            }
            XCTAssertThrowsError(try manager.migrateStore(from: url, sourceType: type, with: nil, toDestinationURL: folder.appendingPathComponent("x"), destinationType: type)) { error in
                XCTAssertEqual((error as NSError).code, NSMigrationMissingMappingModelError, type)
            }
        }
    }

    func testMigrationReportsToAndStopsWithTheCallersProgress() throws {
        let folder = try MigrationFixtures.folder()
        let url = folder.appendingPathComponent("Sample.store")
        _ = try fillSampleV1(url, type: NSBinaryStoreType)
        let package = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage)
        let v1 = try package.loadModel(version: "SampleModel")
        let v2 = try package.loadModel(version: "SampleModel2")
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)

        let cancelled = Progress(totalUnitCount: 1)
        cancelled.cancel()
        cancelled.becomeCurrent(withPendingUnitCount: 1)
        let stopped = folder.appendingPathComponent("Stopped.store")
        XCTAssertThrowsError(try NSMigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(
            from: url, sourceType: NSBinaryStoreType, with: mapping, toDestinationURL: stopped, destinationType: NSBinaryStoreType)) { error in
            XCTAssertEqual((error as NSError).code, NSMigrationCancelledError)
        }
        cancelled.resignCurrent()
        XCTAssertFalse(FileManager.default.fileExists(atPath: stopped.path))

        let watched = Progress(totalUnitCount: 1)
        watched.becomeCurrent(withPendingUnitCount: 1)
        try NSMigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(
            from: url, sourceType: NSBinaryStoreType, with: mapping, toDestinationURL: folder.appendingPathComponent("Done.store"), destinationType: NSBinaryStoreType)
        watched.resignCurrent()
        XCTAssertEqual(watched.fractionCompleted, 1, accuracy: 0.0001)
    }

    func testStoreMetadataWithoutAddingTheStore() throws {
        for type in fileStores {
            let url = try MigrationFixtures.folder().appendingPathComponent("Sample.store")
            _ = try fillSampleV1(url, type: type)
            let package = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage)
            let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: url)
            XCTAssertEqual(metadata[NSStoreTypeKey] as? String, type)
            XCTAssertTrue(try package.loadModel(version: "SampleModel").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), type)
            XCTAssertFalse(try package.loadModel(version: "SampleModel2").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), type)

            var changed = metadata
            changed["AppSetting"] = "on"
            try NSPersistentStoreCoordinator.setMetadata(changed, forPersistentStoreOfType: type, at: url)
            let reread = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: NSPersistentStore.StoreType(rawValue: type), at: url)
            XCTAssertEqual(reread["AppSetting"] as? String, "on", type)
            XCTAssertEqual(reread[NSStoreUUIDKey] as? String, metadata[NSStoreUUIDKey] as? String, type)
        }
        XCTAssertThrowsError(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSBinaryStoreType, at: URL(fileURLWithPath: "/nonexistent/x.store"))) { error in
            XCTAssertEqual((error as NSError).code, NSFileReadNoSuchFileError)
        }
    }

    func testReplacePersistentStore() throws {
        let folder = try MigrationFixtures.folder()
        let source = folder.appendingPathComponent("Source.store")
        let destination = folder.appendingPathComponent("Destination.store")
        _ = try fillSampleV1(source, type: NSBinaryStoreType)
        let v1 = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage).loadModel(version: "SampleModel")
        try MigrationFixtures.fill(destination, type: NSBinaryStoreType, model: v1) { _ in }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v1)
        try coordinator.replacePersistentStore(at: destination, withPersistentStoreFrom: source, ofType: NSBinaryStoreType)
        let store = try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: destination, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        XCTAssertEqual(try MigrationFixtures.objects("Person", sortedBy: "firstName", in: context).count, 2)
        try coordinator.remove(store)
        XCTAssertTrue(FileManager.default.fileExists(atPath: source.path), "the source stays")
    }
}
