import CoreDataStorage
import Foundation
import XCTest
@testable import CoreData

/// The coordinator: configurations, store metadata and compatibility, routing, cross-store rules.
final class CoordinatorTests: XCTestCase {
    private func twoConfigurationModel(crossLink: Bool) -> NSManagedObjectModel {
        let note = NSEntityDescription()
        note.name = "Note"
        let text = NSAttributeDescription()
        text.name = "text"
        text.attributeType = .stringAttributeType
        let log = NSEntityDescription()
        log.name = "LogEntry"
        let message = NSAttributeDescription()
        message.name = "message"
        message.attributeType = .stringAttributeType
        var noteProperties: [NSPropertyDescription] = [text]
        var logProperties: [NSPropertyDescription] = [message]
        if crossLink {
            let entries = NSRelationshipDescription()
            entries.name = "entries"
            let owner = NSRelationshipDescription()
            owner.name = "note"
            owner.maxCount = 1
            entries.destinationEntity = log
            owner.destinationEntity = note
            entries.inverseRelationship = owner
            owner.inverseRelationship = entries
            noteProperties.append(entries)
            logProperties.append(owner)
        }
        note.properties = noteProperties
        log.properties = logProperties
        let model = NSManagedObjectModel()
        model.entities = [note, log]
        model.setEntities([note], forConfigurationName: "Notes")
        model.setEntities([log], forConfigurationName: "Logs")
        return model
    }

    func testConfigurationsRouteEntitiesToTheirStores() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: twoConfigurationModel(crossLink: false))
        let notes = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "Notes", at: nil)
        let logs = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "Logs", at: nil)
        XCTAssertEqual(coordinator.persistentStores.count, 2)
        XCTAssertEqual(notes.metadata[NSStoreTypeKey] as? String, NSInMemoryStoreType)
        XCTAssertEqual(notes.metadata[NSStoreUUIDKey] as? String, notes.identifier)
        XCTAssertEqual((notes.metadata[NSStoreModelVersionHashesKey] as? [String: Data])?.keys.sorted(), ["Note"])

        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let note = context.make("Note", ["text": "hello"])
        let entry = context.make("LogEntry", ["message": "saved"])
        try context.save()
        XCTAssertTrue(note.objectID.persistentStore === notes)
        XCTAssertTrue(entry.objectID.persistentStore === logs)
        XCTAssertEqual(try notes.engine.execute(StoreFetchRequest(entity: note.entity, resultType: .count)).countValue, 1)
        XCTAssertEqual(try logs.engine.execute(StoreFetchRequest(entity: note.entity, resultType: .count)).countValue, 0)

        try coordinator.remove(logs)
        XCTAssertEqual(coordinator.persistentStores.count, 1)
        XCTAssertThrowsError(try coordinator.remove(logs))
    }

    func testRelationshipAcrossStoresIsRejected() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: twoConfigurationModel(crossLink: true))
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "Notes", at: nil)
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "Logs", at: nil)) { error in
            let nsError = error as NSError
            XCTAssertEqual(nsError.code, NSPersistentStoreIncompatibleSchemaError)
            XCTAssertTrue(nsError.localizedDescription.contains("'LogEntry.note' would cross stores"), nsError.localizedDescription)
        }
    }

    func testUnknownStoreTypeAndConfiguration() {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: twoConfigurationModel(crossLink: false))
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: "Bogus", configurationName: nil, at: nil)) { error in
            XCTAssertEqual((error as NSError).code, NSPersistentStoreInvalidTypeError)
            XCTAssertTrue((error as NSError).localizedDescription.contains("unknown store type 'Bogus'"), (error as NSError).localizedDescription)
            XCTAssertTrue((error as NSError).localizedDescription.contains(NSBinaryStoreType), (error as NSError).localizedDescription)
        }
        // SQLite is served by the binary store, which needs a file.
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: nil)) { error in
            XCTAssertEqual((error as NSError).code, NSPersistentStoreInvalidTypeError)
            XCTAssertTrue((error as NSError).localizedDescription.contains("needs a file URL"), (error as NSError).localizedDescription)
        }
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "Nope", at: nil)) { error in
            XCTAssertEqual((error as NSError).code, NSPersistentStoreInvalidTypeError)
        }
    }

    /// Salvaging a damaged log is for reading only: the option without read-only is refused with
    /// an error that names both options; with it, an intact store opens as usual.
    func testSalvageOptionNeedsReadOnly() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("salvage-\(UUID().uuidString).store")
        let model = twoConfigurationModel(crossLink: false)
        let writer = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try writer.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url)
        try writer.remove(store)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: [NSBinaryStoreSalvageDamagedLogOption: true])) { error in
            XCTAssertEqual((error as NSError).code, NSPersistentStoreInvalidTypeError)
            XCTAssertTrue((error as NSError).localizedDescription.contains(NSReadOnlyPersistentStoreOption), (error as NSError).localizedDescription)
        }
        let salvaged = try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: [NSBinaryStoreSalvageDamagedLogOption: true, NSReadOnlyPersistentStoreOption: true])
        XCTAssertTrue(salvaged.isReadOnly)
    }

    /// A store saved with one model and opened with another fails with Apple's 134100 and names
    /// the entities that differ.
    func testIncompatibleVersionHashesNameTheEntities() throws {
        let old = twoConfigurationModel(crossLink: false)
        try old.freeze()
        var recorded = old.entityVersionHashesByName
        recorded["Note"] = Data(repeating: 7, count: 32)
        recorded["Gone"] = Data(repeating: 1, count: 32)
        let stale = StoreMetadata([NSStoreModelVersionHashesKey: recorded, NSStoreUUIDKey: "STALE", NSStoreTypeKey: "StaleTestStore"])
        StoreTypeRegistry.register("StaleTestStore") { model, _, _, _ in InMemoryStore(model: model, metadata: stale) }

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: twoConfigurationModel(crossLink: false))
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: "StaleTestStore", configurationName: nil, at: nil)) { error in
            let nsError = error as NSError
            XCTAssertEqual(nsError.code, NSPersistentStoreIncompatibleVersionHashError)
            XCTAssertEqual(nsError.code, 134100)
            XCTAssertTrue(nsError.localizedDescription.contains("'Gone', 'Note'"), nsError.localizedDescription)
        }
        XCTAssertTrue(coordinator.persistentStores.isEmpty)
    }

    func testMetadataCanBeReadAndSet() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: twoConfigurationModel(crossLink: false))
        let store = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        var metadata = coordinator.metadata(for: store)
        metadata["AppVersion"] = "2.1"
        coordinator.setMetadata(metadata, for: store)
        XCTAssertEqual(coordinator.metadata(for: store)["AppVersion"] as? String, "2.1")
        XCTAssertTrue(coordinator.managedObjectModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }
}

extension StoreFetchResult {
    var countValue: Int? {
        if case .count(let n) = self { return n }
        return nil
    }
}
