import CoreData
import Foundation
import XCTest

/// Batch requests run in the store; contexts see them after merging. Run against every store.
final class BatchAndMergeTests: XCTestCase {
    func testBatchDeleteByFetchRequestAndMergeIntoAContext() {
        forEachStore { kind, container in
            let context = container.viewContext
            for index in 0..<10 { context.make("Author", ["name": "A\(index)", "rating": Int16(index % 3)]) }
            try context.save()
            let before = try context.all("Author")
            XCTAssertEqual(before.count, 10)

            let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Author")
            fetch.predicate = NSPredicate(format: "rating == 0")
            let delete = NSBatchDeleteRequest(fetchRequest: fetch)
            delete.resultType = .resultTypeObjectIDs
            let result = try context.execute(delete) as? NSBatchDeleteResult
            let deleted = try XCTUnwrap(result?.result as? [NSManagedObjectID])
            XCTAssertEqual(deleted.count, 4, "[\(kind)] ratings 0 are A0, A3, A6, A9")

            XCTAssertEqual(context.registeredObjects.count, 10, "[\(kind)] the context does not see the delete yet")
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: deleted], into: [context])
            XCTAssertEqual(context.registeredObjects.count, 6, "[\(kind)] after merging")
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 6)
        }
    }

    /// A batch delete runs no delete rule, but the deleted objects leave the to-many
    /// relationships that held them, as in Apple's SQLite store, where a to-many relationship is
    /// its destinations' foreign keys.
    func testBatchDeletedObjectsLeaveToManyRelationships() {
        forEachStore { kind, container in
            let context = container.viewContext
            let ada = context.make("Author", ["name": "Ada"])
            for title in ["Notes", "Engines", "Letters"] { context.make("Book", ["title": title, "author": ada]) }
            try context.save()
            let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Book")
            fetch.predicate = NSPredicate(format: "title != %@", "Notes")
            let delete = NSBatchDeleteRequest(fetchRequest: fetch)
            delete.resultType = .resultTypeCount
            XCTAssertEqual((try context.execute(delete) as? NSBatchDeleteResult)?.result as? Int, 2, "[\(kind)]")

            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let author = try XCTUnwrap(try reader.all("Author").first)
                let books = try XCTUnwrap(author.value(forKey: "books") as? Set<NSManagedObject>)
                XCTAssertEqual(try reader.all("Book").map { "\($0.value(forKey: "title") ?? "nil")" }.sorted(), ["Notes"], "[\(kind)]")
                XCTAssertEqual(books.count, 1, "[\(kind)]")
                XCTAssertEqual(books.compactMap { $0.value(forKey: "title") as? String }, ["Notes"], "[\(kind)]")
                XCTAssertEqual(author.objectIDs(forRelationshipNamed: "books").count, 1, "[\(kind)]")
            }
            // A to-one relationship that named a deleted object becomes nil.
            _ = try context.execute(NSBatchDeleteRequest(objectIDs: [ada.objectID]))
            let second = container.newBackgroundContext()
            try second.performAndWait {
                let books = try second.all("Book")
                XCTAssertEqual(books.count, 1, "[\(kind)]")
                XCTAssertNil(books.first?.value(forKey: "author"), "[\(kind)]")
                XCTAssertEqual(books.first?.objectIDs(forRelationshipNamed: "author"), [], "[\(kind)]")
            }
        }
    }

    func testBatchDeleteAllObjectsOfAnEntity() {
        // The "clear storage" helper apps write with NSBatchDeleteRequest.
        forEachStore { kind, container in
            let context = container.viewContext
            for index in 0..<5 { context.make("Tag", ["label": "t\(index)"]) }
            try context.save()
            let request = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Tag"))
            request.resultType = .resultTypeCount
            let result = try context.execute(request) as? NSBatchDeleteResult
            XCTAssertEqual(result?.result as? Int, 5, "[\(kind)]")
            context.reset()
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Tag")), 0)
        }
    }

    func testBatchUpdateAndBatchInsert() {
        forEachStore { kind, container in
            let context = container.viewContext
            let insert = NSBatchInsertRequest(entityName: "Author", objects: (0..<20).map { ["name": "Author \($0)", "rating": Int16($0 % 5)] })
            insert.resultType = .count
            XCTAssertEqual((try context.execute(insert) as? NSBatchInsertResult)?.result as? Int, 20, "[\(kind)]")

            let update = NSBatchUpdateRequest(entityName: "Author")
            update.predicate = NSPredicate(format: "rating >= 3")
            update.propertiesToUpdate = ["rating": NSExpression(forConstantValue: Int16(5))]
            update.resultType = .updatedObjectsCountResultType
            XCTAssertEqual((try context.execute(update) as? NSBatchUpdateResult)?.result as? Int, 8, "[\(kind)] ratings 3 and 4")
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 20)
            XCTAssertEqual(try context.all("Author", where: "rating == 5").count, 8)

            let bad = NSBatchInsertRequest(entityName: "Author", objects: [["rating": Int16(1)]])
            XCTAssertThrowsError(try context.execute(bad)) { error in
                XCTAssertEqual((error as NSError).code, NSValidationMissingMandatoryPropertyError, "[\(kind)] name is required")
            }
        }
    }

    func testMergeChangesFromContextDidSave() {
        forEachStore { kind, container in
            let viewContext = container.viewContext
            viewContext.make("Author", ["name": "Ada", "rating": Int16(1)])
            try viewContext.save()
            let shown = try XCTUnwrap(try viewContext.all("Author").first)
            XCTAssertEqual(shown.value(forKey: "rating") as? Int16, 1)

            let background = container.newBackgroundContext()
            let recorder = NotificationRecorder(name: .NSManagedObjectContextDidSave, object: background)
            try background.performAndWait {
                let author = try XCTUnwrap(try background.all("Author").first)
                author.setValue(Int16(4), forKey: "rating")
                try background.save()
            }
            XCTAssertEqual(shown.value(forKey: "rating") as? Int16, 1, "[\(kind)] not merged yet")
            viewContext.mergeChanges(fromContextDidSave: try XCTUnwrap(recorder.notifications.last))
            XCTAssertEqual(shown.value(forKey: "rating") as? Int16, 4, "[\(kind)] merged")
        }
    }

    func testAutomaticMergingFromOtherContextsOfTheCoordinator() {
        forEachStore { kind, container in
            let reader = container.newBackgroundContext()
            reader.automaticallyMergesChangesFromParent = true
            let writer = container.newBackgroundContext()
            let id = try writer.performAndWait { () throws -> NSManagedObjectID in
                let author = writer.make("Author", ["name": "Ada", "rating": Int16(1)])
                try writer.save()
                return author.objectID
            }
            let object = try reader.performAndWait { try reader.existingObject(with: id) }
            try writer.performAndWait {
                try writer.existingObject(with: id).setValue(Int16(2), forKey: "rating")
                try writer.save()
            }
            // The merge is queued on the reader's queue after the save; this block runs after it.
            let rating = reader.performAndWait { object.value(forKey: "rating") as? Int16 }
            XCTAssertEqual(rating, 2, "[\(kind)]")
        }
    }
}
