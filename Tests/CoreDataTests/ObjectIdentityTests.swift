import CoreData
import Foundation
import Synchronization
import XCTest

/// Equality and hashing of managed objects and their IDs, and the row a refetched fault keeps,
/// run against every store (``StoreKind``). Objects compare by identity and IDs by value, as on
/// Apple platforms; both take the fast paths of `isEqual(_:)` and `hash`, so these pin what
/// those paths must keep meaning.
final class ObjectIdentityTests: XCTestCase {
    func testObjectsAreEqualOnlyToThemselves() {
        forEachStore { kind, container in
            let context = container.viewContext
            let ada = context.make("Author", ["name": "Ada"])
            let alan = context.make("Author", ["name": "Alan"])
            XCTAssertTrue(ada.isEqual(ada), "[\(kind)]")
            XCTAssertFalse(ada.isEqual(alan), "[\(kind)]")
            XCTAssertFalse(ada.isEqual(nil), "[\(kind)]")
            XCTAssertFalse(ada.isEqual(5), "[\(kind)] a value that is no object")
            XCTAssertFalse(ada.isEqual("Ada"), "[\(kind)]")
            XCTAssertFalse(ada.isEqual(ada.objectID), "[\(kind)] an object is not its ID")
            XCTAssertEqual(ada.hash, ada.hash, "[\(kind)]")

            // Sets of objects (as the change notifications hold them) keep one entry per object.
            let many = (0..<500).map { context.make("Author", ["name": "A\($0)"]) }
            var set = Set(many)
            set.formUnion(many)
            set.insert(ada)
            XCTAssertEqual(set.count, 501, "[\(kind)]")
            XCTAssertTrue(many.allSatisfy(set.contains), "[\(kind)]")
            XCTAssertFalse(set.contains(alan), "[\(kind)]")
            XCTAssertTrue(NSSet(array: many + many).count == 500, "[\(kind)] NSSet dedupes by isEqual and hash")
        }
    }

    func testIDsAreEqualByValueAcrossInstances() {
        forEachStore { kind, container in
            let context = container.viewContext
            let authors = (0..<300).map { context.make("Author", ["name": "A\($0)"]) }
            try context.save()
            let ids = authors.map(\.objectID)
            let coordinator = try XCTUnwrap(context.persistentStoreCoordinator)
            // The same IDs again, as new instances: from their URIs.
            let again = try ids.map { try XCTUnwrap(coordinator.managedObjectID(forURIRepresentation: $0.uriRepresentation())) }
            for (id, copy) in zip(ids, again) {
                XCTAssertTrue(id.isEqual(copy), "[\(kind)] \(id)")
                XCTAssertEqual(id.hash, copy.hash, "[\(kind)]")
                XCTAssertEqual(id, copy, "[\(kind)]")
            }
            XCTAssertEqual(Set(ids + again).count, 300, "[\(kind)]")
            XCTAssertFalse(ids[0].isEqual(ids[1]), "[\(kind)]")
            XCTAssertFalse(ids[0].isEqual(nil), "[\(kind)]")
            XCTAssertFalse(ids[0].isEqual(authors[0]), "[\(kind)] an ID is not its object")
            XCTAssertFalse(ids[0].isEqual(ids[0].uriRepresentation()), "[\(kind)]")

            // A temporary ID equals only itself.
            let unsaved = context.make("Author", ["name": "New"])
            let temporary = unsaved.objectID
            XCTAssertTrue(temporary.isTemporaryID, "[\(kind)]")
            XCTAssertTrue(temporary.isEqual(temporary), "[\(kind)]")
            XCTAssertFalse(temporary.isEqual(ids[0]), "[\(kind)]")
        }
    }

