import CoreData
import CoreDataBinaryFormat
import Foundation
import XCTest

/// External binary data through the public API (Formats/binary-store.md §15): the object graph
/// sees plain `Data`, and destroying, replacing and migrating a store carry its external-data folder.
final class ExternalBinaryDataContainerTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("external-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private static let model: NSManagedObjectModel = {
        let photo = NSEntityDescription()
        photo.name = "Photo"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let bytes = NSAttributeDescription()
        bytes.name = "bytes"
        bytes.attributeType = .binaryDataAttributeType
        bytes.allowsExternalBinaryDataStorage = true
        bytes.isOptional = true
        photo.properties = [name, bytes]
        let model = NSManagedObjectModel()
        model.entities = [photo]
        return model
    }()

    private func large(_ seed: UInt8) -> Data {
        Data((0..<(ExternalDataLayout.threshold + 4_096)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    private func files(of url: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: url.path + ExternalDataLayout.folderSuffix)) ?? []
    }

    private func coordinator(_ url: URL) throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    private func photos(_ context: NSManagedObjectContext) throws -> [String: Data] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Photo")
        var found: [String: Data] = [:]
        for photo in try context.fetch(request) {
            if let name = photo.value(forKey: "name") as? String { found[name] = photo.value(forKey: "bytes") as? Data }
        }
        return found
    }

    func testTheObjectGraphSeesDataAndARolledBackValueWritesNoFile() throws {
        let url = folder.appendingPathComponent("photos.store")
        var (coordinator, context) = try coordinator(url)
        let photo = NSEntityDescription.insertNewObject(forEntityName: "Photo", into: context)
        photo.setValue("sunset", forKey: "name")
        photo.setValue(large(1), forKey: "bytes")
        try context.save()
        XCTAssertEqual(files(of: url).count, 1)
        photo.setValue(large(2), forKey: "bytes")
        context.rollback()
        XCTAssertEqual(photo.value(forKey: "bytes") as? Data, large(1))
        try context.save()
        XCTAssertEqual(files(of: url).count, 1, "a rolled-back value was written")
        for store in coordinator.persistentStores { try coordinator.remove(store) }

        (coordinator, context) = try self.coordinator(url)
        XCTAssertEqual(try photos(context), ["sunset": large(1)])
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    func testDestroyReplaceAndMigrateCarryTheExternalDataFolder() throws {
        let url = folder.appendingPathComponent("photos.store")
        var (coordinator, context) = try coordinator(url)
        for (name, seed) in [("a", UInt8(1)), ("b", 2)] {
            let photo = NSEntityDescription.insertNewObject(forEntityName: "Photo", into: context)
            photo.setValue(name, forKey: "name")
            photo.setValue(large(seed), forKey: "bytes")
        }
        try context.save()
        let expected = ["a": large(1), "b": large(2)]

        // A copy through the object graph writes its own files.
        let migratedURL = folder.appendingPathComponent("migrated.store")
        let store = try XCTUnwrap(coordinator.persistentStores.first)
        let migrated = try coordinator.migratePersistentStore(store, to: migratedURL, options: nil, withType: NSBinaryStoreType)
        try coordinator.remove(migrated)
        XCTAssertEqual(files(of: migratedURL).count, 2)

        let copyURL = folder.appendingPathComponent("copy.store")
        try coordinator.replacePersistentStore(at: copyURL, destinationOptions: nil, withPersistentStoreFrom: url, sourceOptions: nil, ofType: NSBinaryStoreType)
        XCTAssertEqual(Set(files(of: copyURL)), Set(files(of: url)))
        for store in coordinator.persistentStores { try coordinator.remove(store) }

        for checked in [url, migratedURL, copyURL] {
            (coordinator, context) = try self.coordinator(checked)
            XCTAssertEqual(try photos(context), expected, checked.lastPathComponent)
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }

        try NSPersistentStoreCoordinator(managedObjectModel: Self.model).destroyPersistentStore(at: copyURL, ofType: NSBinaryStoreType, options: nil)
        XCTAssertFalse(FileManager.default.fileExists(atPath: copyURL.path + ExternalDataLayout.folderSuffix), "destroy left the external-data folder")
        XCTAssertEqual(files(of: url).count, 2, "destroying the copy touched the original")
    }
}
