import CoreData
import Foundation
import XCTest

/// `mutableSetValue(forKey:)` and `mutableOrderedSetValue(forKey:)`: live collections whose
/// changes go through the relationship setter, as Apple's proxies do.
final class MutableRelationshipCollectionTests: XCTestCase {
    private func makeContext() throws -> NSManagedObjectContext {
        try StoreKind.inMemory.makeContainer().viewContext
    }

    func testMutableSetChangesKeepInversesAndChangeTracking() throws {
        let context = try makeContext()
        let ada = context.make("Author", ["name": "Ada"])
        let alan = context.make("Author", ["name": "Alan"])
        let notes = context.make("Book", ["title": "Notes"])
        let engines = context.make("Book", ["title": "Engines"])
        try context.save()
        let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)

        // Apple's idiom, unchanged.
        ada.mutableSetValue(forKey: "books").add(notes)
        XCTAssertTrue(notes.value(forKey: "author") as? NSManagedObject === ada, "the inverse to-one follows")
        XCTAssertNotNil(ada.changedValues()["books"], "the to-many side is changed")
        XCTAssertNotNil(notes.changedValues()["author"], "the inverse side is changed")
        XCTAssertEqual(context.updatedObjects, [ada, notes])
        XCTAssertTrue(changes.notifications.isEmpty, "changes are announced once per event, not one by one")
        context.processPendingChanges()
        XCTAssertEqual(changes.notifications.count, 1, "the context announced the changes in one notification")
        let announced = changes.notifications.first?.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject>
        XCTAssertEqual(announced, [ada, notes])

        let books = ada.mutableSetValue(forKey: "books")
        XCTAssertEqual(books.count, 1)
        XCTAssertTrue(books.contains(notes))
        XCTAssertFalse(books.contains(engines))
        books.addObjects(from: [engines])
        XCTAssertEqual(books.count, 2)
        XCTAssertTrue(engines.value(forKey: "author") as? NSManagedObject === ada)
        XCTAssertEqual(Set(books.allObjects.compactMap { $0 as? NSManagedObject }), [notes, engines])
        var seen: [NSManagedObject] = []
        for case let book as NSManagedObject in books { seen.append(book) }
        XCTAssertEqual(Set(seen), [notes, engines], "iteration")

        // Live: a change through the inverse shows at once.
        engines.setValue(alan, forKey: "author")
        XCTAssertEqual(books.count, 1, "the set reads the relationship as it is now")
        XCTAssertFalse(books.contains(engines))
        XCTAssertEqual(alan.mutableSetValue(forKey: "books").count, 1)

        books.remove(notes)
        XCTAssertNil(notes.value(forKey: "author"), "removing nullifies the inverse")
        XCTAssertEqual((ada.value(forKey: "books") as? Set<NSManagedObject>)?.count, 0)

