import CoreData
import Foundation
import Observation
import XCTest

/// Observing managed objects on Linux (issue 20): key-value observers, block observations and
/// the Observation framework hear of every change Apple's key-value observing reports, on every
/// store kind.
final class ManagedObjectObservationTests: XCTestCase {
    /// What one observer heard, in order.
    private final class Recorder: NSObject, NSKeyValueObserving {
        struct Heard {
            var keyPath: String?
            var object: AnyObject?
            var change: [NSKeyValueChangeKey: Any]
            var context: UnsafeMutableRawPointer?

            var new: Any? { change[.newKey] }
            var old: Any? { change[.oldKey] }
            var isPrior: Bool { (change[.notificationIsPriorKey] as? Bool) ?? false }
            var kind: UInt? { (change[.kindKey] as? NSNumber)?.uintValue }
        }

        var heard: [Heard] = []

        func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
            heard.append(Heard(keyPath: keyPath, object: object as AnyObject?, change: change ?? [:], context: context))
        }

        /// The new values heard after changes (not prior notifications).
        var newValues: [Any?] { heard.filter { !$0.isPrior }.map { $0.new is NSNull ? nil : $0.new } }
    }

    private func titles(_ value: Any?) -> Set<String> {
        Set(((value as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "title") as? String })
    }

    // MARK: Key-value observers

    func testObserverHearsSettersWithOldNewPriorAndInitialValues() {
        forEachStore { kind, container in
            let context = container.viewContext
            let book = context.make("Book", ["title": "Draft"])
            let recorder = Recorder()
            var token = 7
            withUnsafeMutablePointer(to: &token) { pointer in
                book.addObserver(recorder, forKeyPath: "title", options: [.new, .old, .prior, .initial], context: pointer)
                XCTAssertEqual(recorder.heard.count, 1, "[\(kind)] .initial notifies at once")
                XCTAssertEqual(recorder.heard.first?.new as? String, "Draft", "[\(kind)]")
                XCTAssertNil(recorder.heard.first?.old, "[\(kind)] an initial notification has no old value")

                book.setValue("Final", forKey: "title")
                XCTAssertEqual(recorder.heard.count, 3, "[\(kind)] one prior and one after notification")
                let prior = recorder.heard[1], after = recorder.heard[2]
                XCTAssertTrue(prior.isPrior, "[\(kind)]")
                XCTAssertEqual(prior.old as? String, "Draft", "[\(kind)]")
                XCTAssertNil(prior.new, "[\(kind)] a prior notification has no new value")
                XCTAssertFalse(after.isPrior, "[\(kind)]")
                XCTAssertEqual(after.old as? String, "Draft", "[\(kind)]")
                XCTAssertEqual(after.new as? String, "Final", "[\(kind)]")
                XCTAssertEqual(after.kind, NSKeyValueChange.setting.rawValue, "[\(kind)]")
                XCTAssertEqual(after.keyPath, "title", "[\(kind)]")
                XCTAssertTrue(after.object === book, "[\(kind)]")
                XCTAssertEqual(after.context, UnsafeMutableRawPointer(pointer), "[\(kind)] the registration's context comes back")

                (book as? BookObject)?.title = "Typed"
                XCTAssertEqual(recorder.newValues.last as? String, "Typed", "[\(kind)] a typed @Managed setter notifies")
                book.setValue(nil, forKey: "isbn")
                XCTAssertEqual(recorder.heard.count, 5, "[\(kind)] another key's change is not heard")

                book.removeObserver(recorder, forKeyPath: "title", context: pointer)
            }
            book.setValue("After", forKey: "title")
            XCTAssertEqual(recorder.heard.count, 5, "[\(kind)] a removed observer hears nothing")
        }
    }

    func testNilValuesArriveAsNSNullAndOptionsLimitTheDictionary() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let book = container.viewContext.make("Book", ["title": "T", "isbn": "123-1234567890"])
        let onlyNew = Recorder(), nothing = Recorder()
        book.addObserver(onlyNew, forKeyPath: "isbn", options: .new, context: nil)
        book.addObserver(nothing, forKeyPath: "isbn", options: [], context: nil)
        book.setValue(nil, forKey: "isbn")
        XCTAssertTrue(onlyNew.heard.first?.new is NSNull, "nil arrives as NSNull, as on Apple platforms")
        XCTAssertNil(onlyNew.heard.first?.old, "no old value without .old")
        XCTAssertEqual(nothing.heard.count, 1)
        XCTAssertEqual(nothing.heard.first?.change.count, 1, "without options only the kind")
        book.removeObserver(onlyNew, forKeyPath: "isbn")
        book.removeObserver(nothing, forKeyPath: "isbn")
    }

    func testRelationshipChangesAndInverseMaintenanceNotifyBothSides() {
        forEachStore { kind, container in
            let context = container.viewContext
            let ada = context.make("Author", ["name": "Ada"])
            let grace = context.make("Author", ["name": "Grace"])
            let book = context.make("Book", ["title": "Notes"])
            let adaBooks = Recorder(), graceBooks = Recorder(), bookAuthor = Recorder()
            ada.addObserver(adaBooks, forKeyPath: "books", options: [.new, .old], context: nil)
            grace.addObserver(graceBooks, forKeyPath: "books", options: [.new], context: nil)
            book.addObserver(bookAuthor, forKeyPath: "author", options: [.new, .old], context: nil)

            book.setValue(ada, forKey: "author")
            XCTAssertTrue(bookAuthor.newValues.last as? NSManagedObject === ada, "[\(kind)]")
            XCTAssertEqual(bookAuthor.heard.last?.kind, NSKeyValueChange.setting.rawValue, "[\(kind)]")
            XCTAssertEqual(adaBooks.heard.last?.kind, NSKeyValueChange.insertion.rawValue, "[\(kind)] the inverse side reports the book inserted")
            XCTAssertEqual(titles(adaBooks.heard.last?.new), ["Notes"], "[\(kind)] the inserted objects, as an NSSet")
            XCTAssertTrue(adaBooks.heard.last?.new is NSSet, "[\(kind)]")
            XCTAssertNil(adaBooks.heard.last?.old, "[\(kind)] an insertion has no old value")

            grace.mutableSetValue(forKey: "books").add(book)
            XCTAssertTrue(bookAuthor.newValues.last as? NSManagedObject === grace, "[\(kind)] a mutable-set proxy's change notifies the inverse")
            XCTAssertEqual(adaBooks.heard.last?.kind, NSKeyValueChange.removal.rawValue, "[\(kind)] the previous owner loses the book")
            XCTAssertEqual(titles(adaBooks.heard.last?.old), ["Notes"], "[\(kind)] the removed objects")
            XCTAssertEqual(graceBooks.heard.last?.kind, NSKeyValueChange.insertion.rawValue, "[\(kind)] a proxy's add is an insertion")
            XCTAssertEqual(titles(graceBooks.heard.last?.new), ["Notes"], "[\(kind)]")

            grace.setValue(Set<NSManagedObject>(), forKey: "books")
            XCTAssertEqual(graceBooks.heard.last?.kind, NSKeyValueChange.setting.rawValue, "[\(kind)] setValue is a setting, as on Apple platforms")
            XCTAssertEqual(titles(graceBooks.heard.last?.new), [], "[\(kind)] the whole new value")

            ada.removeObserver(adaBooks, forKeyPath: "books")
            grace.removeObserver(graceBooks, forKeyPath: "books")
            book.removeObserver(bookAuthor, forKeyPath: "author")
        }
    }

    func testOrderedRelationshipMutationsReportIndexes() {
        forEachStore { kind, container in
            let context = container.viewContext
            let book = context.make("Book", ["title": "Notes"])
            let one = context.make("Chapter", ["heading": "One", "book": book])
            let recorder = Recorder()
            book.addObserver(recorder, forKeyPath: "chapters", options: [.new, .old, .prior], context: nil)
            defer { book.removeObserver(recorder, forKeyPath: "chapters") }

            let two = context.make("Chapter", ["heading": "Two"])
            two.setValue(book, forKey: "book")
            let inserted = recorder.heard.filter { !$0.isPrior }.last
            XCTAssertEqual(inserted?.kind, NSKeyValueChange.insertion.rawValue, "[\(kind)]")
            XCTAssertEqual(inserted?.change[.indexesKey] as? IndexSet, IndexSet(integer: 1), "[\(kind)] appended at index 1")
            XCTAssertTrue((inserted?.new as? [NSManagedObject])?.first === two, "[\(kind)] the inserted objects, as an array")
            XCTAssertEqual(recorder.heard.filter(\.isPrior).last?.change[.indexesKey] as? IndexSet, nil, "[\(kind)] an insertion's prior notification has no indexes yet")

            book.mutableOrderedSetValue(forKey: "chapters").removeObject(at: 0)
            let removed = recorder.heard.filter { !$0.isPrior }.last
            let prior = recorder.heard.filter(\.isPrior).last
            XCTAssertEqual(removed?.kind, NSKeyValueChange.removal.rawValue, "[\(kind)]")
            XCTAssertEqual(removed?.change[.indexesKey] as? IndexSet, IndexSet(integer: 0), "[\(kind)]")
            XCTAssertEqual(prior?.change[.indexesKey] as? IndexSet, IndexSet(integer: 0), "[\(kind)] a removal's prior notification has its indexes")
            XCTAssertTrue((removed?.old as? [NSManagedObject])?.first === one, "[\(kind)]")
        }
    }

    func testUndoRedoRollbackRefreshAndMergeNotify() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.undoManager = UndoManager()
            let author = context.make("Author", ["name": "Ada"])
            try context.save()
            let recorder = Recorder()
            author.addObserver(recorder, forKeyPath: "name", options: [.new, .old], context: nil)
            defer { author.removeObserver(recorder, forKeyPath: "name") }

            author.setValue("Ada L.", forKey: "name")
            context.processPendingChanges()
            context.undo()
            XCTAssertEqual(recorder.newValues.last as? String, "Ada", "[\(kind)] undo notifies")
            context.redo()
            XCTAssertEqual(recorder.newValues.last as? String, "Ada L.", "[\(kind)] redo notifies")

            context.rollback()
            XCTAssertEqual(recorder.newValues.last as? String, "Ada", "[\(kind)] rollback notifies")
            XCTAssertEqual(recorder.heard.last?.old as? String, "Ada L.", "[\(kind)]")

            // Another context saves; merging its save notifies this context's observer.
            let background = container.newBackgroundContext()
            let saved = NotificationRecorder(name: .NSManagedObjectContextDidSave, object: background)
            try background.performAndWait {
                let other = try background.existingObject(with: author.objectID)
                other.setValue("Countess", forKey: "name")
                try background.save()
            }
            let before = recorder.heard.count
            for notification in saved.notifications { context.mergeChanges(fromContextDidSave: notification) }
            XCTAssertGreaterThan(recorder.heard.count, before, "[\(kind)] a merge notifies")
            XCTAssertEqual(recorder.newValues.last as? String, "Countess", "[\(kind)] the merged value")

            let count = recorder.heard.count
            context.refresh(author, mergeChanges: false)
            XCTAssertEqual(recorder.heard.count, count + 1, "[\(kind)] turning into a fault notifies, as on Apple platforms")
            XCTAssertEqual(recorder.newValues.last as? String, "Countess", "[\(kind)]")
        }
    }

    func testAManagedObjectObservesAnotherByOverriding() throws {
        final class Watcher: NSManagedObject {
            var heard: [String] = []
            override func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
                heard.append((change?[.newKey] as? String) ?? "?")
            }
        }
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        let book = context.make("Book", ["title": "A"])
        guard let entity = NSEntityDescription.entity(forEntityName: "Tag", in: context) else { return XCTFail("no Tag") }
        let watcher = Watcher(entity: entity, insertInto: context)
        book.addObserver(watcher, forKeyPath: "title", options: .new, context: nil)
        book.setValue("B", forKey: "title")
        XCTAssertEqual(watcher.heard, ["B"])
        book.removeObserver(watcher, forKeyPath: "title")
    }

    // MARK: Block observations

    func testBlockObservationOfATypedPropertyUntilInvalidated() {
        forEachStore { kind, container in
            let context = container.viewContext
            guard let book = context.make("Book", ["title": "One"]) as? BookObject,
                  let author = context.make("Author", ["name": "Ada"]) as? AuthorObject
            else { return XCTFail("[\(kind)] typed subclasses") }
            var titles: [(String?, String?)] = []
            let observation = book.observe(\.title, options: [.old, .new]) { object, change in
                XCTAssertTrue(object === book)
                titles.append((change.oldValue, change.newValue))
            }
            var books: [Int] = []
            let booksObservation = author.observe(\.books, options: [.initial, .new]) { _, change in
                books.append(change.newValue?.count ?? -1)
            }
            book.title = "Two"
            book.setValue("Three", forKey: "title")
            book.author = author
            XCTAssertEqual(titles.map(\.0), ["One", "Two"], "[\(kind)]")
            XCTAssertEqual(titles.map(\.1), ["Two", "Three"], "[\(kind)]")
            XCTAssertEqual(books, [0, 1], "[\(kind)] initial, then the inverse side's typed Set<BookObject>")

            observation.invalidate()
            book.title = "Four"
            XCTAssertEqual(titles.count, 2, "[\(kind)] an invalidated observation hears nothing")
            booksObservation.invalidate()
        }
    }

    func testReleasingTheObservationEndsIt() throws {
        let container = try StoreKind.inMemory.makeContainer()
        guard let book = container.viewContext.make("Book", ["title": "One"]) as? BookObject else { return XCTFail("typed") }
        var heard = 0
        var observation: NSKeyValueObservation? = book.observe(\.pages) { _, _ in heard += 1 }
        book.pages = 10
        XCTAssertNotNil(observation)
        observation = nil
        book.pages = 20
        XCTAssertEqual(heard, 1)
    }

    // MARK: Observation framework

    func testObservationTrackingFiresOnChangeMergeAndUndo() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.tracksObservationAccess = true
            context.undoManager = UndoManager()
            guard let book = context.make("Book", ["title": "One", "pages": Int32(3)]) as? BookObject else { return XCTFail("typed") }
            try context.save()

            final class Flag: @unchecked Sendable { var fired = 0 }
            func track(_ read: () -> Void) -> Flag {
                let flag = Flag()
                withObservationTracking(read) { flag.fired += 1 }
                return flag
            }

            let title = track { _ = book.title }
            book.pages = 4
            XCTAssertEqual(title.fired, 0, "[\(kind)] a key not read does not fire")
            book.title = "Two"
            XCTAssertEqual(title.fired, 1, "[\(kind)] the key read fires")

            let undo = track { _ = book.value(forKey: "title") }
            context.processPendingChanges()
            context.undo()
            XCTAssertEqual(undo.fired, 1, "[\(kind)] undo fires")
            try context.save()

            let merged = track { _ = book.title }
            let background = container.newBackgroundContext()
            let saved = NotificationRecorder(name: .NSManagedObjectContextDidSave, object: background)
            try background.performAndWait {
                try background.existingObject(with: book.objectID).setValue("Merged", forKey: "title")
                try background.save()
            }
            for notification in saved.notifications { context.mergeChanges(fromContextDidSave: notification) }
            XCTAssertEqual(merged.fired, 1, "[\(kind)] a merge fires")
            XCTAssertEqual(book.title, "Merged", "[\(kind)]")

            let accessor = track { book.willAccessValue(forKey: "isbn") }
            book.isbn = "123-1234567890"
            XCTAssertEqual(accessor.fired, 1, "[\(kind)] willAccessValue(forKey:) registers the read")
        }
    }

    func testObservationTrackingIsOffByDefault() throws {
        let container = try StoreKind.inMemory.makeContainer()
        guard let book = container.viewContext.make("Book", ["title": "One"]) as? BookObject else { return XCTFail("typed") }
        XCTAssertFalse(container.viewContext.tracksObservationAccess)
        final class Flag: @unchecked Sendable { var fired = false }
        let flag = Flag()
        withObservationTracking { _ = book.title } onChange: { flag.fired = true }
        book.title = "Two"
        XCTAssertFalse(flag.fired, "reads are not tracked unless the context asks for it")
    }

    // MARK: Access

    func testWillAccessValueFiresTheFault() {
        forEachStore { kind, container in
            let context = container.viewContext
            let author = context.make("Author", ["name": "Ada"])
            try context.save()
            context.refresh(author, mergeChanges: false)
            XCTAssertTrue(author.isFault, "[\(kind)]")
            author.willAccessValue(forKey: nil)
            XCTAssertFalse(author.isFault, "[\(kind)] willAccessValue(forKey: nil) fires the fault, as Apple documents")
            XCTAssertEqual(author.primitiveValue(forKey: "name") as? String, "Ada", "[\(kind)]")
        }
    }
}
