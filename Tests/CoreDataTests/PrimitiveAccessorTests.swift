import CoreData
import Foundation
import XCTest

/// `setPrimitiveValue(_:forKey:)` as Apple documents it, on every store kind: it stores the value
/// and invokes no change notification methods, so the object is not changed (no `hasChanges`,
/// nothing in `changedValues()`, no `NSManagedObjectContextObjectsDidChange`, no undo). A save
/// writes the value only with an object saved anyway (inserted, or changed otherwise); a save
/// after primitive changes alone writes nothing. `willChangeValue(forKey:)` and
/// `didChangeValue(forKey:)` around it make it a change, as Apple's custom accessors do.
final class PrimitiveAccessorTests: XCTestCase {
    /// The view context with an undo manager, and a saved author named Ada.
    private func savedAuthor(_ container: NSPersistentContainer) throws -> (NSManagedObjectContext, UndoManager, NSManagedObject) {
        let context = container.viewContext
        let manager = UndoManager()
        context.undoManager = manager
        let ada = context.make("Author", ["name": "Ada", "rating": Int16(3)])
        try context.save()
        context.processPendingChanges()
        manager.removeAllActions()
        return (context, manager, ada)
    }

    /// The saved values of `key` of every author, read by a new context.
    private func savedValues(_ container: NSPersistentContainer, _ key: String) throws -> [String] {
        let fresh = container.newBackgroundContext()
        return try fresh.performAndWait {
            try fresh.all("Author", sortedBy: "name").map { "\($0.value(forKey: key) ?? "nil")" }
        }
    }

    func testSetPrimitiveValueIsNoChange() {
        forEachStore { kind, container in
            let (context, manager, ada) = try savedAuthor(container)
            let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)

            ada.setPrimitiveValue("Ada L.", forKey: "name")
            ada.setPrimitiveValue(Int16(5), forKey: "rating")
            context.processPendingChanges()

            XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada L.", "[\(kind)] the value is stored")
            XCTAssertEqual(ada.primitiveValue(forKey: "rating") as? Int16, 5, "[\(kind)]")
            XCTAssertFalse(ada.hasChanges, "[\(kind)]")
            XCTAssertFalse(ada.isUpdated, "[\(kind)]")
            XCTAssertFalse(ada.hasPersistentChangedValues, "[\(kind)]")
            XCTAssertTrue(ada.changedValues().isEmpty, "[\(kind)] \(ada.changedValues())")
            XCTAssertTrue(ada.changedValuesForCurrentEvent().isEmpty, "[\(kind)]")
            XCTAssertFalse(context.hasChanges, "[\(kind)]")
            XCTAssertTrue(context.updatedObjects.isEmpty, "[\(kind)]")
            XCTAssertEqual(changes.notifications.count, 0, "[\(kind)] no change notification")
            XCTAssertFalse(manager.canUndo, "[\(kind)] no undo registration")
            XCTAssertEqual(ada.committedValues(forKeys: ["name"])["name"] as? String, "Ada", "[\(kind)]")

            try context.save()
            XCTAssertEqual(try savedValues(container, "name"), ["Ada"], "[\(kind)] a save after primitive changes alone saves nothing")
            XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada L.", "[\(kind)] the object keeps its value")
            context.refresh(ada, mergeChanges: false)
            XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada", "[\(kind)] refreshing drops it")
        }
    }

    func testAPrimitiveValueIsSavedWithTheObjectsOtherChanges() {
        forEachStore { kind, container in
            let (context, _, ada) = try savedAuthor(container)
            ada.setPrimitiveValue("Ada L.", forKey: "name")
            ada.setValue(Int16(4), forKey: "rating")
            XCTAssertTrue(ada.hasChanges, "[\(kind)]")
            XCTAssertEqual(Set(ada.changedValues().keys), ["rating"], "[\(kind)] only the tracked change is a changed value")
            try context.save()
            XCTAssertEqual(try savedValues(container, "name"), ["Ada L."], "[\(kind)] the object's values are saved, primitive ones too")
            XCTAssertEqual(try savedValues(container, "rating"), ["4"], "[\(kind)]")
            XCTAssertEqual(ada.committedValues(forKeys: ["name"])["name"] as? String, "Ada L.", "[\(kind)]")
        }
    }

    func testAPrimitiveValueOfAnInsertedObjectIsSaved() {
        forEachStore { kind, container in
            let context = container.viewContext
            let manager = UndoManager()
            context.undoManager = manager
            let grace = context.make("Author")
            grace.setPrimitiveValue("Grace", forKey: "name")
            XCTAssertTrue(grace.isInserted, "[\(kind)]")
            XCTAssertTrue(grace.changedValues().isEmpty, "[\(kind)]")
            try context.save()
            XCTAssertEqual(try savedValues(container, "name"), ["Grace"], "[\(kind)]")
        }
    }

    func testWillAndDidChangeValueMakeAPrimitiveSetAChange() {
        forEachStore { kind, container in
            let (context, manager, ada) = try savedAuthor(container)
            let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)

            ada.willChangeValue(forKey: "name")
            ada.setPrimitiveValue("Ada L.", forKey: "name")
            ada.didChangeValue(forKey: "name")
            context.processPendingChanges()

            XCTAssertTrue(ada.isUpdated, "[\(kind)]")
            XCTAssertEqual(ada.changedValues()["name"] as? String, "Ada L.", "[\(kind)]")
            XCTAssertEqual(changes.notifications.count, 1, "[\(kind)]")
            XCTAssertEqual(changes.notifications.first?.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject>, [ada], "[\(kind)]")
            XCTAssertTrue(manager.canUndo, "[\(kind)]")

            context.undo()
            XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada", "[\(kind)] undo puts back the value willChangeValue saw")
            context.redo()
            XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada L.", "[\(kind)]")
            try context.save()
            XCTAssertEqual(try savedValues(container, "name"), ["Ada L."], "[\(kind)]")

            ada.willChangeValue(forKey: "notAProperty")
            ada.didChangeValue(forKey: "notAProperty")
            XCTAssertFalse(ada.hasChanges, "[\(kind)] an unmodeled key is ignored")
        }
    }

    func testAPrimitiveRelationshipValueLeavesTheInverseAlone() {
        forEachStore { kind, container in
            let (context, _, ada) = try savedAuthor(container)
            let book = context.make("Book", ["title": "Notes"])
            try context.save()

            book.setPrimitiveValue(ada, forKey: "author")
            XCTAssertTrue(book.value(forKey: "author") as? NSManagedObject === ada, "[\(kind)]")
            XCTAssertEqual((ada.value(forKey: "books") as? Set<NSManagedObject>)?.count, 0, "[\(kind)] the inverse is the caller's to keep")
            XCTAssertFalse(book.hasChanges, "[\(kind)]")
            XCTAssertFalse(context.hasChanges, "[\(kind)]")
        }
    }

    func testRefreshMergingChangesKeepsTrackedChanges() {
        forEachStore { kind, container in
            let (context, _, ada) = try savedAuthor(container)
            ada.setValue(Int16(1), forKey: "rating")
            context.refresh(ada, mergeChanges: true)
            XCTAssertTrue(ada.hasChanges, "[\(kind)] changes put back over the re-read values are still changes")
            XCTAssertEqual(ada.changedValues()["rating"] as? Int16, 1, "[\(kind)]")
            try context.save()
            XCTAssertEqual(try savedValues(container, "rating"), ["1"], "[\(kind)]")
        }
    }
}