        try context.save()
        context.reset()
        let reread = try XCTUnwrap(try context.all("Author", where: "name == %@", "Alan").first)
        XCTAssertEqual(names(Array(reread.mutableSetValue(forKey: "books").allObjects.compactMap { $0 as? NSManagedObject }), "title"), ["Engines"], "saved")
    }

    func testMutableSetBulkOperationsOnAManyToManyRelationship() throws {
        let context = try makeContext()
        let book = context.make("Book", ["title": "Notes"])
        let tags = ["a", "b", "c", "d"].map { context.make("Tag", ["label": $0]) }
        let set = book.mutableSetValue(forKey: "tags")
        set.union(Set(tags.prefix(3)))
        XCTAssertEqual(set.count, 3)
        XCTAssertEqual((tags[0].value(forKey: "books") as? Set<NSManagedObject>), [book], "many-to-many inverse")
        set.minus([tags[0]])
        XCTAssertEqual((tags[0].value(forKey: "books") as? Set<NSManagedObject>)?.count, 0)
        set.intersect([tags[1], tags[3]])
        XCTAssertEqual(Set(set.allObjects.compactMap { $0 as? NSManagedObject }), [tags[1]])
        set.setSet([tags[2], tags[3]])
        XCTAssertEqual(Set(set.allObjects.compactMap { $0 as? NSManagedObject }), [tags[2], tags[3]])
        XCTAssertEqual((tags[1].value(forKey: "books") as? Set<NSManagedObject>)?.count, 0)
        XCTAssertTrue(set.isEqual(Set([tags[2], tags[3]])))
        XCTAssertTrue(set.isEqual(NSSet(array: [tags[3], tags[2]])))
        XCTAssertEqual(NSSet(set: set.copy() as? NSSet ?? NSSet()).count, 2, "a copy is a plain set")

        // The proxy can be handed to the setter of another object, as Apple's can.
        let other = context.make("Book", ["title": "Other"])
        other.setValue(set, forKey: "tags")
        XCTAssertEqual((other.value(forKey: "tags") as? Set<NSManagedObject>)?.count, 2)
        XCTAssertEqual((tags[3].value(forKey: "books") as? Set<NSManagedObject>)?.count, 2)

        set.removeAllObjects()
        XCTAssertEqual(set.count, 0)
        XCTAssertEqual((tags[3].value(forKey: "books") as? Set<NSManagedObject>), [other])
        XCTAssertNotNil(book.changedValues()["tags"])
    }

    func testMutableOrderedSetEditsKeepOrderAndInverses() throws {
        let context = try makeContext()
        let book = context.make("Book", ["title": "Ordered"])
        let c = (1...5).map { context.make("Chapter", ["heading": "C\($0)"]) }
        func headings() -> [String] {
            ((book.value(forKey: "chapters") as? NSOrderedSet)?.array ?? []).compactMap { ($0 as? NSManagedObject)?.value(forKey: "heading") as? String }
        }
        let chapters = book.mutableOrderedSetValue(forKey: "chapters")
        chapters.add(c[0])
        chapters.add(c[1])
        chapters.insert(c[2], at: 0)
        XCTAssertEqual(headings(), ["C3", "C1", "C2"])
        XCTAssertTrue(c[2].value(forKey: "book") as? NSManagedObject === book, "the inverse follows")
        XCTAssertEqual(chapters.count, 3)
        XCTAssertTrue(chapters.object(at: 0) as? NSManagedObject === c[2])
        XCTAssertEqual(chapters.index(of: c[1]), 2)
        XCTAssertTrue(chapters.firstObject as? NSManagedObject === c[2])
        XCTAssertTrue(chapters.lastObject as? NSManagedObject === c[1])

        chapters.replaceObject(at: 1, with: c[3])
        XCTAssertEqual(headings(), ["C3", "C4", "C2"])
        XCTAssertNil(c[0].value(forKey: "book"), "the replaced chapter left the book")
        chapters.exchangeObject(at: 0, withObjectAt: 2)
        XCTAssertEqual(headings(), ["C2", "C4", "C3"])
        chapters.moveObjects(at: IndexSet(integer: 2), to: 0)
        XCTAssertEqual(headings(), ["C3", "C2", "C4"])
        chapters.removeObject(at: 1)
        XCTAssertEqual(headings(), ["C3", "C4"])
        XCTAssertNil(c[1].value(forKey: "book"))
        chapters.insert(c[3], at: 0)
        XCTAssertEqual(headings(), ["C3", "C4"], "an object already in the set is not added twice")

        // A change through the inverse shows in every read, including Foundation's own.
        c[4].setValue(book, forKey: "book")
        XCTAssertEqual(headings(), ["C3", "C4", "C5"])
        XCTAssertEqual(chapters.count, 3)
        XCTAssertTrue(chapters.lastObject as? NSManagedObject === c[4])
        XCTAssertEqual(chapters.array.count, 3)
        var iterated: [NSManagedObject] = []
        for case let chapter as NSManagedObject in chapters { iterated.append(chapter) }
        XCTAssertEqual(iterated, [c[2], c[3], c[4]])

        chapters.sort { lhs, rhs in
            let l = ((lhs as? NSManagedObject)?.value(forKey: "heading") as? String) ?? ""
            let r = ((rhs as? NSManagedObject)?.value(forKey: "heading") as? String) ?? ""
            return l > r ? .orderedAscending : (l < r ? .orderedDescending : .orderedSame)
        }
        XCTAssertEqual(headings(), ["C5", "C4", "C3"], "sorted through the setter")
        chapters.remove(c[3])
        XCTAssertEqual(headings(), ["C5", "C3"])

        // Chapter requires its book: the ones that left get a new one before the save.
        let spare = context.make("Book", ["title": "Spare"])
        spare.mutableOrderedSetValue(forKey: "chapters").addObjects(from: [c[0], c[1], c[3]])
        try context.save()
        context.reset()
        let reread = try XCTUnwrap(try context.all("Book", where: "title == %@", "Ordered").first)
        let saved = reread.mutableOrderedSetValue(forKey: "chapters")
        XCTAssertEqual(saved.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "heading") as? String }, ["C5", "C3"], "saved in order")
        XCTAssertEqual((try context.all("Book", where: "title == %@", "Spare").first?.value(forKey: "chapters") as? NSOrderedSet)?.count, 3)
    }

    func testMutableSetOnAnOrderedRelationshipAppends() throws {
        let context = try makeContext()
        let book = context.make("Book", ["title": "Ordered"])
        let first = context.make("Chapter", ["heading": "first"])
        let second = context.make("Chapter", ["heading": "second"])
        book.mutableOrderedSetValue(forKey: "chapters").add(first)
        book.mutableSetValue(forKey: "chapters").add(second)
        XCTAssertEqual((book.value(forKey: "chapters") as? NSOrderedSet)?.array.compactMap { $0 as? NSManagedObject }, [first, second])
    }

    func testKeyPathVariantsAndChildContexts() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        let ada = context.make("Author", ["name": "Ada"])
        let book = context.make("Book", ["title": "Notes", "author": ada])
        let other = context.make("Book", ["title": "Other"])
        book.mutableSetValue(forKeyPath: "author.books").add(other)
        XCTAssertTrue(other.value(forKey: "author") as? NSManagedObject === ada)
        try context.save()

        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = context
        try child.performAndWait {
            let author = try child.existingObject(with: ada.objectID)
            let extra = child.make("Book", ["title": "Extra"])
            author.mutableSetValue(forKey: "books").add(extra)
            XCTAssertEqual(author.mutableSetValue(forKey: "books").count, 3)
            try child.save()
        }
        XCTAssertEqual((ada.value(forKey: "books") as? Set<NSManagedObject>)?.count, 3, "the child's change reached the parent")
    }
}
