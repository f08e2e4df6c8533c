// Code written the way Apple-platform Core Data code is written, for the API of issue 20:
// NSBatchInsertRequest's managed-object handler (Apple's Earthquakes sample), faulting queries,
// NSFetchRequest.execute() in a perform block, refreshing fetches, the StoreType-spelled
// coordinator methods, the Objective-C-era names, and merged models picked by store metadata.
// Foundation, XCTest and CoreData are imported side by side with no type aliases.
import Foundation
import XCTest
import CoreData

final class Quake: NSManagedObject {
    @Managed var code: String
    @Managed var magnitude: Double
    @Managed var place: String?
    @Managed var station: Station?

    /// What Xcode generates for a class: a typed request beside the inherited untyped one.
    class func fetchRequest() -> NSFetchRequest<Quake> {
        NSFetchRequest<Quake>(entityName: "Quake")
    }
}

final class Station: NSManagedObject {
    @Managed var name: String
    @Managed var quakes: Set<Quake>
    /// A plain Swift property: the faulting states seen by the fault hooks.
    var statesWhileTurningIntoFault: [Int] = []

    override func willTurnIntoFault() {
        super.willTurnIntoFault()
        statesWhileTurningIntoFault.append(faultingState)
    }

    override func didTurnIntoFault() {
        super.didTurnIntoFault()
        statesWhileTurningIntoFault.append(faultingState)
    }
}

