import CoreData
import Foundation
import XCTest

/// Child contexts: saves go into the parent, fetches and faults see the parent's unsaved state.
final class ParentChildContextTests: XCTestCase {
    func testChildSavePushesIntoTheParentAndTheParentSavesToTheStore() {
        forEachStore { kind, container in
            let parent = container.viewContext
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = parent
            XCTAssertTrue(child.persistentStoreCoordinator === container.persistentStoreCoordinator)

            let authorID = try child.performAndWait { () throws -> NSManagedObjectID in
                let author = child.make("Author", ["name": "Ada"])
                child.make("Book", ["title": "Notes", "author": author])
                try child.save()
                XCTAssertFalse(child.hasChanges)
                return author.objectID
            }
            XCTAssertTrue(parent.hasChanges, "[\(kind)] the child's save is the parent's unsaved change")
            let inParent = parent.object(with: authorID)
            XCTAssertEqual(inParent.value(forKey: "name") as? String, "Ada")
            XCTAssertEqual((inParent.value(forKey: "books") as? Set<NSManagedObject>)?.count, 1, "[\(kind)] relationships come along")
            XCTAssertEqual(try storedAuthors(container), 0, "[\(kind)] nothing in the store yet")
            try parent.save()
            XCTAssertEqual(try storedAuthors(container), 1, "[\(kind)] saved by the parent")
        }
    }

    func testChildSeesTheParentsUnsavedChanges() {
        forEachStore { kind, container in
            let parent = container.viewContext
            parent.make("Author", ["name": "Saved"])
            try parent.save()
            parent.make("Author", ["name": "Unsaved"])
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = parent
            try child.performAndWait {
                XCTAssertEqual(names(try child.all("Author", sortedBy: "name")), ["Saved", "Unsaved"], "[\(kind)]")
                let saved = try XCTUnwrap(try child.all("Author", where: "name == %@", "Saved").first)
                saved.setValue("Renamed", forKey: "name")
                XCTAssertEqual(names(try child.all("Author", sortedBy: "name")), ["Renamed", "Unsaved"], "[\(kind)] the child's own change on top")
                child.rollback()
            }
            XCTAssertEqual(names(try parent.all("Author", sortedBy: "name")), ["Saved", "Unsaved"], "[\(kind)] a rolled-back child leaves the parent alone")
        }
    }

    func testChildDeletePropagatesToTheParent() {
        forEachStore { kind, container in
            let parent = container.viewContext
            let author = parent.make("Author", ["name": "Gone"])
            try parent.save()
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = parent
            try child.performAndWait {
                child.delete(try child.existingObject(with: author.objectID))
                try child.save()
            }
            XCTAssertTrue(author.isDeleted, "[\(kind)]")
            try parent.save()
            XCTAssertEqual(try parent.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 0)
        }
    }
}

/// The number of authors in the store, seen by a fresh context.
private func storedAuthors(_ container: NSPersistentContainer) throws -> Int {
    let context = container.newBackgroundContext()
    return try context.performAndWait { try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")) }
}
