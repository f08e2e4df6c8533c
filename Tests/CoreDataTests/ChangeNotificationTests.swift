import CoreData
import Foundation
import XCTest

/// `NSManagedObjectContextObjectsDidChange` is posted once per event with every change of the
/// event coalesced (Apple's `processPendingChanges()`), not once per change.
final class ChangeNotificationTests: XCTestCase {
    func testAPerformBlockAnnouncesItsChangesInOneNotification() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.newBackgroundContext()
        let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)
        let saved = context.performAndWait { () -> NSManagedObject in
            let ada = context.make("Author", ["name": "Ada"])
            try? context.save()
            return ada
        }
        XCTAssertEqual(changes.notifications.count, 1, "save() announces the insert before saving")
        XCTAssertEqual(changes.notifications.first?.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>, [saved])

        let done = expectation(description: "perform")
        nonisolated(unsafe) let author = saved
        context.perform {
            let alan = context.make("Author", ["name": "Alan"])
            let grace = context.make("Author", ["name": "Grace"])
            let ghost = context.make("Author", ["name": "Ghost"])
            context.delete(ghost)  // inserted and deleted in one event: nobody hears of it
            author.setValue("Ada L.", forKey: "name")
            alan.setValue("Alan T.", forKey: "name")  // an inserted object's change is part of its insert
            grace.setValue("Grace H.", forKey: "name")
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        context.performAndWait {}  // the perform block's processPendingChanges ran before this
        XCTAssertEqual(changes.notifications.count, 2, "one notification for the whole block")
        let info = changes.notifications.last?.userInfo ?? [:]
        let inserted = (info[NSInsertedObjectsKey] as? Set<NSManagedObject>) ?? []
        let names = context.performAndWait { Set(inserted.compactMap { $0.value(forKey: "name") as? String }) }
        XCTAssertEqual(names, ["Alan T.", "Grace H."])
        XCTAssertEqual(info[NSUpdatedObjectsKey] as? Set<NSManagedObject>, [author])
        XCTAssertNil(info[NSDeletedObjectsKey])
    }

    func testProcessPendingChangesAnnouncesAtOnceAndDeletesWinOverUpdates() throws {
        let context = try StoreKind.inMemory.makeContainer().viewContext
        let ada = context.make("Author", ["name": "Ada"])
        let alan = context.make("Author", ["name": "Alan"])
        try context.save()
        let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)
        ada.setValue("Ada L.", forKey: "name")
        context.delete(ada)
        alan.setValue("Alan T.", forKey: "name")
        XCTAssertEqual(changes.notifications.count, 0, "nothing is posted in the middle of an event")
        context.processPendingChanges()
        XCTAssertEqual(changes.notifications.count, 1)
        let info = changes.notifications.first?.userInfo ?? [:]
        XCTAssertEqual(info[NSDeletedObjectsKey] as? Set<NSManagedObject>, [ada])
        XCTAssertEqual(info[NSUpdatedObjectsKey] as? Set<NSManagedObject>, [alan])
        context.processPendingChanges()
        XCTAssertEqual(changes.notifications.count, 1, "nothing new, nothing posted")
    }

    /// An insert's event reports the object inserted only, with its sets as that event's
    /// changes; a set in a later event, before the save, reports it updated.
    func testAnInsertedObjectChangedInALaterEventIsAnnouncedUpdated() throws {
        let context = try StoreKind.inMemory.makeContainer().viewContext
        let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)
        let ada = context.make("Author", ["name": "Ada"])
        XCTAssertEqual(ada.changedValuesForCurrentEvent() as? [String: String], ["name": "Ada"])
        context.processPendingChanges()
        XCTAssertEqual(changes.notifications.count, 1)
        let first = changes.notifications.first?.userInfo ?? [:]
        XCTAssertEqual(first[NSInsertedObjectsKey] as? Set<NSManagedObject>, [ada])
        XCTAssertNil(first[NSUpdatedObjectsKey], "an inserted object's sets in its insert's event are part of the insert")

        ada.setValue("Ada L.", forKey: "name")
        XCTAssertEqual(ada.changedValuesForCurrentEvent() as? [String: String], ["name": "Ada L."])
        context.processPendingChanges()
        XCTAssertEqual(changes.notifications.count, 2)
        let second = changes.notifications.last?.userInfo ?? [:]
        XCTAssertEqual(second[NSUpdatedObjectsKey] as? Set<NSManagedObject>, [ada])
        XCTAssertNil(second[NSInsertedObjectsKey])
        XCTAssertEqual(context.insertedObjects, [ada])
        XCTAssertTrue(context.updatedObjects.isEmpty, "still an insert to the save")
    }

    /// Values set in `awakeFromInsert` are part of the insert: the object is reported inserted
    /// only, not also updated.
    func testValuesSetInAwakeFromInsertArePartOfTheInsert() throws {
        let context = try StoreKind.inMemory.makeContainer().viewContext
        AuthorObject.awakeFromInsertHook = { $0.setValue("Set on insert", forKey: "name") }
        defer { AuthorObject.awakeFromInsertHook = nil }
        let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)
        let author = context.make("Author")
        XCTAssertTrue(author is AuthorObject)
        XCTAssertEqual(author.value(forKey: "name") as? String, "Set on insert")
        XCTAssertEqual(author.changedValuesForCurrentEvent() as? [String: String], ["name": "Set on insert"])
        context.processPendingChanges()
        XCTAssertEqual(changes.notifications.count, 1)
        let info = changes.notifications.first?.userInfo ?? [:]
        XCTAssertEqual(info[NSInsertedObjectsKey] as? Set<NSManagedObject>, [author])
        XCTAssertNil(info[NSUpdatedObjectsKey], "a value set in awakeFromInsert is part of the insert")
        XCTAssertTrue(context.updatedObjects.isEmpty)
    }

    func testAMainQueueContextAnnouncesAtTheEndOfTheMainQueueEvent() throws {
        let context = try StoreKind.inMemory.makeContainer().viewContext
        let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)
        _ = context.make("Author", ["name": "Ada"])
        _ = context.make("Author", ["name": "Alan"])
        XCTAssertEqual(changes.notifications.count, 0)
        // Let the main queue run: the event is over.
        let drained = expectation(description: "main queue")
        DispatchQueue.main.async { drained.fulfill() }
        wait(for: [drained], timeout: 10)
        XCTAssertEqual(changes.notifications.count, 1)
        XCTAssertEqual((changes.notifications.first?.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>)?.count, 2)
    }
}