final class AppleParityStyleTests: XCTestCase {
    private var fixtures: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CoreDataModelTests/Fixtures/models")
    }

    private func makeModel() -> NSManagedObjectModel {
        let quake = NSEntityDescription()
        quake.name = "Quake"
        quake.managedObjectClassName = "Quake"
        let code = NSAttributeDescription()
        code.name = "code"
        code.attributeType = .stringAttributeType
        code.isOptional = false
        let magnitude = NSAttributeDescription()
        magnitude.name = "magnitude"
        magnitude.attributeType = .doubleAttributeType
        magnitude.defaultValue = 0.0
        let place = NSAttributeDescription()
        place.name = "place"
        place.attributeType = .stringAttributeType

        let station = NSEntityDescription()
        station.name = "Station"
        station.managedObjectClassName = "Station"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false

        let quakes = NSRelationshipDescription()
        quakes.name = "quakes"
        quakes.maxCount = 0
        quakes.deleteRule = .cascadeDeleteRule
        let recordedBy = NSRelationshipDescription()
        recordedBy.name = "station"
        recordedBy.maxCount = 1
        quakes.destinationEntity = quake
        quakes.inverseRelationship = recordedBy
        recordedBy.destinationEntity = station
        recordedBy.inverseRelationship = quakes

        quake.properties = [code, magnitude, place, recordedBy]
        station.properties = [name, quakes]
        let model = NSManagedObjectModel()
        model.entities = [quake, station]
        return model
    }

    private func makeContainer() throws -> NSPersistentContainer {
        let container = NSPersistentContainer(name: "Earthquakes", managedObjectModel: makeModel())
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        NSManagedObject.registerSubclasses(Quake.self, Station.self)
        return container
    }

    /// Apple's Earthquakes sample imports its feed this way.
    func testBatchInsertWithAManagedObjectHandler() throws {
        let container = try makeContainer()
        let feed: [(code: String, magnitude: Double, place: String)] = [("nc1", 4.5, "Napa"), ("ci2", 2.1, "Ridgecrest"), ("ak3", 6.0, "Anchorage")]
        let taskContext = container.newBackgroundContext()
        taskContext.name = "importContext"
        try taskContext.performAndWait {
            var index = 0
            let batchInsertRequest = NSBatchInsertRequest(entity: Quake.entity(), managedObjectHandler: { managedObject in
                guard index < feed.count else { return true }
                if let quake = managedObject as? Quake {
                    quake.code = feed[index].code
                    quake.magnitude = feed[index].magnitude
                    quake.place = feed[index].place
                }
                index += 1
                return false
            })
            batchInsertRequest.resultType = .count
            let result = try taskContext.execute(batchInsertRequest) as? NSBatchInsertResult
            XCTAssertEqual(result?.result as? Int, 3)

            let fetchRequest: NSFetchRequest<Quake> = Quake.fetchRequest()
            fetchRequest.sortDescriptors = [NSSortDescriptor(key: "magnitude", ascending: false)]
            let quakes = try fetchRequest.execute()
            XCTAssertEqual(quakes.map(\.code), ["ak3", "nc1", "ci2"])
            XCTAssertEqual(quakes.first?.place, "Anchorage")
        }

        let update = NSBatchUpdateRequest(entity: Quake.entity())
        update.predicate = NSPredicate(format: "magnitude < 3")
        update.propertiesToUpdate = ["place": "minor"]
        update.resultType = .updatedObjectIDsResultType
        let updated = try container.viewContext.execute(update) as? NSBatchUpdateResult
        XCTAssertEqual((updated?.result as? [NSManagedObjectID])?.count, 1)
    }

    func testFaultingQueries() throws {
        let container = try makeContainer()
        let viewContext = container.viewContext
        let station = Station(context: viewContext)
        station.name = "Berkeley"
        for (code, magnitude) in [("a", 1.0), ("b", 2.0)] {
            let quake = Quake(context: viewContext)
            quake.code = code
            quake.magnitude = magnitude
            quake.station = station
        }
        try viewContext.save()
        let quakeIDs = Set(station.quakes.map(\.objectID))

        let context = NSManagedObjectContext(concurrencyType: NSManagedObjectContextConcurrencyType.privateQueueConcurrencyType)
        context.persistentStoreCoordinator = container.persistentStoreCoordinator
        context.performAndWait {
            guard let berkeley = context.object(with: station.objectID) as? Station else {
                return XCTFail("Station is not a Station")
            }
            XCTAssertTrue(berkeley.isFault)
            XCTAssertNotEqual(berkeley.faultingState, 0)
            XCTAssertTrue(berkeley.hasFault(forRelationshipNamed: "quakes"))
            XCTAssertEqual(Set(berkeley.objectIDs(forRelationshipNamed: "quakes")), quakeIDs)
            XCTAssertTrue(berkeley.hasFault(forRelationshipNamed: "quakes"), "the IDs came without firing the relationship")
            XCTAssertEqual(berkeley.name, "Berkeley")
            XCTAssertEqual(berkeley.faultingState, 0)
            XCTAssertEqual(berkeley.quakes.count, 2)
            XCTAssertFalse(berkeley.hasFault(forRelationshipNamed: "quakes"))

            context.refresh(berkeley, mergeChanges: false)
            XCTAssertEqual(berkeley.statesWhileTurningIntoFault.count, 2)
            XCTAssertTrue(berkeley.statesWhileTurningIntoFault.allSatisfy { $0 != 0 }, "in transition")
            XCTAssertNotEqual(berkeley.faultingState, 0)
        }
    }

    func testRefetchingWithRefreshedValues() throws {
        let container = try makeContainer()
        let viewContext = container.viewContext
        let quake = Quake(context: viewContext)
        quake.code = "nc1"
        quake.magnitude = 4.0
        try viewContext.save()

        let backgroundContext = container.newBackgroundContext()
        try backgroundContext.performAndWait {
            let fetchRequest: NSFetchRequest<Quake> = Quake.fetchRequest()
            let stored = try backgroundContext.fetch(fetchRequest)
            stored.first?.magnitude = 4.8
            try backgroundContext.save()
        }

        let fetchRequest: NSFetchRequest<Quake> = Quake.fetchRequest()
        _ = try viewContext.fetch(fetchRequest)
        XCTAssertEqual(quake.magnitude, 4.0, "kept by default")
        fetchRequest.shouldRefreshRefetchedObjects = true
        _ = try viewContext.fetch(fetchRequest)
        XCTAssertEqual(quake.magnitude, 4.8)
    }

    func testStoreTypeSpellings() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quakes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storeURL = folder.appendingPathComponent("Quakes.sqlite")

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: makeModel())
        let store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: storeURL, options: [NSMigratePersistentStoresAutomaticallyOption: true])
        try coordinator.remove(store)
        try NSPersistentStoreCoordinator.setMetadata(["lastImport": "today"], type: .sqlite, at: storeURL)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: storeURL)
        XCTAssertEqual(metadata["lastImport"] as? String, "today")
        try coordinator.destroyPersistentStore(at: storeURL, type: .sqlite)
        XCTAssertFalse(FileManager.default.fileExists(atPath: storeURL.path))

        NSPersistentStoreCoordinator.registerStoreClass(nil, forStoreType: "UnusedStoreType")
        XCTAssertFalse(NSPersistentStoreCoordinator.registeredStoreTypes.contains("UnusedStoreType"))
    }

    /// The usual "which model was this store saved with?" step of a hand-run migration.
    func testMergedModelForStoreMetadata() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(
            at: fixtures.appendingPathComponent("CoreDataPlus/SampleModel.xcdatamodeld"),
            to: folder.appendingPathComponent("SampleModel.momd"))
        guard let bundle = Bundle(url: folder) else { return XCTFail("no bundle at \(folder.path)") }
        let modelURL = try XCTUnwrap(bundle.url(forResource: "SampleModel", withExtension: "momd"))
        let oldModel = try XCTUnwrap(NSManagedObjectModel(contentsOf: modelURL.appendingPathComponent("SampleModel2.xcdatamodel")))

        let storeURL = folder.appendingPathComponent("Sample.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: oldModel)
        try coordinator.remove(try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL, options: nil))

        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: storeURL, options: nil)
        let sourceModel = try XCTUnwrap(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: metadata))
        XCTAssertTrue(sourceModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        XCTAssertEqual(sourceModel.entityVersionHashesByName, oldModel.entityVersionHashesByName)

        let currentModel = try XCTUnwrap(NSManagedObjectModel.mergedModel(from: [bundle]))
        let combined = try XCTUnwrap(NSManagedObjectModel(byMerging: [currentModel, makeModel()]))
        XCTAssertEqual(combined.entities.count, currentModel.entities.count + 2)
    }
}
