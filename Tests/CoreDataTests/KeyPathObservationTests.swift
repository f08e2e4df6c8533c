@testable import CoreData
import Foundation
import XCTest

/// Observing dotted key paths of managed objects (issue 20): `"author.name"` on a book follows
/// the book's author, `"books.title"` on an author its books, `"address.city"` is one composite
/// element's slot; every source of change single-key observers hear of reaches path observers,
/// and removing the observer takes it off every object along the path.
final class KeyPathObservationTests: XCTestCase {
    /// What one observer heard, in order.
    private final class Recorder: NSObject, NSKeyValueObserving {
        struct Heard {
            var keyPath: String?
            var object: AnyObject?
            var change: [NSKeyValueChangeKey: Any]
            var context: UnsafeMutableRawPointer?

            var new: Any? { change[.newKey] }
            var old: Any? { change[.oldKey] }
            var isPrior: Bool { (change[.notificationIsPriorKey] as? NSNumber)?.boolValue ?? false }
            var kind: UInt? { (change[.kindKey] as? NSNumber)?.uintValue }
        }

        var heard: [Heard] = []

        func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
            heard.append(Heard(keyPath: keyPath, object: object as AnyObject?, change: change ?? [:], context: context))
        }

        /// The notifications after changes (not prior ones).
        var after: [Heard] { heard.filter { !$0.isPrior } }
        /// The new values heard after changes, `nil` for `NSNull`.
        var newValues: [Any?] { after.map { $0.new is NSNull ? nil : $0.new } }
    }

    private func strings(_ value: Any?) -> Set<String> {
        Set(((value as? NSSet)?.allObjects ?? []).compactMap { $0 as? String })
    }

    // MARK: To-one paths

    func testPathFollowsTheRelationshipAndItsDestination() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        let ada = context.make("Author", ["name": "Ada"])
        let grace = context.make("Author", ["name": "Grace"])
        let book = context.make("Book", ["title": "Notes", "author": ada])
        let recorder = Recorder()
        var token = 3
        try withUnsafeMutablePointer(to: &token) { pointer in
            book.addObserver(recorder, forKeyPath: "author.name", options: [.old, .new, .initial, .prior], context: pointer)
            try require(recorder.heard, count: 1, ".initial notifies at once")
            XCTAssertEqual(recorder.heard[0].new as? String, "Ada")
            XCTAssertNil(recorder.heard[0].old, "an initial notification has no old value")

            ada.setValue("Ada L.", forKey: "name")
            try require(recorder.heard, count: 3, "a prior and an after notification for the author's name")
            let prior = recorder.heard[1], change = recorder.heard[2]
            XCTAssertTrue(prior.isPrior)
            XCTAssertEqual(prior.old as? String, "Ada")
            XCTAssertNil(prior.new, "a prior notification has no new value")
            XCTAssertEqual(change.old as? String, "Ada")
            XCTAssertEqual(change.new as? String, "Ada L.")
            XCTAssertEqual(change.kind, NSKeyValueChange.setting.rawValue)
            XCTAssertEqual(change.keyPath, "author.name", "the notification names the whole key path")
            XCTAssertTrue(change.object === book, "and the observed object, not the author")
            XCTAssertEqual(change.context, UnsafeMutableRawPointer(pointer))

            book.setValue(grace, forKey: "author")
            XCTAssertEqual(recorder.after.last?.old as? String, "Ada L.", "replacing the author changes the value at the path")
            XCTAssertEqual(recorder.after.last?.new as? String, "Grace")
            let count = recorder.heard.count
            ada.setValue("Ada K.", forKey: "name")
            XCTAssertEqual(recorder.heard.count, count, "the former author's name is no longer observed")
            XCTAssertNil(ada.observation, "nor is anything left on the former author")
            grace.setValue("Grace H.", forKey: "name")
            XCTAssertEqual(recorder.newValues.last as? String, "Grace H.", "the new author's name is")

            // Inverse maintenance: the author gives the book away from the other side.
            ada.mutableSetValue(forKey: "books").add(book)
            XCTAssertEqual(recorder.newValues.last as? String, "Ada K.", "a change from the inverse side")

            book.setValue(nil, forKey: "author")
            XCTAssertEqual(recorder.after.last?.old as? String, "Ada K.")
            XCTAssertTrue(recorder.after.last?.new is NSNull, "no author: NSNull, as on Apple platforms")
            let before = recorder.heard.count
            ada.setValue("Nobody's", forKey: "name")
            XCTAssertEqual(recorder.heard.count, before)

            book.removeObserver(recorder, forKeyPath: "author.name", context: pointer)
        }
        let total = recorder.heard.count
        book.setValue(grace, forKey: "author")
        grace.setValue("Later", forKey: "name")
        XCTAssertEqual(recorder.heard.count, total, "a removed observer hears nothing")
        XCTAssertNil(book.observation, "removing the observer leaves nothing on the book")
        XCTAssertNil(grace.observation, "nor on the author")
    }

    func testLongerPathAndSeveralObserversOfTheSameObject() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        let penguin = context.make("Publisher", ["name": "Penguin"])
        let vintage = context.make("Publisher", ["name": "Vintage"])
        let ada = context.make("Author", ["name": "Ada", "publisher": penguin])
        let grace = context.make("Author", ["name": "Grace", "publisher": vintage])
        let book = context.make("Book", ["title": "Notes", "author": ada])
        let path = Recorder(), title = Recorder()
        book.addObserver(path, forKeyPath: "author.publisher.name", options: [.new], context: nil)
        book.addObserver(title, forKeyPath: "title", options: [.new], context: nil)

        penguin.setValue("Penguin Books", forKey: "name")
        ada.setValue(vintage, forKey: "publisher")
        vintage.setValue("Vintage Classics", forKey: "name")
        penguin.setValue("Not heard", forKey: "name")
        book.setValue(grace, forKey: "author")
        grace.setValue(nil, forKey: "publisher")
        XCTAssertEqual(path.newValues.map { $0 as? String }, ["Penguin Books", "Vintage", "Vintage Classics", "Vintage Classics", nil])
        XCTAssertTrue(path.heard.allSatisfy { $0.keyPath == "author.publisher.name" })
        XCTAssertTrue(title.heard.isEmpty, "the single-key observer of the same object hears only its key")

        book.removeObserver(path, forKeyPath: "author.publisher.name")
        XCTAssertNil(grace.observation)
        XCTAssertNil(vintage.observation)
        XCTAssertNil(penguin.observation)
        book.setValue("Renamed", forKey: "title")
        XCTAssertEqual(title.newValues.last as? String, "Renamed", "the single-key observer stays")
        book.removeObserver(title, forKeyPath: "title")
        XCTAssertNil(book.observation)
    }

    // MARK: To-many paths

    func testPathThroughAToManyRelationshipReportsTheSetOfValues() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        let ada = context.make("Author", ["name": "Ada"])
        let notes = context.make("Book", ["title": "Notes", "author": ada])
        let recorder = Recorder()
        ada.addObserver(recorder, forKeyPath: "books.title", options: [.old, .new, .initial], context: nil)
        XCTAssertEqual(strings(recorder.heard.first?.new), ["Notes"], "the value at the path: an NSSet of the titles")

        let sketches = context.make("Book", ["title": "Sketches"])
        sketches.setValue(ada, forKey: "author")
        XCTAssertEqual(recorder.after.last?.kind, NSKeyValueChange.setting.rawValue, "a change of the relationship is a setting of the whole value")
        XCTAssertEqual(strings(recorder.after.last?.old), ["Notes"])
        XCTAssertEqual(strings(recorder.after.last?.new), ["Notes", "Sketches"])

        sketches.setValue("Drafts", forKey: "title")
        XCTAssertEqual(strings(recorder.after.last?.old), ["Notes", "Sketches"], "a member's title")
        XCTAssertEqual(strings(recorder.after.last?.new), ["Notes", "Drafts"])

        ada.mutableSetValue(forKey: "books").remove(notes)
        XCTAssertEqual(strings(recorder.after.last?.new), ["Drafts"])
        let count = recorder.heard.count
        notes.setValue("Gone", forKey: "title")
        XCTAssertEqual(recorder.heard.count, count, "a book that left the relationship is no longer observed")
        XCTAssertNil(notes.observation)

        ada.removeObserver(recorder, forKeyPath: "books.title")
        XCTAssertNil(sketches.observation)
        XCTAssertNil(ada.observation)
    }

    // MARK: Composite elements

    /// `Owner`: `name`, composite `address` { `city`, `zip` }, to-many `pets`; `Pet`: `name`,
    /// to-one `owner`.
    static let compositeModel: NSManagedObjectModel = {
        func attribute(_ name: String) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = .stringAttributeType
            return attribute
        }
        let address = NSCompositeAttributeDescription()
        address.name = "address"
        address.elements = [attribute("city"), attribute("zip")]
        let owner = NSEntityDescription()
        owner.name = "Owner"
        let pet = NSEntityDescription()
        pet.name = "Pet"
        let pets = NSRelationshipDescription()
        pets.name = "pets"
        pets.maxCount = 0
        let petOwner = NSRelationshipDescription()
        petOwner.name = "owner"
        petOwner.maxCount = 1
        pets.destinationEntity = pet
        pets.inverseRelationship = petOwner
        petOwner.destinationEntity = owner
        petOwner.inverseRelationship = pets
        owner.properties = [attribute("name"), address, pets]
        pet.properties = [attribute("name"), petOwner]
        let model = NSManagedObjectModel()
        model.entities = [owner, pet]
        return model
    }()

    func testCompositeElementIsOneKeyAlongAPath() throws {
        let container = try StoreKind.inMemory.makeContainer(model: Self.compositeModel)
        let context = container.viewContext
        let ann = context.make("Owner", ["name": "Ann", "address": ["city": "Paris", "zip": "75001"]])
        let bob = context.make("Owner", ["name": "Bob", "address": ["city": "Lyon"]])
        let rex = context.make("Pet", ["name": "Rex", "owner": ann])

        let city = Recorder()
        ann.addObserver(city, forKeyPath: "address.city", options: [.old, .new, .prior], context: nil)
        ann.setValue("Nice", forKey: "address.city")
        XCTAssertEqual(city.after.last?.old as? String, "Paris", "an element observed on its own")
        XCTAssertEqual(city.after.last?.new as? String, "Nice")
        ann.setValue(["city": "Arles", "zip": "13200"], forKey: "address")
        XCTAssertEqual(city.heard.filter(\.isPrior).last?.old as? String, "Nice", "setting the whole composite reports the element, prior included")
        XCTAssertEqual(city.after.last?.old as? String, "Nice")
        XCTAssertEqual(city.after.last?.new as? String, "Arles")
        ann.removeObserver(city, forKeyPath: "address.city")

        let whole = Recorder()
        ann.addObserver(whole, forKeyPath: "address", options: [.new], context: nil)
        ann.setValue(["city": "Dijon"], forKey: "address")
        XCTAssertEqual((whole.after.last?.new as? [String: Any])?["city"] as? String, "Dijon", "the composite itself is reported after its elements changed")
        ann.removeObserver(whole, forKeyPath: "address")

        let petCity = Recorder()
        rex.addObserver(petCity, forKeyPath: "owner.address.city", options: [.new], context: nil)
        ann.setValue("Metz", forKey: "address.city")
        rex.setValue(bob, forKey: "owner")
        ann.setValue("Not heard", forKey: "address.city")
        bob.setValue(["city": "Nancy"], forKey: "address")
        XCTAssertEqual(petCity.newValues.map { $0 as? String }, ["Metz", "Lyon", "Nancy"])
        XCTAssertTrue(petCity.heard.allSatisfy { $0.keyPath == "owner.address.city" })
        rex.removeObserver(petCity, forKeyPath: "owner.address.city")
        XCTAssertNil(bob.observation)
        XCTAssertNil(ann.observation)
    }

    // MARK: Every source of change

    func testUndoRollbackRefreshAndMergeReachPathObservers() {
        for kind in [StoreKind.inMemory, .binary] {
            do {
                let container = try kind.makeContainer()
                let context = container.viewContext
                context.undoManager = UndoManager()
                let ada = context.make("Author", ["name": "Ada"])
                let grace = context.make("Author", ["name": "Grace"])
                let book = context.make("Book", ["title": "Notes", "author": ada])
                try context.save()
                let recorder = Recorder()
                book.addObserver(recorder, forKeyPath: "author.name", options: [.old, .new], context: nil)
                defer { book.removeObserver(recorder, forKeyPath: "author.name") }

                ada.setValue("Ada L.", forKey: "name")
                context.processPendingChanges()
                context.undo()
                XCTAssertEqual(recorder.newValues.last as? String, "Ada", "[\(kind)] undo of the destination's change")
                context.redo()
                XCTAssertEqual(recorder.newValues.last as? String, "Ada L.", "[\(kind)] redo")

                book.setValue(grace, forKey: "author")
                context.processPendingChanges()
                context.undo()
                XCTAssertEqual(recorder.newValues.last as? String, "Ada L.", "[\(kind)] undo of the relationship's change")
                grace.setValue("Not heard", forKey: "name")
                XCTAssertNotEqual(recorder.newValues.last as? String, "Not heard", "[\(kind)] undo moved the path back to the first author")

                context.rollback()
                XCTAssertEqual(recorder.newValues.last as? String, "Ada", "[\(kind)] rollback")

                // The intermediate object turned into a fault: reported, and still observed.
                context.refresh(ada, mergeChanges: false)
                XCTAssertEqual(recorder.newValues.last as? String, "Ada", "[\(kind)] refreshing the author")
                ada.setValue("Ada B.", forKey: "name")
                XCTAssertEqual(recorder.newValues.last as? String, "Ada B.", "[\(kind)] the refreshed author is still observed")
                try context.save()
                // The observed object itself turned into a fault.
                let beforeRefresh = recorder.heard.count
                context.refresh(book, mergeChanges: false)
                XCTAssertEqual(recorder.heard.count, beforeRefresh + 1, "[\(kind)] refreshing the book")
                XCTAssertEqual(recorder.newValues.last as? String, "Ada B.", "[\(kind)]")
                ada.setValue("Ada C.", forKey: "name")
                XCTAssertEqual(recorder.newValues.last as? String, "Ada C.", "[\(kind)] the path still leads to the author")
                try context.save()

                // Another context renames the author, then gives the book to Grace.
                let background = container.newBackgroundContext()
                let saved = NotificationRecorder(name: .NSManagedObjectContextDidSave, object: background)
                try background.performAndWait {
                    try background.existingObject(with: ada.objectID).setValue("Countess", forKey: "name")
                    try background.save()
                }
                for notification in saved.notifications { context.mergeChanges(fromContextDidSave: notification) }
                XCTAssertEqual(recorder.newValues.last as? String, "Countess", "[\(kind)] a merge changing the author's name")
                let merged = recorder.heard.count
                try background.performAndWait {
                    let other = try background.existingObject(with: book.objectID)
                    other.setValue(try background.existingObject(with: grace.objectID), forKey: "author")
                    try background.save()
                }
                for notification in saved.notifications.dropFirst() { context.mergeChanges(fromContextDidSave: notification) }
                XCTAssertGreaterThan(recorder.heard.count, merged, "[\(kind)] a merge changing the book's author")
                XCTAssertEqual(recorder.newValues.last as? String, "Grace", "[\(kind)]")
                XCTAssertTrue(book.value(forKey: "author") as? NSManagedObject === grace, "[\(kind)]")
                grace.setValue("Grace H.", forKey: "name")
                XCTAssertEqual(recorder.newValues.last as? String, "Grace H.", "[\(kind)] the merged-in author is observed")
                ada.setValue("Not heard", forKey: "name")
                XCTAssertEqual(recorder.newValues.last as? String, "Grace H.", "[\(kind)] the merged-out one is not")
            } catch {
                XCTFail("[\(kind)] \(error)")
            }
        }
    }

    func testDeletedIntermediateObjectLeavesThePath() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        let alice = context.make("Person", ["name": "Alice"])
        let bob = context.make("Person", ["name": "Bob", "spouse": alice])
        try context.save()
        let recorder = Recorder()
        alice.addObserver(recorder, forKeyPath: "spouse.name", options: [.old, .new, .initial], context: nil)
        XCTAssertEqual(recorder.heard.first?.new as? String, "Bob")
        context.delete(bob)
        try context.save()
        XCTAssertTrue(recorder.after.last?.new is NSNull, "the delete nullified the spouse")
        XCTAssertEqual(recorder.after.last?.old as? String, "Bob")
        XCTAssertNil(bob.observation, "the deleted object is no longer observed")
        alice.removeObserver(recorder, forKeyPath: "spouse.name")
        XCTAssertNil(alice.observation)
    }

    // MARK: Block observations

    func testTypedKeyPathThroughAToOneRelationship() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        guard let book = context.make("Book", ["title": "Notes"]) as? BookObject,
              let ada = context.make("Author", ["name": "Ada"]) as? AuthorObject,
              let grace = context.make("Author", ["name": "Grace"]) as? AuthorObject
        else { return XCTFail("typed subclasses") }
        var heard: [(String?, String?)] = []
        let observation = book.observe(\.author?.name, options: [.old, .new]) { object, change in
            XCTAssertTrue(object === book)
            XCTAssertEqual(change.kind, .setting)
            heard.append((change.oldValue ?? nil, change.newValue ?? nil))
        }
        book.author = ada
        ada.name = "Ada L."
        book.author = grace
        ada.name = "Not heard"
        grace.name = "Grace H."
        XCTAssertEqual(heard.map(\.0), [nil, "Ada", "Ada L.", "Grace"])
        XCTAssertEqual(heard.map(\.1), ["Ada", "Ada L.", "Grace", "Grace H."])

        observation.invalidate()
        grace.name = "After"
        XCTAssertEqual(heard.count, 4, "an invalidated observation hears nothing")
        XCTAssertNil(grace.observation, "and leaves nothing on the objects along the path")
        XCTAssertNil(book.observation)
    }

    func testReleasingAPathObservationEndsIt() throws {
        let container = try StoreKind.inMemory.makeContainer()
        let context = container.viewContext
        let ada = context.make("Author", ["name": "Ada"])
        let book = context.make("Book", ["title": "Notes", "author": ada])
        guard let typed = book as? BookObject else { return XCTFail("typed") }
        var heard = 0
        var observation: NSKeyValueObservation? = typed.observe(\.author?.name) { _, _ in heard += 1 }
        ada.setValue("Ada L.", forKey: "name")
        XCTAssertNotNil(observation)
        observation = nil
        ada.setValue("Ada K.", forKey: "name")
        XCTAssertEqual(heard, 1)
        XCTAssertNil(ada.observation)
    }
}