    /// An inserted object's saved row starts as the values validation converted for it (one
    /// array, shared): a change after the save leaves its committed values as saved, and the
    /// next save writes the change and only it.
    func testAnInsertedObjectChangedAfterItsSaveKeepsItsCommittedValues() {
        forEachStore { kind, container in
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let ada = context.make("Author", ["name": "Ada", "rating": Int16(5)])
                try context.save()
                ada.setValue("Ada L.", forKey: "name")
                XCTAssertEqual(ada.committedValues(forKeys: ["name"])["name"] as? String, "Ada", "[\(kind)]")
                XCTAssertEqual(ada.changedValues().keys.sorted(), ["name"], "[\(kind)]")
                try context.save()
                let committed = ada.committedValues(forKeys: ["name", "rating"])
                XCTAssertEqual(committed["name"] as? String, "Ada L.", "[\(kind)]")
                XCTAssertEqual(committed["rating"] as? Int16, 5, "[\(kind)]")
            }
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let stored = try XCTUnwrap(reader.all("Author").first)
                XCTAssertEqual(stored.value(forKey: "name") as? String, "Ada L.", "[\(kind)]")
                XCTAssertEqual(stored.value(forKey: "rating") as? Int16, 5, "[\(kind)]")
            }
        }
    }

    /// A fault fetched again takes the newer row: firing it shows the other context's save, and
    /// its committed values are that row's.
    func testAFaultFetchedAgainKeepsTheNewerRow() {
        forEachStore { kind, container in
            let writer = container.newBackgroundContext()
            try writer.performAndWait {
                writer.make("Author", ["name": "Ada", "rating": Int16(5)])
                try writer.save()
            }
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
                request.returnsObjectsAsFaults = true
                let first = try XCTUnwrap(reader.fetch(request).first)
                XCTAssertTrue(first.isFault, "[\(kind)]")
                try writer.performAndWait {
                    let ada = try XCTUnwrap(writer.all("Author").first)
                    ada.setValue(Int16(4), forKey: "rating")
                    try writer.save()
                }
                let again = try XCTUnwrap(reader.fetch(request).first)
                XCTAssertTrue(again === first, "[\(kind)] one object per ID")
                XCTAssertTrue(again.isFault, "[\(kind)] still a fault")
                XCTAssertEqual(again.value(forKey: "rating") as? Int16, 4, "[\(kind)] fired from the newer row")
                XCTAssertEqual(again.committedValues(forKeys: ["rating"])["rating"] as? Int16, 4, "[\(kind)]")
                XCTAssertFalse(again.hasChanges, "[\(kind)]")
                // Saving a change over that row is no conflict.
                again.setValue(Int16(3), forKey: "rating")
                XCTAssertNoThrow(try reader.save(), "[\(kind)]")
            }
            try writer.performAndWait {
                writer.refreshAllObjects()
                XCTAssertEqual(try writer.all("Author").first?.value(forKey: "rating") as? Int16, 3, "[\(kind)]")
            }
        }
    }

    /// An inserted object makes its temporary ID only when asked for, and is registered from
    /// the start all the same: `registeredObjects`, lookups by the ID once it exists, reset,
    /// rollback and permanent IDs see it as Apple's context does.
    func testAnInsertedObjectIsRegisteredWhetherOrNotItsIDWasAskedFor() {
        forEachStore { kind, container in
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let quiet = context.make("Author", ["name": "Quiet"])
                let asked = context.make("Author", ["name": "Asked"])
                XCTAssertTrue(context.registeredObjects.contains(quiet), "[\(kind)] registered before its ID exists")
                XCTAssertEqual(context.registeredObjects.count, 2, "[\(kind)]")
                let temporary = asked.objectID
                XCTAssertTrue(temporary.isTemporaryID, "[\(kind)]")
                XCTAssertTrue(asked.objectID === temporary, "[\(kind)] one temporary ID")
                XCTAssertTrue(context.registeredObject(for: temporary) === asked, "[\(kind)]")
                XCTAssertTrue(context.object(with: temporary) === asked, "[\(kind)]")
                XCTAssertTrue(try context.existingObject(with: temporary) === asked, "[\(kind)]")
                XCTAssertEqual(context.registeredObjects.count, 2, "[\(kind)] asking adds no second entry")

                // Permanent IDs for both: the quiet one never makes a temporary ID.
                try context.obtainPermanentIDs(for: [quiet, asked])
                XCTAssertFalse(quiet.objectID.isTemporaryID, "[\(kind)]")
                XCTAssertFalse(asked.objectID.isTemporaryID, "[\(kind)]")
                XCTAssertNil(context.registeredObject(for: temporary), "[\(kind)] the temporary entry left")
                XCTAssertTrue(context.registeredObject(for: quiet.objectID) === quiet, "[\(kind)]")
                try context.save()
                XCTAssertEqual(try context.all("Author").count, 2, "[\(kind)]")

                // Rollback and reset let go of inserted objects with or without IDs.
                let dropped = context.make("Author", ["name": "Dropped"])
                let droppedWithID = context.make("Author", ["name": "DroppedWithID"])
                let droppedID = droppedWithID.objectID
                context.rollback()
                XCTAssertNil(dropped.managedObjectContext, "[\(kind)]")
                XCTAssertNil(context.registeredObject(for: droppedID), "[\(kind)]")
                XCTAssertFalse(context.registeredObjects.contains(dropped), "[\(kind)]")
                let forgotten = context.make("Author", ["name": "Forgotten"])
                let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)
                context.reset()
                let invalidated = changes.notifications.last?.userInfo?[NSInvalidatedAllObjectsKey] as? [NSManagedObject] ?? []
                XCTAssertTrue(invalidated.contains(forgotten), "[\(kind)] reset names the inserted object without an ID")
                XCTAssertNil(forgotten.managedObjectContext, "[\(kind)]")
                XCTAssertTrue(context.registeredObjects.isEmpty, "[\(kind)]")
                XCTAssertEqual(try context.all("Author").count, 2, "[\(kind)] nothing unsaved was saved")
            }
        }
    }

    /// A fetched object is registered by its row's key and makes its ID only when asked for:
    /// IDs made anywhere else (another context, a URI, another coordinator of the same store)
    /// find it, the ID it makes equals theirs, and it keeps working after its context lets go.
    func testAFetchedObjectIsFoundByIDsMadeElsewhere() {
        forEachStore { kind, container in
            let writer = container.newBackgroundContext()
            let savedIDs: [NSManagedObjectID] = try writer.performAndWait {
                let authors = (0..<50).map { writer.make("Author", ["name": "A\($0)"]) }
                try writer.save()
                return authors.map(\.objectID)
            }
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let fetched = try reader.all("Author")
                XCTAssertEqual(fetched.count, 50, "[\(kind)]")
                let byName = Dictionary(uniqueKeysWithValues: fetched.map { ($0.value(forKey: "name") as? String ?? "", $0) })
                let coordinator = try XCTUnwrap(reader.persistentStoreCoordinator)
                for (index, id) in savedIDs.enumerated() {
                    let object = try XCTUnwrap(byName["A\(index)"], "[\(kind)]")
                    // Looked up before the object has made its own ID.
                    XCTAssertTrue(reader.registeredObject(for: id) === object, "[\(kind)] \(id)")
                    XCTAssertTrue(reader.object(with: id) === object, "[\(kind)]")
                    let fromURI = try XCTUnwrap(coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation()))
                    XCTAssertTrue(try reader.existingObject(with: fromURI) === object, "[\(kind)]")
                    XCTAssertEqual(object.objectID, id, "[\(kind)]")
                    XCTAssertEqual(object.objectID.hash, id.hash, "[\(kind)]")
                    XCTAssertTrue(object.objectID === object.objectID, "[\(kind)] one ID once made")
                    XCTAssertFalse(object.objectID.isTemporaryID, "[\(kind)]")
                }
                XCTAssertEqual(reader.registeredObjects.count, 50, "[\(kind)] no second entry for any of them")

                // A change, a save and a delete of an object whose ID nobody asked for.
                let again = try reader.all("Author")
                XCTAssertTrue(Set(again.map(ObjectIdentifier.init)) == Set(fetched.map(ObjectIdentifier.init)), "[\(kind)] one object per row")
                let renamed = try XCTUnwrap(reader.fetch(Self.author(named: "A7")).first)
                renamed.setValue("Seven", forKey: "name")
                let removed = try XCTUnwrap(reader.fetch(Self.author(named: "A8")).first)
                reader.delete(removed)
                try reader.save()
                reader.reset()
                XCTAssertEqual(renamed.objectID, savedIDs[7], "[\(kind)] the ID of an object its context forgot")
            }
            try writer.performAndWait {
                writer.refreshAllObjects()
                XCTAssertEqual(try writer.existingObject(with: savedIDs[7]).value(forKey: "name") as? String, "Seven", "[\(kind)]")
                XCTAssertEqual(try writer.all("Author").count, 49, "[\(kind)]")
            }

            // Another coordinator of the same store, with the same model instance or another
            // instance of it (other entity descriptions: IDs compare and hash by entity name):
            // its IDs find this context's objects.
            guard kind == .binary || kind == .xml, let store = container.persistentStoreCoordinator.persistentStores.first, let url = store.url else { return }
            for (model, name, what) in [(container.managedObjectModel, "A3", "another coordinator"), (TestModel.make(), "A4", "another model instance")] {
                let other = NSPersistentStoreCoordinator(managedObjectModel: model)
                try other.addPersistentStore(ofType: store.type, configurationName: nil, at: url, options: nil)
                defer { for added in other.persistentStores { try? other.remove(added) } }
                let otherContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                otherContext.persistentStoreCoordinator = other
                let otherID = try otherContext.performAndWait { try XCTUnwrap(otherContext.fetch(Self.author(named: name)).first).objectID }
                try reader.performAndWait {
                    let object = try XCTUnwrap(reader.fetch(Self.author(named: name)).first)
                    XCTAssertTrue(reader.registeredObject(for: otherID) === object, "[\(kind)] an ID of \(what)")
                    XCTAssertEqual(object.objectID, otherID, "[\(kind)] \(what)")
                    XCTAssertEqual(object.objectID.hash, otherID.hash, "[\(kind)] \(what)")
                }
            }
        }
    }

    /// A fetch of more rows than a store hands over in one run (the binary store answers a
    /// large fetch in runs the context frees as it goes) returns every object once, in the
    /// store's order, filled, and a second fetch returns the same objects.
    func testAFetchOfManyRunsOfRowsReturnsEveryObjectOnce() {
        forEachStore { kind, container in
            let count = 10_000
            let writer = container.newBackgroundContext()
            try writer.performAndWait {
                for index in 0..<count { _ = writer.make("Author", ["name": "A\(index)"]) }
                try writer.save()
            }
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let fetched = try reader.all("Author")
                XCTAssertEqual(fetched.count, count, "[\(kind)]")
                XCTAssertEqual(Set(fetched.map(ObjectIdentifier.init)).count, count, "[\(kind)] one object per row")
                let names = Set(fetched.compactMap { $0.value(forKey: "name") as? String })
                XCTAssertEqual(names, Set((0..<count).map { "A\($0)" }), "[\(kind)]")
                XCTAssertEqual(Set(fetched.map(\.objectID)).count, count, "[\(kind)]")
                XCTAssertEqual(reader.registeredObjects.count, count, "[\(kind)]")
                let again = try reader.all("Author")
                XCTAssertTrue(zip(fetched, again).allSatisfy { $0 === $1 }, "[\(kind)] the same objects, in the same order")
            }
        }
    }

    /// A fetched object makes its ID once, whichever threads ask at the same time (Apple lets
    /// any thread read an object's ID), and does not keep its store alive: after the store is
    /// removed and released, the ID it makes names the store it came from, with no store.
    func testAFetchedObjectsIDIsMadeOnceAndHoldsItsStoreWeakly() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.newBackgroundContext()
        let (objects, savedIDs) = try context.performAndWait { () -> ([NSManagedObject], [NSManagedObjectID]) in
            let authors = (0..<200).map { context.make("Author", ["name": "A\($0)"]) }
            try context.save()
            let ids = authors.map(\.objectID)
            context.reset()
            return (try context.all("Author"), ids)
        }
        // Eight threads ask for every object's ID at once (objects are not Sendable; their
        // IDs are what this reads across threads).
        let seen = Mutex<[[ObjectIdentifier]]>(Array(repeating: [], count: 8))
        nonisolated(unsafe) let shared = objects
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            let ids = shared.map { ObjectIdentifier($0.objectID) }
            seen.withLock { $0[thread] = ids }
        }
        let all = seen.withLock { $0 }
        for thread in 1..<8 { XCTAssertEqual(all[thread], all[0], "one ID instance per object, whichever thread made it") }
        XCTAssertEqual(Set(objects.map(\.objectID)), Set(savedIDs))

        // Objects fetched and never asked for their ID, whose store then goes.
        weak var weakStore: NSPersistentStore?
        let (late, lateStoreIdentifier) = try Self.fetchFromARemovedStore { weakStore = $0 }
        XCTAssertNil(weakStore, "a fetched object does not keep its removed store alive")
        let lateID = try XCTUnwrap(late.first).objectID
        XCTAssertFalse(lateID.isTemporaryID)
        XCTAssertNil(lateID.persistentStore)
        XCTAssertEqual(lateID.uriRepresentation().host, lateStoreIdentifier, "\(lateID)")
    }

    /// Fetches one author from a fresh in-memory store, then removes the store and lets go of
    /// the container; `store` sees the store before it goes.
    private static func fetchFromARemovedStore(_ store: (NSPersistentStore) -> Void) throws -> ([NSManagedObject], String) {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.newBackgroundContext()
        let fetched = try context.performAndWait { () -> [NSManagedObject] in
            context.make("Author", ["name": "Late"])
            try context.save()
            context.reset()
            return try context.all("Author")
        }
        let added = try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first)
        store(added)
        let identifier = added.identifier
        try container.persistentStoreCoordinator.remove(added)
        return (fetched, identifier)
    }

    private static func author(named name: String) -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
        request.predicate = NSPredicate(format: "name == %@", name)
        return request
    }
}
