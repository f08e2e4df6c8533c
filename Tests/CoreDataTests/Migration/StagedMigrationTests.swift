import CoreData
import Foundation
import XCTest

/// `NSStagedMigrationManager`: a lightweight stage and a custom stage whose handlers move data the
/// inferred mapping would drop (v2's `Car.maker` strings become v3's `Maker` objects, which is
/// what the sample's V2toV3 mapping model does with its entity migration policy).
final class StagedMigrationTests: XCTestCase {
    /// Collected by the will-migrate handler, read by the did-migrate handler.
    private final class Makers: @unchecked Sendable {
        var byPlate: [String: String] = [:]
    }

    /// The sample's three versions, v3 loaded as the app loads its current model (from a
    /// package whose current version it is, so the coordinator finds v1 and v2 there).
    private func sampleVersions() throws -> (NSManagedObjectModel, NSManagedObjectModel, NSManagedObjectModel) {
        let packageURL = try MigrationFixtures.samplePackage(current: "SampleModel3")
        let package = try XcodeModelPackage(contentsOf: packageURL)
        return (try package.loadModel(version: "SampleModel"), try package.loadModel(version: "SampleModel2"),
                try XCTUnwrap(NSManagedObjectModel(contentsOf: packageURL)))
    }

    func testLightweightThenCustomStage() throws {
        for type in [NSBinaryStoreType, NSXMLStoreType] {
            let (v1, v2, v3) = try sampleVersions()
            let url = try MigrationFixtures.folder().appendingPathComponent("Sample.store")
            try MigrationFixtures.fill(url, type: type, model: v1) { context in
                let owner = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                owner.setValue("Ada", forKey: "firstName")
                owner.setValue(UUID(), forKey: "id")
                owner.setValue(Date(), forKey: "updatedAt")
                for (entity, plate, maker) in [("Car", "A-1", "Fiat"), ("SportCar", "S-1", "Fiat"), ("ExpensiveSportCar", "E-1", "Bugatti")] {
                    let car = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                    car.setValue(plate, forKey: "numberPlate")
                    car.setValue(maker, forKey: "maker")
                    car.setValue(owner, forKey: "owner")
                }
            }

            let makers = Makers()
            let custom = NSCustomMigrationStage(
                migratingFrom: NSManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum),
                to: NSManagedObjectModelReference(model: v3, versionChecksum: v3.versionChecksum))
            custom.label = "makers become objects"
            custom.willMigrateHandler = { manager, _ in
                guard let context = manager.container?.newBackgroundContext() else { throw NSError(domain: "StagedMigrationTests", code: 1) }
                var failure: Error?
                context.performAndWait {
                    do {
                        for car in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")) {
                            if let plate = car.value(forKey: "numberPlate") as? String, let maker = car.value(forKey: "maker") as? String { makers.byPlate[plate] = maker }
                        }
                    } catch { failure = error }
                }
                if let failure { throw failure }
            }
            custom.didMigrateHandler = { manager, _ in
                guard let context = manager.container?.newBackgroundContext() else { throw NSError(domain: "StagedMigrationTests", code: 1) }
                var failure: Error?
                context.performAndWait {
                    do {
                        var made: [String: NSManagedObject] = [:]
                        for car in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")) {
                            guard let plate = car.value(forKey: "numberPlate") as? String, let name = makers.byPlate[plate] else { continue }
                            let maker = made[name] ?? NSEntityDescription.insertNewObject(forEntityName: "Maker", into: context)
                            maker.setValue(name, forKey: "name")
                            made[name] = maker
                            car.setValue(maker, forKey: "createdBy")
                        }
                        try context.save()
                    } catch { failure = error }
                }
                if let failure { throw failure }
            }
            let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum]), custom])

            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v3)
            let options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                                               NSPersistentStoreStagedMigrationManagerOptionKey: manager]
            let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
            XCTAssertNil(manager.container, type)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            let makerObjects = try MigrationFixtures.objects("Maker", sortedBy: "name", in: context)
            let luxury = try MigrationFixtures.objects("LuxuryCar", sortedBy: "numberPlate", in: context)
            context.performAndWait {
                XCTAssertEqual(makerObjects.map { $0.value(forKey: "name") as? String }, ["Bugatti", "Fiat"], type)
                XCTAssertEqual((makerObjects.last?.value(forKey: "cars") as? Set<NSManagedObject>)?.count, 2, type)
                XCTAssertEqual((luxury.first?.value(forKey: "createdBy") as? NSManagedObject)?.value(forKey: "name") as? String, "Bugatti", type)
            }
            try coordinator.remove(store)
        }
    }

    func testAFailingHandlerLeavesTheStoreAtTheLastCompletedVersion() throws {
        let (v1, v2, v3) = try sampleVersions()
        let url = try MigrationFixtures.folder().appendingPathComponent("Sample.store")
        try MigrationFixtures.fill(url, type: NSBinaryStoreType, model: v1) { context in
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue("Ada", forKey: "firstName")
            person.setValue(UUID(), forKey: "id")
            person.setValue(Date(), forKey: "updatedAt")
        }
        let custom = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum),
            to: NSManagedObjectModelReference(model: v3, versionChecksum: v3.versionChecksum))
        custom.willMigrateHandler = { _, _ in throw NSError(domain: "StagedMigrationTests", code: 42) }
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum]), custom])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v3)
        let options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true, NSPersistentStoreStagedMigrationManagerOptionKey: manager]
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: options)) { error in
            XCTAssertEqual((error as NSError).code, 42)
        }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSBinaryStoreType, at: url)
        XCTAssertTrue(v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), "the lightweight stage completed")

        // Stages that do not end at the coordinator's model are refused before anything changes.
        let short = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum])])
        XCTAssertThrowsError(try coordinator.addPersistentStore(
            ofType: NSBinaryStoreType, configurationName: nil, at: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSPersistentStoreStagedMigrationManagerOptionKey: short])) { error in
            XCTAssertEqual((error as NSError).code, NSMigrationMissingMappingModelError)
        }
    }
}
