import CoreData
import Foundation
import XCTest

/// An object inserted and deleted before any save leaves its context's changes: nothing is
/// saved for it, whatever is done to it afterwards, and delete rules that lead back to it (two
/// objects that cascade to each other) end. Run on every store.
final class UnsavedDeleteTests: XCTestCase {
    /// Note (name) and Pair (`other`, to-one, its own inverse, cascade both ways).
    private static let model: NSManagedObjectModel = {
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let note = NSEntityDescription()
        note.name = "Note"
        note.properties = [name]

        let label = NSAttributeDescription()
        label.name = "label"
        label.attributeType = .stringAttributeType
        let other = NSRelationshipDescription()
        other.name = "other"
        other.maxCount = 1
        other.deleteRule = .cascadeDeleteRule
        let pair = NSEntityDescription()
        pair.name = "Pair"
        pair.properties = [label, other]
        other.destinationEntity = pair
        other.inverseRelationship = other

        let model = NSManagedObjectModel()
        model.entities = [note, pair]
        return model
    }()

    private func forEachStore(_ body: (StoreKind, NSManagedObjectContext) throws -> Void) {
        _ = StoreKind.sharedModel  // registers the user-written store types
        for kind in StoreKind.allCases {
            do {
                try body(kind, try kind.makeContainer(model: Self.model).viewContext)
            } catch {
                XCTFail("[\(kind)] \(error)")
            }
        }
    }

    func testAnObjectChangedAfterItsUnsavedDeleteIsNotSaved() {
        forEachStore { kind, context in
            let kept = context.make("Note", ["name": "kept"])
            let gone = context.make("Note", ["name": "gone"])
            context.delete(gone)
            gone.setValue("changed after the delete", forKey: "name")
            XCTAssertFalse(context.updatedObjects.contains(gone), "[\(kind)]")
            XCTAssertFalse(context.insertedObjects.contains(gone), "[\(kind)]")
            XCTAssertFalse(context.deletedObjects.contains(gone), "[\(kind)]")
            context.delete(gone)
            XCTAssertTrue(context.deletedObjects.isEmpty, "[\(kind)] a second delete does nothing")

            let saves = NotificationRecorder(name: .NSManagedObjectContextDidSave, object: context)
            try context.save()
            let info = saves.notifications.first?.userInfo ?? [:]
            XCTAssertEqual(info[NSInsertedObjectsKey] as? Set<NSManagedObject>, [kept], "[\(kind)]")
            XCTAssertEqual((info[NSUpdatedObjectsKey] as? Set<NSManagedObject>)?.count, 0, "[\(kind)]")
            let names = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")).compactMap { $0.value(forKey: "name") as? String }
            XCTAssertEqual(names, ["kept"], "[\(kind)]")

            // Inserted again, it is an insert like any other.
            context.insert(gone)
            XCTAssertTrue(context.insertedObjects.contains(gone), "[\(kind)]")
            try context.save()
            let saved = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")).compactMap { $0.value(forKey: "name") as? String }
            XCTAssertEqual(Set(saved), ["kept", "changed after the delete"], "[\(kind)]")
        }
    }

    /// A saved object pointed at a discarded one saves without the reference: there is no row
    /// to point at.
    func testARelationshipToADiscardedObjectIsNotSaved() {
        forEachStore { kind, context in
            let anchor = context.make("Pair", ["label": "anchor"])
            try context.save()
            let loose = context.make("Pair", ["label": "loose"])
            context.delete(loose)
            anchor.setValue(loose, forKey: "other")
            try context.save()
            let fresh = context.persistentStoreCoordinator.map { coordinator -> NSManagedObjectContext in
                let fresh = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
                fresh.persistentStoreCoordinator = coordinator
                return fresh
            }
            let pairs = try fresh?.fetch(NSFetchRequest<NSManagedObject>(entityName: "Pair")) ?? []
            XCTAssertEqual(pairs.compactMap { $0.value(forKey: "label") as? String }, ["anchor"], "[\(kind)]")
            XCTAssertNil(pairs.first?.value(forKey: "other"), "[\(kind)]")
        }
    }

    /// Undo brings a discarded object back as an insert (its changes tracked again); redo
    /// discards it again.
    func testUndoAndRedoOfAnUnsavedDelete() {
        forEachStore { kind, context in
            context.undoManager = UndoManager()
            let note = context.make("Note", ["name": "draft"])
            context.processPendingChanges()
            context.delete(note)
            context.processPendingChanges()
            XCTAssertFalse(context.insertedObjects.contains(note), "[\(kind)]")

            context.undo()
            XCTAssertTrue(context.insertedObjects.contains(note), "[\(kind)] undo brings the insert back")
            context.redo()
            XCTAssertFalse(context.insertedObjects.contains(note), "[\(kind)] redo deletes it again")
            XCTAssertFalse(context.hasChanges, "[\(kind)]")
            try context.save()
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note")), 0, "[\(kind)]")

            context.undo()
            XCTAssertTrue(context.insertedObjects.contains(note), "[\(kind)]")
            note.setValue("edited", forKey: "name")
            try context.save()
            let names = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")).compactMap { $0.value(forKey: "name") as? String }
            XCTAssertEqual(names, ["edited"], "[\(kind)] brought back, its changes are saved")
        }
    }

    func testUnsavedObjectsThatCascadeToEachOtherAreDeletedOnce() {
        forEachStore { kind, context in
            let left = context.make("Pair", ["label": "left"])
            let right = context.make("Pair", ["label": "right"])
            left.setValue(right, forKey: "other")
            XCTAssertTrue(right.value(forKey: "other") as? NSManagedObject === left, "[\(kind)] the inverse is set")
            context.delete(left)
            XCTAssertTrue(context.insertedObjects.isEmpty, "[\(kind)] the cascade took the other one too")
            XCTAssertTrue(context.deletedObjects.isEmpty, "[\(kind)]")
            XCTAssertFalse(context.hasChanges, "[\(kind)]")
            try context.save()
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Pair")), 0, "[\(kind)]")
        }
    }
}
