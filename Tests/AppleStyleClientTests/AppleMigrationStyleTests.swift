// Migration code as Apple-platform apps write it: Foundation, XCTest and CoreData side by side,
// Apple's names only. If this file stops compiling, an app's migration code stops compiling too.
import Foundation
import XCTest
import CoreData

final class AppleMigrationStyleTests: XCTestCase {
    private var samplePackage: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CoreDataModelTests/Fixtures/models/CoreDataPlus/SampleModel.xcdatamodeld")
    }

    /// The usual "does this store need migration?" check, then a progressive migration by hand.
    func testTheUsualMigrationCheck() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let storeURL = folder.appendingPathComponent("Sample.sqlite")
        let package = try XcodeModelPackage(contentsOf: samplePackage)
        let sourceModel = try package.loadModel(version: "SampleModel")
        let destinationModel = try package.loadModel(version: "SampleModel2")

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: sourceModel)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL, options: nil)
        for store in coordinator.persistentStores { try coordinator.remove(store) }

        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: storeURL, options: nil)
        let needsMigration = !destinationModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        XCTAssertTrue(needsMigration)

        let mapping = try NSMappingModel(from: [Bundle.main], forSourceModel: sourceModel, destinationModel: destinationModel)
            ?? NSMappingModel.inferredMappingModel(forSourceModel: sourceModel, destinationModel: destinationModel)
        let manager = NSMigrationManager(sourceModel: sourceModel, destinationModel: destinationModel)
        let destinationURL = folder.appendingPathComponent("Sample-v2.sqlite")
        try manager.migrateStore(
            from: storeURL, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
            toDestinationURL: destinationURL, destinationType: NSSQLiteStoreType, destinationOptions: nil)
        let replacer = NSPersistentStoreCoordinator(managedObjectModel: destinationModel)
        try replacer.replacePersistentStore(
            at: storeURL, destinationOptions: nil, withPersistentStoreFrom: destinationURL, sourceOptions: nil, ofType: NSSQLiteStoreType)
        try replacer.destroyPersistentStore(at: destinationURL, ofType: NSSQLiteStoreType, options: nil)

        let migrated = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: storeURL, options: nil)
        XCTAssertTrue(destinationModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: migrated))
    }

    /// iOS 17's staged migration, spelled as Apple's sample code spells it.
    func testStagedMigrationSpelling() throws {
        let package = try XcodeModelPackage(contentsOf: samplePackage)
        let v1 = try package.loadModel(version: "SampleModel")
        let v2 = try package.loadModel(version: "SampleModel2")
        let stage = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: v1, versionChecksum: v1.versionChecksum),
            to: NSManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum))
        stage.label = "V1 to V2"
        stage.willMigrateHandler = { migrationManager, currentStage in
            XCTAssertNotNil(migrationManager.container)
        }
        let manager = NSStagedMigrationManager([stage])
        let description = NSPersistentStoreDescription()
        description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
        XCTAssertTrue(description.options[NSPersistentStoreStagedMigrationManagerOptionKey] is NSStagedMigrationManager)
        XCTAssertEqual(manager.stages.count, 1)
    }
}
