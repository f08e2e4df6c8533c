import CoreData
import Foundation
import XCTest

/// Merging as Apple's: children that merge their siblings' saves into the parent, the current
/// event's changes, the merge notification with object IDs, and `reset()`'s invalidated objects.
final class MergeNotificationTests: XCTestCase {
    /// A child with `automaticallyMergesChangesFromParent` sees what a sibling saved into their
    /// parent context: new objects, updated values and deletions.
    func testAChildMergesItsSiblingsSavesIntoTheParent() {
        forEachStore { kind, container in
            let parent = container.viewContext
            let kept = parent.make("Author", ["name": "Kept"])
            let gone = parent.make("Author", ["name": "Gone"])
            try parent.save()
            let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            writer.parent = parent
            let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            reader.parent = parent
            reader.automaticallyMergesChangesFromParent = true
            let (keptID, goneID) = (kept.objectID, gone.objectID)
            try reader.performAndWait {
                XCTAssertEqual(try reader.all("Author").count, 2)
                XCTAssertEqual(reader.object(with: keptID).value(forKey: "name") as? String, "Kept")
            }
            let merged = expectation(forNotification: .NSManagedObjectContextDidMergeChangesObjectIDs, object: reader)
            let merges = NotificationRecorder(name: .NSManagedObjectContextDidMergeChangesObjectIDs, object: reader)
            let newID = try writer.performAndWait { () throws -> NSManagedObjectID in
                let added = writer.make("Author", ["name": "New"])
                writer.object(with: keptID).setValue("Renamed", forKey: "name")
                writer.delete(writer.object(with: goneID))
                try writer.save()
                return added.objectID
            }
            wait(for: [merged], timeout: 5)
            reader.performAndWait {
                XCTAssertEqual(reader.object(with: keptID).value(forKey: "name") as? String, "Renamed", "[\(kind)] the update is merged")
                // The merge registered the new object, then let it go: nothing here holds it.
                let inserted = merges.notifications.last?.userInfo?[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID>
                XCTAssertEqual(inserted, [newID], "[\(kind)] the sibling's new object is merged")
                XCTAssertEqual(reader.object(with: newID).value(forKey: "name") as? String, "New")
                XCTAssertNil(reader.registeredObject(for: goneID), "[\(kind)] the deleted object left")
            }
        }
    }

    /// `changedValuesForCurrentEvent()` holds what changed since the last
    /// `NSManagedObjectContextObjectsDidChange` (inside its observer: what it reports).
    func testChangedValuesForCurrentEvent() {
        forEachStore { kind, container in
            let context = container.viewContext
            let author = context.make("Author", ["name": "Ada"])
            try context.save()
            let seen = EventValuesRecorder(author, context)
            author.setValue("Ada L.", forKey: "name")
            XCTAssertEqual(author.changedValuesForCurrentEvent() as? [String: String], ["name": "Ada L."], "[\(kind)]")
            context.processPendingChanges()
            XCTAssertEqual(seen.values.last as? [String: String], ["name": "Ada L."], "[\(kind)] the observer sees the event's changes")
            let book = context.make("Book", ["title": "Notes"])
            book.setValue(author, forKey: "author")
            context.processPendingChanges()
            XCTAssertEqual(Set(author.changedValuesForCurrentEvent().keys), ["books"], "[\(kind)] only this event's change")
            XCTAssertEqual(Set(author.changedValues().keys), ["name", "books"])
            try context.save()
            XCTAssertTrue(author.changedValuesForCurrentEvent().isEmpty, "[\(kind)] nothing unsaved")
        }
    }

    /// A merge posts `NSManagedObjectContextDidMergeChangesObjectIDs` with the merged IDs, and
    /// `reset()` posts the objects it forgot under `NSInvalidatedAllObjectsKey`.
    func testMergeAndResetNotifications() {
        forEachStore { kind, container in
            let context = container.viewContext
            let author = context.make("Author", ["name": "Ada"])
            try context.save()
            let other = container.newBackgroundContext()
            let saves = NotificationRecorder(name: .NSManagedObjectContextDidSave, object: other)
            let (authorID, newID) = try other.performAndWait { () throws -> (NSManagedObjectID, NSManagedObjectID) in
                other.object(with: author.objectID).setValue("Ada L.", forKey: "name")
                let added = other.make("Author", ["name": "Bea"])
                try other.save()
                return (author.objectID, added.objectID)
            }
            let merges = NotificationRecorder(name: .NSManagedObjectContextDidMergeChangesObjectIDs, object: context)
            context.mergeChanges(fromContextDidSave: try XCTUnwrap(saves.notifications.last))
            let merged = merges.notifications.last?.userInfo
            XCTAssertEqual(merged?[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID>, [newID], "[\(kind)]")
            XCTAssertEqual(merged?[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID>, [authorID], "[\(kind)]")
            XCTAssertEqual(merged?[NSRefreshedObjectIDsKey] as? Set<NSManagedObjectID>, [authorID], "[\(kind)]")

            context.processPendingChanges()
            // The merged insert is held here: a context that does not retain its objects lets
            // it go otherwise, and reset() reports only the objects the context still has.
            let added = context.object(with: newID)
            let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)
            context.reset()
            let invalidated = changes.notifications.last?.userInfo?[NSInvalidatedAllObjectsKey] as? [NSManagedObject]
            XCTAssertEqual(Set(invalidated?.map(\.objectID) ?? []), [authorID, newID], "[\(kind)]")
            withExtendedLifetime(added) {}
        }
    }
}

/// What `changedValuesForCurrentEvent()` of one object said in each change notification.
private final class EventValuesRecorder: @unchecked Sendable {
    private(set) var values: [[String: Any]] = []
    private var token: NSObjectProtocol?
    private let object: NSManagedObject

    init(_ object: NSManagedObject, _ context: NSManagedObjectContext) {
        self.object = object
        token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { [weak self] _ in
            guard let self else { return }
            self.values.append(self.object.changedValuesForCurrentEvent())
        }
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }
}
