import CoreData
import Foundation
import XCTest

/// `retainsRegisteredObjects`, run against every store (``StoreKind``): by default (`false`, as
/// Apple's) a context holds only its changed objects strongly, and lets any other object go,
/// unregistered, when nothing else references it; with `true` it keeps every object.
///
/// Each scenario works in a background context inside `performAndWait` (which, unlike
/// `perform`, ends with no ``NSManagedObjectContext/processPendingChanges()`` that would hold
/// changed objects for a notice), and drops its references at the end of a `do` block.
final class RegisteredObjectRetentionTests: XCTestCase {
    /// Saves authors Ada (rating 5) and Alan (2), and Ada's book Notes (120 pages).
    private func seed(_ container: NSPersistentContainer) throws {
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            let ada = writer.make("Author", ["name": "Ada", "rating": Int16(5)])
            writer.make("Author", ["name": "Alan", "rating": Int16(2)])
            writer.make("Book", ["title": "Notes", "pages": Int32(120), "author": ada])
            try writer.save()
        }
    }

    private func author(_ name: String, in context: NSManagedObjectContext) throws -> NSManagedObject {
        try XCTUnwrap(context.all("Author", where: "name == %@", name).first)
    }

    func testUnchangedObjectIsReleasedAndUnregisteredWhenDropped() {
        forEachStore { kind, container in
            try seed(container)
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                XCTAssertFalse(reader.retainsRegisteredObjects, "[\(kind)] Apple's default")
                weak var released: NSManagedObject?
                let id: NSManagedObjectID
                do {
                    let ada = try author("Ada", in: reader)
                    XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada", "[\(kind)]")
                    released = ada
                    id = ada.objectID
                    XCTAssertTrue(reader.registeredObject(for: id) === ada, "[\(kind)] registered while referenced")
                    XCTAssertTrue(reader.registeredObjects.contains(ada), "[\(kind)]")
                }
                XCTAssertNil(released, "[\(kind)] the context let the unchanged object go")
                XCTAssertNil(reader.registeredObject(for: id), "[\(kind)] and unregistered it")
                XCTAssertFalse(reader.registeredObjects.contains { $0.objectID == id }, "[\(kind)]")
                // Whatever iterates the registered objects skips it.
                reader.refreshAllObjects()
                XCTAssertTrue(reader.registeredObjects.isEmpty, "[\(kind)]")
            }
        }
    }

    func testChangedObjectsAreKeptUntilSavedThenReleased() {
        forEachStore { kind, container in
            try seed(container)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                weak var updated: NSManagedObject?
                weak var deleted: NSManagedObject?
                weak var inserted: NSManagedObject?
                let updatedID: NSManagedObjectID
                let deletedID: NSManagedObjectID
                do {
                    let ada = try author("Ada", in: context)
                    ada.setValue(Int16(1), forKey: "rating")
                    updated = ada
                    updatedID = ada.objectID
                    let alan = try author("Alan", in: context)
                    context.delete(alan)
                    deleted = alan
                    deletedID = alan.objectID
                    inserted = context.make("Author", ["name": "Grace", "rating": Int16(4)])
                }
                XCTAssertNotNil(updated, "[\(kind)] an updated object stays until saved")
                XCTAssertTrue(context.registeredObject(for: updatedID)?.isUpdated ?? false, "[\(kind)]")
                XCTAssertEqual(context.registeredObject(for: updatedID)?.value(forKey: "rating") as? Int16, 1, "[\(kind)] with its change")
                XCTAssertNotNil(deleted, "[\(kind)] a deleted object stays until saved")
                XCTAssertTrue(context.registeredObject(for: deletedID)?.isDeleted ?? false, "[\(kind)]")
                XCTAssertNotNil(inserted, "[\(kind)] an inserted object stays until saved")
                XCTAssertEqual(context.insertedObjects.count, 1, "[\(kind)]")

                try context.save()
                XCTAssertNil(updated, "[\(kind)] saved, the updated object goes")
                XCTAssertNil(deleted, "[\(kind)] the deleted one too")
                XCTAssertNil(inserted, "[\(kind)] and the inserted one")
                XCTAssertNil(context.registeredObject(for: updatedID), "[\(kind)]")
                XCTAssertTrue(context.registeredObjects.isEmpty, "[\(kind)]")

                let names = try context.all("Author", sortedBy: "name").map { "\($0.value(forKey: "name") ?? "nil")=\($0.value(forKey: "rating") ?? "nil")" }
                XCTAssertEqual(names, ["Ada=1", "Grace=4"], "[\(kind)] what was saved is what the store holds")
            }
        }
    }

    func testRollbackLetsGoOfObjectsItNoLongerHolds() {
        forEachStore { kind, container in
            try seed(container)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                weak var updated: NSManagedObject?
                do {
                    let ada = try author("Ada", in: context)
                    ada.setValue(Int16(3), forKey: "rating")
                    updated = ada
                }
                XCTAssertNotNil(updated, "[\(kind)]")
                context.rollback()
                XCTAssertNil(updated, "[\(kind)] rolled back, nothing holds it")
                XCTAssertEqual(try author("Ada", in: context).value(forKey: "rating") as? Int16, 5, "[\(kind)]")
            }
        }
    }

    /// Holds fetched objects so that another thread can drop the last references to them.
    private final class Holder: @unchecked Sendable {
        var objects: [NSManagedObject]?
    }

    /// Objects released for the last time on another thread while the context looks them up (a
    /// fetch handed to another thread is released there): the context hands out live objects
    /// only, never one whose deinit has begun, and forgets every one of them.
    func testObjectsReleasedOnAnotherThreadWhileTheContextLooksThemUp() {
        forEachStore { kind, container in
            let writer = container.newBackgroundContext()
            try writer.performAndWait {
                for i in 0..<200 { writer.make("Author", ["name": "Author \(i)", "rating": Int16(i % 5)]) }
                try writer.save()
            }
            let context = container.newBackgroundContext()
            for round in 0..<25 {
                let holder = Holder()
                let ids = try context.performAndWait {
                    let objects = try context.all("Author")
                    holder.objects = objects
                    return objects.map(\.objectID)
                }
                XCTAssertEqual(ids.count, 200, "[\(kind)]")
                let released = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    holder.objects = nil
                    released.signal()
                }
                var found = 0
                context.performAndWait {
                    for id in ids.reversed() {
                        guard let object = context.registeredObject(for: id) else { continue }
                        found += 1
                        XCTAssertEqual(object.objectID, id, "[\(kind)] round \(round)")
                        XCTAssertNotNil(object.value(forKey: "name") as? String, "[\(kind)] round \(round)")
                    }
                }
                released.wait()
                XCTAssertLessThanOrEqual(found, 200, "[\(kind)]")
                context.performAndWait {
                    XCTAssertTrue(context.registeredObjects.isEmpty, "[\(kind)] round \(round): every object went")
                    XCTAssertNil(ids.first.flatMap { context.registeredObject(for: $0) }, "[\(kind)]")
                }
            }
        }
    }

    func testRetainsRegisteredObjectsKeepsEveryObject() {
        forEachStore { kind, container in
            try seed(container)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                context.retainsRegisteredObjects = true
                XCTAssertTrue(context.retainsRegisteredObjects, "[\(kind)]")
                weak var kept: NSManagedObject?
                do {
                    let authors = try context.all("Author")
                    XCTAssertEqual(authors.count, 2, "[\(kind)]")
                    kept = authors.first
                }
                XCTAssertNotNil(kept, "[\(kind)] the context holds every registered object")
                XCTAssertEqual(context.registeredObjects.count, 2, "[\(kind)]")

                // Turned off, the context lets go of what only it held.
                context.retainsRegisteredObjects = false
                XCTAssertNil(kept, "[\(kind)]")
                XCTAssertTrue(context.registeredObjects.isEmpty, "[\(kind)]")

                // reset() lets go of what a retaining context held.
                context.retainsRegisteredObjects = true
                do { kept = try author("Alan", in: context) }
                XCTAssertNotNil(kept, "[\(kind)]")
                context.reset()
                XCTAssertNil(kept, "[\(kind)] reset() lets go")
            }
        }
    }

    func testAContextThatGoesAwayLetsGoOfWhatItRetained() {
        forEachStore { kind, container in
            try seed(container)
            weak var kept: NSManagedObject?
            weak var gone: NSManagedObjectContext?
            do {
                let context = container.newBackgroundContext()
                context.retainsRegisteredObjects = true
                gone = context
                try context.performAndWait { kept = try author("Ada", in: context) }
                XCTAssertNotNil(kept, "[\(kind)] the retaining context holds it")
            }
            XCTAssertNil(gone, "[\(kind)]")
            XCTAssertNil(kept, "[\(kind)] the context went away and let go of its objects")
        }
    }

    /// An object another context registers (here through its `obtainPermanentIDs(for:)`, which
    /// Apple leaves undefined for an object of another context) leaves the first context's
    /// registry: a registry names an object only while the object can remove that entry, so
    /// neither context is left with an entry for an object that is gone.
    func testAnObjectRegisteredByAnotherContextLeavesTheFirst() {
        forEachStore { kind, container in
            let first = container.newBackgroundContext()
            let second = container.newBackgroundContext()
            weak var released: NSManagedObject?
            let temporaryID = try first.performAndWait { () throws -> NSManagedObjectID in
                let object = first.make("Author", ["name": "Ada", "rating": Int16(1)])
                released = object
                let id = object.objectID
                try second.performAndWait { try second.obtainPermanentIDs(for: [object]) }
                XCTAssertNil(first.registeredObject(for: id), "[\(kind)] the first context's entry went")
                XCTAssertTrue(second.registeredObject(for: object.objectID) === object, "[\(kind)] the second one names it")
                first.rollback()
                return id
            }
            XCTAssertNil(released, "[\(kind)] nothing holds the object any more")
            first.performAndWait {
                XCTAssertTrue(first.registeredObjects.isEmpty, "[\(kind)]")
                XCTAssertNil(first.registeredObject(for: temporaryID), "[\(kind)]")
            }
            second.performAndWait { XCTAssertTrue(second.registeredObjects.isEmpty, "[\(kind)]") }
        }
    }

    func testObjectReferencedByAnotherObjectsRelationshipStays() {
        forEachStore { kind, container in
            try seed(container)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                weak var weakBook: NSManagedObject?
                weak var weakAuthor: NSManagedObject?
                do {
                    let book = try XCTUnwrap(context.all("Book").first)
                    weakBook = book
                    do {
                        let ada = try XCTUnwrap(book.value(forKey: "author") as? NSManagedObject)
                        XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada", "[\(kind)]")
                        weakAuthor = ada
                    }
                    XCTAssertNotNil(weakAuthor, "[\(kind)] the book's relationship holds the author")
                    XCTAssertNotNil(weakAuthor.flatMap { context.registeredObject(for: $0.objectID) }, "[\(kind)] which stays registered")
                    XCTAssertTrue((book.value(forKey: "author") as? NSManagedObject) === weakAuthor, "[\(kind)] the same instance")
                }
                XCTAssertNil(weakBook, "[\(kind)]")
                XCTAssertNil(weakAuthor, "[\(kind)] with the book gone, the author goes too")
                XCTAssertTrue(context.registeredObjects.isEmpty, "[\(kind)]")
            }
        }
    }

    func testRefetchAfterReleaseMakesANewInstanceWithStoredValues() {
        forEachStore { kind, container in
            try seed(container)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                weak var released: NSManagedObject?
                let id: NSManagedObjectID
                do {
                    let ada = try author("Ada", in: context)
                    released = ada
                    id = ada.objectID
                }
                XCTAssertNil(released, "[\(kind)]")

                let refetched = try author("Ada", in: context)
                XCTAssertEqual(refetched.objectID, id, "[\(kind)]")
                XCTAssertEqual(refetched.value(forKey: "rating") as? Int16, 5, "[\(kind)] the stored values")
                XCTAssertTrue(context.registeredObject(for: id) === refetched, "[\(kind)] registered again")
                XCTAssertTrue(context.object(with: id) === refetched, "[\(kind)] one instance per ID while it lives")

                // A fault made by ID, and one reached through a relationship, read the store.
                let alanID = try author("Alan", in: context).objectID
                XCTAssertNil(context.registeredObject(for: alanID), "[\(kind)]")
                let fault = context.object(with: alanID)
                XCTAssertEqual(fault.value(forKey: "name") as? String, "Alan", "[\(kind)]")
                let book = try XCTUnwrap(context.all("Book").first)
                XCTAssertTrue((book.value(forKey: "author") as? NSManagedObject) === refetched, "[\(kind)] a relationship finds the live instance")
            }
        }
    }

    func testMergeForReleasedObjectsDoesNoHarm() {
        forEachStore { kind, container in
            try seed(container)
            let reader = container.newBackgroundContext()
            let writer = container.newBackgroundContext()
            let ids = try reader.performAndWait { () -> [NSManagedObjectID] in
                try reader.all("Author", sortedBy: "name").map(\.objectID)
            }
            XCTAssertEqual(ids.count, 2, "[\(kind)]")
            let graceID = try writer.performAndWait { () -> NSManagedObjectID in
                let ada = try writer.existingObject(with: ids[0])
                ada.setValue(Int16(2), forKey: "rating")
                writer.delete(try writer.existingObject(with: ids[1]))
                let grace = writer.make("Author", ["name": "Grace", "rating": Int16(4)])
                try writer.save()
                return grace.objectID
            }
            // What another context (or process) saved, as IDs: an update, a delete, an insert.
            let changes: [AnyHashable: Any] = [NSUpdatedObjectsKey: [ids[0]], NSDeletedObjectsKey: [ids[1]], NSInsertedObjectsKey: [graceID]]
            reader.performAndWait {
                XCTAssertNil(reader.registeredObject(for: ids[0]), "[\(kind)] released before the merge")
            }
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: changes, into: [reader])
            try reader.performAndWait {
                XCTAssertNil(reader.registeredObject(for: ids[0]), "[\(kind)] an update to a released object registers nothing")
                XCTAssertNil(reader.registeredObject(for: ids[1]), "[\(kind)]")
                let names = try reader.all("Author", sortedBy: "name").map { "\($0.value(forKey: "name") ?? "nil")=\($0.value(forKey: "rating") ?? "nil")" }
                XCTAssertEqual(names, ["Ada=2", "Grace=4"], "[\(kind)] a fetch after the merge reads the saved state")
            }
        }
    }

    func testChildSaveIntoAParentThatLetTheObjectGo() {
        forEachStore { kind, container in
            try seed(container)
            let parent = container.newBackgroundContext()
            let adaID = try parent.performAndWait { () -> NSManagedObjectID in
                try author("Ada", in: parent).objectID
            }
            parent.performAndWait {
                XCTAssertNil(parent.registeredObject(for: adaID), "[\(kind)] the parent let Ada go")
            }
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = parent
            try child.performAndWait {
                let ada = try child.existingObject(with: adaID)
                XCTAssertEqual(ada.value(forKey: "rating") as? Int16, 5, "[\(kind)] read through the parent")
                ada.setValue(Int16(3), forKey: "rating")
                try child.save()
            }
            try parent.performAndWait {
                XCTAssertEqual(parent.registeredObject(for: adaID)?.value(forKey: "rating") as? Int16, 3,
                               "[\(kind)] the child's change is a pending change of the parent, held there")
                try parent.save()
                XCTAssertNil(parent.registeredObject(for: adaID), "[\(kind)] saved, the parent lets it go")
            }
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                XCTAssertEqual(try author("Ada", in: reader).value(forKey: "rating") as? Int16, 3, "[\(kind)] saved to the store")
            }
        }
    }
}
