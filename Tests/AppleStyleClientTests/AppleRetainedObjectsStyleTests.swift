// Code written the way Apple-platform Core Data code relies on a context not retaining its
// objects (issue 20): a background import walks many objects and its context does not grow with
// them, objects the code still uses stay registered, unsaved changes survive the code dropping
// its references, and `retainsRegisteredObjects = true` turns the context into a cache.
// Foundation, XCTest and CoreData are imported side by side with no type aliases.
import Foundation
import XCTest
import CoreData

final class AppleRetainedObjectsStyleTests: XCTestCase {
    private func makeContainer() throws -> NSPersistentContainer {
        let reading = NSEntityDescription()
        reading.name = "Reading"
        let sensor = NSAttributeDescription()
        sensor.name = "sensor"
        sensor.attributeType = .stringAttributeType
        let value = NSAttributeDescription()
        value.name = "value"
        value.attributeType = .doubleAttributeType
        value.defaultValue = 0.0
        let flagged = NSAttributeDescription()
        flagged.name = "flagged"
        flagged.attributeType = .booleanAttributeType
        flagged.defaultValue = false
        reading.properties = [sensor, value, flagged]
        let model = NSManagedObjectModel()
        model.entities = [reading]

        let container = NSPersistentContainer(name: "Readings", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<500 {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Reading", into: context)
                object.setValue("s\(index % 5)", forKey: "sensor")
                object.setValue(Double(index), forKey: "value")
            }
            try context.save()
        }
        return container
    }

    /// A background pass over every reading, one batch at a time: what the pass no longer
    /// holds leaves the context, and what it changed is saved.
    func testBackgroundPassDoesNotGrowTheContext() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            XCTAssertFalse(context.retainsRegisteredObjects)
            var offset = 0
            while true {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Reading")
                request.sortDescriptors = [NSSortDescriptor(key: "value", ascending: true)]
                request.fetchOffset = offset
                request.fetchLimit = 100
                let batch = try context.fetch(request)
                if batch.isEmpty { break }
                for reading in batch where reading.value(forKey: "sensor") as? String == "s0" {
                    reading.setValue(true, forKey: "flagged")
                }
                try context.save()
                offset += batch.count
            }
            XCTAssertEqual(offset, 500)
            XCTAssertTrue(context.registeredObjects.isEmpty, "nothing holds the readings any more")

            let flagged = NSFetchRequest<NSManagedObject>(entityName: "Reading")
            flagged.predicate = NSPredicate(format: "flagged == YES")
            XCTAssertEqual(try context.count(for: flagged), 100, "every s0 reading was saved flagged")
        }
    }

    /// Objects the code keeps stay registered and are the ones the context hands out again;
    /// an unsaved change survives the code forgetting the object.
    func testKeptObjectsAndUnsavedChanges() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Reading")
            request.predicate = NSPredicate(format: "value < 3")
            let kept = try context.fetch(request)
            XCTAssertEqual(kept.count, 3)
            for reading in kept {
                XCTAssertTrue(context.registeredObject(for: reading.objectID) === reading)
                XCTAssertTrue(context.object(with: reading.objectID) === reading)
            }

            var changedID: NSManagedObjectID?
            do {
                request.predicate = NSPredicate(format: "value == 100")
                let reading = try XCTUnwrap(try context.fetch(request).first)
                reading.setValue(-1.0, forKey: "value")
                changedID = reading.objectID
            }
            let id = try XCTUnwrap(changedID)
            XCTAssertEqual(context.registeredObject(for: id)?.value(forKey: "value") as? Double, -1.0)
            XCTAssertTrue(context.hasChanges)
            try context.save()
            XCTAssertNil(context.registeredObject(for: id))
            XCTAssertEqual(context.object(with: id).value(forKey: "value") as? Double, -1.0)
        }
    }

    /// A context used as a cache keeps what it fetched until reset.
    func testRetainingContextAsACache() throws {
        let container = try makeContainer()
        let cache = container.newBackgroundContext()
        try cache.performAndWait {
            cache.retainsRegisteredObjects = true
            _ = try cache.fetch(NSFetchRequest<NSManagedObject>(entityName: "Reading"))
            XCTAssertEqual(cache.registeredObjects.count, 500)
            cache.reset()
            XCTAssertTrue(cache.registeredObjects.isEmpty)
        }
    }
}
