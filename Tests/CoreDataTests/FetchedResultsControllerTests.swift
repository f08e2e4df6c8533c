import CoreData
import Foundation
import XCTest

/// `NSFetchedResultsController` on every store: results and sections after `performFetch()`,
/// and every kind of change reported to the delegate as Apple reports it (inserts, deletes,
/// updates, moves, objects leaving and entering the predicate, sections appearing and vanishing),
/// with the collection difference and the async results.
final class FetchedResultsControllerTests: XCTestCase {
    /// Records the delegate calls as text.
    final class Recorder: NSFetchedResultsControllerDelegate {
        var calls: [String] = []
        var differences: [CollectionDifference<NSManagedObjectID>] = []

        private func text(_ path: IndexPath?) -> String { path.map { "\($0.section).\($0.item)" } ?? "-" }
        private func title(_ object: Any) -> String {
            let managed = object as? NSManagedObject
            return (managed?.value(forKey: "title") as? String) ?? "?"
        }

        func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) { calls.append("will") }
        func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
            let kind = ["", "insert", "delete", "move", "update"][Int(type.rawValue)]
            calls.append("\(kind) \(title(anObject)) \(text(indexPath))→\(text(newIndexPath))")
        }
        func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange sectionInfo: NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType) {
            calls.append("section \(type == .insert ? "insert" : "delete") '\(sectionInfo.name)' \(sectionIndex)")
        }
        func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) { calls.append("did") }
        func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChangeContentWith difference: CollectionDifference<NSManagedObjectID>) {
            differences.append(difference)
        }
    }

    private func book(_ title: String, pages: Int32, in context: NSManagedObjectContext) -> NSManagedObject {
        let book = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
        book.setValue(title, forKey: "title")
        book.setValue(pages, forKey: "pages")
        return book
    }

    private func titles(_ controller: NSFetchedResultsController<NSManagedObject>) -> [String] {
        (controller.fetchedObjects ?? []).compactMap { $0.value(forKey: "title") as? String }
    }

    func testResultsSectionsAndChangesOnEveryStore() {
        forEachStore { kind, container in
            let context = container.viewContext
            try context.performAndWait {
                for (title, pages) in [("a", 100), ("b", 300), ("c", 100), ("d", 200)] { _ = book(title, pages: Int32(pages), in: context) }
                try context.save()
            }
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.predicate = NSPredicate(format: "pages < 1000")
            request.sortDescriptors = [NSSortDescriptor(key: "pages", ascending: true), NSSortDescriptor(key: "title", ascending: true)]
            let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "pages", cacheName: nil)
            let recorder = Recorder()
            controller.delegate = recorder
            try context.performAndWait {
                XCTAssertNil(controller.fetchedObjects, "\(kind): nothing before performFetch")
                try controller.performFetch()
                XCTAssertEqual(titles(controller), ["a", "c", "d", "b"], "\(kind)")
                XCTAssertEqual(controller.sections?.map(\.name), ["100", "200", "300"], "\(kind)")
                XCTAssertEqual(controller.sections?.map(\.numberOfObjects), [2, 1, 1], "\(kind)")
                XCTAssertEqual(controller.sectionIndexTitles, ["1", "2", "3"], "\(kind)")
                XCTAssertEqual(controller.object(at: IndexPath(item: 1, section: 0)).value(forKey: "title") as? String, "c", "\(kind)")
                let d = controller.object(at: IndexPath(item: 0, section: 1))
                XCTAssertEqual(controller.indexPath(forObject: d), IndexPath(item: 0, section: 1), "\(kind)")

                // An update that keeps the order.
                d.setValue(1.5, forKey: "price")
                context.processPendingChanges()
                XCTAssertEqual(recorder.calls, ["will", "update d 1.0→1.0", "did"], "\(kind)")

                // An insert into an existing section, and one that makes a section.
                recorder.calls = []
                _ = book("b2", pages: 100, in: context)
                _ = book("e", pages: 250, in: context)
                context.processPendingChanges()
                XCTAssertEqual(titles(controller), ["a", "b2", "c", "d", "e", "b"], "\(kind)")
                XCTAssertEqual(controller.sections?.map(\.name), ["100", "200", "250", "300"], "\(kind)")
                XCTAssertEqual(recorder.calls.first, "will", "\(kind)")
                XCTAssertEqual(recorder.calls.last, "did", "\(kind)")
                XCTAssertTrue(recorder.calls.contains("section insert '250' 2"), "\(kind): \(recorder.calls)")
                XCTAssertTrue(recorder.calls.contains("insert b2 -→0.1"), "\(kind): \(recorder.calls)")
                XCTAssertTrue(recorder.calls.contains("insert e -→2.0"), "\(kind): \(recorder.calls)")
                XCTAssertEqual(recorder.differences.last?.insertions.count, 2, "\(kind)")

                // A change of a sort value moves the object, and empties its old section.
                recorder.calls = []
                d.setValue(Int32(300), forKey: "pages")
                context.processPendingChanges()
                XCTAssertEqual(titles(controller), ["a", "b2", "c", "e", "b", "d"], "\(kind)")
                XCTAssertEqual(recorder.calls, ["will", "section delete '200' 1", "move d 1.0→2.1", "did"], "\(kind)")

                // Leaving the predicate is a delete; a deleted object too.
                recorder.calls = []
                let b = controller.object(at: IndexPath(item: 0, section: 2))
                b.setValue(Int32(5000), forKey: "pages")
                context.delete(controller.object(at: IndexPath(item: 0, section: 0)))
                context.processPendingChanges()
                XCTAssertEqual(titles(controller), ["b2", "c", "e", "d"], "\(kind)")
                XCTAssertTrue(recorder.calls.contains("delete b 2.0→-"), "\(kind): \(recorder.calls)")
                XCTAssertTrue(recorder.calls.contains("delete a 0.0→-"), "\(kind): \(recorder.calls)")
                XCTAssertEqual(recorder.differences.last?.removals.count, 2, "\(kind)")

                // Entering it again is an insert; saving changes nothing more.
                recorder.calls = []
                b.setValue(Int32(50), forKey: "pages")
                context.processPendingChanges()
                XCTAssertEqual(titles(controller), ["b", "b2", "c", "e", "d"], "\(kind)")
                XCTAssertEqual(recorder.calls, ["will", "section insert '50' 0", "insert b -→0.0", "did"], "\(kind)")
                try context.save()
                XCTAssertEqual(titles(controller), ["b", "b2", "c", "e", "d"], "\(kind)")
                for section in 0..<(controller.sections?.count ?? 0) {
                    for item in 0..<(controller.sections?[section].numberOfObjects ?? 0) {
                        let path = IndexPath(item: item, section: section)
                        XCTAssertEqual(controller.indexPath(forObject: controller.object(at: path)), path, "\(kind)")
                    }
                }
            }
        }
    }

    func testWithoutSectionsAndTheAsyncResults() async throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
        request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: false)]
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: "Books")
        try context.performAndWait { try controller.performFetch() }
        XCTAssertEqual(controller.sections?.count, 0, "no objects, no section")
        var iterator = controller.results.makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertEqual(first?.count, 0)
        context.performAndWait {
            _ = book("x", pages: 1, in: context)
            _ = book("y", pages: 2, in: context)
            context.processPendingChanges()
        }
        let next = await iterator.next()
        context.performAndWait {
            XCTAssertEqual(next?.compactMap { $0.value(forKey: "title") as? String }, ["y", "x"])
            XCTAssertEqual(controller.sections?.map(\.numberOfObjects), [2])
            XCTAssertEqual(controller.erased.fetchedObjects?.count, 2, "the delegate's view shares the results")
        }
    }

    /// Many single-object updates against many fetched objects: each is found by binary search
    /// and reported as an update, with no re-sort (a smoke test of the incremental path; its speed
    /// is the benchmark's to measure).
    func testManyUpdatesAreIncremental() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        final class Counter: NSFetchedResultsControllerDelegate {
            var updates = 0
            var moves = 0
            func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
                if type == .update { updates += 1 }
                if type == .move { moves += 1 }
            }
        }
        let counter = Counter()
        try context.performAndWait {
            for index in 0..<2_000 { _ = book(String(format: "t%05d", index), pages: Int32(index), in: context) }
            try context.save()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.sortDescriptors = [NSSortDescriptor(key: "pages", ascending: true)]
            let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            controller.delegate = counter
            try controller.performFetch()
            let objects = controller.fetchedObjects ?? []
            for (index, object) in objects.enumerated() where index % 2 == 0 {
                object.setValue(Double(index), forKey: "price")
                context.processPendingChanges()
            }
            objects[0].setValue(Int32(10_000), forKey: "pages")
            context.processPendingChanges()
            XCTAssertEqual(counter.updates, 1_000)
            XCTAssertEqual(counter.moves, 1)
            XCTAssertEqual(controller.fetchedObjects?.last, objects[0])
        }
    }

    /// Another context's saves reach the controller through merging, manual
    /// (`mergeChanges(fromContextDidSave:)`) or automatic: its inserts arrive as inserts, its
    /// updates as updates or moves, its deletes as deletes.
    func testOtherContextsSavesArriveThroughMerging() throws {
        for automatic in [false, true] {
            let container = try StoreKind.binary.makeContainer()
            let viewer = container.newBackgroundContext()
            viewer.automaticallyMergesChangesFromParent = automatic
            let writer = container.newBackgroundContext()
            let recorder = Recorder()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.sortDescriptors = [NSSortDescriptor(key: "pages", ascending: true)]
            let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: viewer, sectionNameKeyPath: nil, cacheName: nil)
            controller.delegate = recorder
            try viewer.performAndWait { try controller.performFetch() }

            let saved = NotificationRecorder(name: .NSManagedObjectContextDidSave, object: writer)
            func merge() throws {
                if automatic {
                    viewer.performAndWait {}  // the merge was queued on the viewer's queue
                } else {
                    let note = try XCTUnwrap(saved.notifications.last)
                    viewer.performAndWait { viewer.mergeChanges(fromContextDidSave: note) }
                }
            }
            try writer.performAndWait {
                _ = book("p", pages: 20, in: writer)
                _ = book("q", pages: 10, in: writer)
                try writer.save()
            }
            try merge()
            viewer.performAndWait {
                XCTAssertEqual(titles(controller), ["q", "p"], "automatic: \(automatic)")
                XCTAssertTrue(recorder.calls.contains("insert q -→0.0"), "automatic: \(automatic): \(recorder.calls)")
            }
            recorder.calls = []
            try writer.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
                request.predicate = NSPredicate(format: "title == 'q'")
                try writer.fetch(request).first?.setValue(Int32(30), forKey: "pages")
                try writer.save()
            }
            try merge()
            viewer.performAndWait {
                XCTAssertEqual(titles(controller), ["p", "q"], "automatic: \(automatic)")
                XCTAssertEqual(recorder.calls, ["will", "move q 0.0→0.1", "did"], "automatic: \(automatic)")
            }
        }
    }
}
