import CoreData
import Foundation
import XCTest

/// A context's undo manager (issue 20), on every store kind: what undo and redo do to inserts,
/// deletes, attributes and relationships, how changes are grouped, and how undo meets saving,
/// rollback and reset.
final class UndoManagerTests: XCTestCase {
    /// The view context with an undo manager of its own.
    private func undoableContext(_ container: NSPersistentContainer) -> (NSManagedObjectContext, UndoManager) {
        let context = container.viewContext
        let manager = UndoManager()
        context.undoManager = manager
        return (context, manager)
    }

    private func titles(_ value: Any?) -> Set<String> {
        Set(((value as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "title") as? String })
    }

    // MARK: Inserts

    func testUndoOfAnInsertRemovesTheObjectAndRedoBringsItBack() {
        forEachStore { kind, container in
            let (context, manager) = undoableContext(container)
            XCTAssertNil(container.newBackgroundContext().undoManager, "no undo manager by default, as Apple's")
            let author = context.make("Author", ["name": "Ada"])
            let book = context.make("Book", ["title": "Notes", "author": author])
            context.processPendingChanges()
            XCTAssertTrue(manager.canUndo, "[\(kind)]")

            let changes = NotificationRecorder(name: .NSManagedObjectContextObjectsDidChange, object: context)
            func announced(_ key: String) -> Set<NSManagedObject> {
                changes.notifications.reduce(into: []) { $0.formUnion(($1.userInfo?[key] as? Set<NSManagedObject>) ?? []) }
            }

            context.undo()
            XCTAssertFalse(author.isInserted, "[\(kind)]")
            XCTAssertFalse(book.isInserted, "[\(kind)]")
            XCTAssertTrue(context.insertedObjects.isEmpty, "[\(kind)]")
            XCTAssertFalse(context.registeredObjects.contains(author), "[\(kind)]")
            XCTAssertFalse(context.hasChanges, "[\(kind)]")
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 0, "[\(kind)]")
            XCTAssertEqual(announced(NSDeletedObjectsKey), [author, book], "[\(kind)] undo announces the objects it removes")
            XCTAssertTrue(manager.canRedo, "[\(kind)]")

            context.redo()
            XCTAssertTrue(author.isInserted, "[\(kind)]")
            XCTAssertTrue(book.isInserted, "[\(kind)]")
            XCTAssertEqual(context.insertedObjects, [author, book], "[\(kind)]")
            XCTAssertTrue(book.value(forKey: "author") as? NSManagedObject === author, "[\(kind)]")
            XCTAssertEqual(titles(author.value(forKey: "books")), ["Notes"], "[\(kind)]")
            XCTAssertEqual(announced(NSInsertedObjectsKey), [author, book], "[\(kind)] redo announces the objects it brings back")
            try context.save()

            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                let saved = try fresh.all("Author")
                try require(saved, count: 1, "[\(kind)] authors after redo and save")
                XCTAssertEqual(names(saved), ["Ada"], "[\(kind)]")
                XCTAssertEqual(titles(saved[0].value(forKey: "books")), ["Notes"], "[\(kind)]")
            }
        }
    }

    // MARK: Attributes

    func testUndoAndRedoOfAttributeChangesThenSaveWritesTheUndoneState() {
        forEachStore { kind, container in
            let (context, _) = undoableContext(container)
            let author = context.make("Author", ["name": "Ada", "rating": Int16(3)])
            try context.save()

            author.setValue(Int16(5), forKey: "rating")
            author.setValue("Ada L.", forKey: "name")
            context.processPendingChanges()
            author.setValue(Int16(1), forKey: "rating")
            context.processPendingChanges()

            context.undo()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 5, "[\(kind)]")
            XCTAssertEqual(author.value(forKey: "name") as? String, "Ada L.", "[\(kind)]")
            context.undo()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 3, "[\(kind)]")
            XCTAssertEqual(author.value(forKey: "name") as? String, "Ada", "[\(kind)]")
            context.redo()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 5, "[\(kind)]")
            XCTAssertEqual(author.value(forKey: "name") as? String, "Ada L.", "[\(kind)]")
            XCTAssertTrue(context.updatedObjects.contains(author), "[\(kind)] undone changes are ordinary unsaved changes")
            try context.save()

            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                let saved = try fresh.all("Author")
                try require(saved, count: 1, "[\(kind)] authors")
                XCTAssertEqual(saved[0].value(forKey: "rating") as? Int16, 5, "[\(kind)] the save wrote the state undo left")
                XCTAssertEqual(saved[0].value(forKey: "name") as? String, "Ada L.", "[\(kind)]")
            }
        }
    }

    // MARK: Deletes

    func testUndoOfADeleteBringsBackValuesRelationshipsAndCascadedObjects() {
        forEachStore { kind, container in
            let (context, _) = undoableContext(container)
            let publisher = context.make("Publisher", ["name": "Ink"])
            let author = context.make("Author", ["name": "Ada", "rating": Int16(4), "publisher": publisher])
            let first = context.make("Book", ["title": "One", "author": author])
            let second = context.make("Book", ["title": "Two", "author": author])
            try context.save()

            context.delete(author)
            context.processPendingChanges()
            XCTAssertEqual(context.deletedObjects, [author, first, second], "[\(kind)] the cascade ran")
            XCTAssertTrue(((publisher.value(forKey: "authors") as? Set<NSManagedObject>) ?? []).isEmpty, "[\(kind)] the inverse was nullified")

            context.undo()
            XCTAssertFalse(author.isDeleted, "[\(kind)]")
            XCTAssertTrue(context.deletedObjects.isEmpty, "[\(kind)]")
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 4, "[\(kind)]")
            XCTAssertTrue(author.value(forKey: "publisher") as? NSManagedObject === publisher, "[\(kind)]")
            XCTAssertEqual(publisher.value(forKey: "authors") as? Set<NSManagedObject>, [author], "[\(kind)] the inverse is back")
            XCTAssertEqual(titles(author.value(forKey: "books")), ["One", "Two"], "[\(kind)]")
            XCTAssertTrue(first.value(forKey: "author") as? NSManagedObject === author, "[\(kind)]")

            context.redo()
            XCTAssertEqual(context.deletedObjects, [author, first, second], "[\(kind)]")
            XCTAssertTrue(((publisher.value(forKey: "authors") as? Set<NSManagedObject>) ?? []).isEmpty, "[\(kind)]")
            context.undo()
            try context.save()

            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                let authors = try fresh.all("Author")
                try require(authors, count: 1, "[\(kind)] authors after undoing the delete and saving")
                XCTAssertEqual(titles(authors[0].value(forKey: "books")), ["One", "Two"], "[\(kind)]")
                XCTAssertEqual(names([authors[0].value(forKey: "publisher") as? NSManagedObject].compactMap { $0 }), ["Ink"], "[\(kind)]")
            }
        }
    }

    /// Undo crosses saves, as Apple's: undoing a saved insert deletes the object, undoing a
    /// saved delete inserts it again; the next save writes either.
    func testUndoAcrossASaveIsSavedByTheNextSave() {
        forEachStore { kind, container in
            let (context, _) = undoableContext(container)
            let author = context.make("Author", ["name": "Ada"])
            try context.save()
            context.undo()
            XCTAssertTrue(author.isDeleted, "[\(kind)] undoing a saved insert is a pending delete")
            try context.save()
            let check = container.newBackgroundContext()
            XCTAssertEqual(try check.performAndWait { try check.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")) }, 0, "[\(kind)]")

            let grace = context.make("Author", ["name": "Grace", "rating": Int16(5)])
            let book = context.make("Book", ["title": "Cobol", "author": grace])
            try context.save()
            context.delete(grace)
            try context.save()
            context.undo()
            XCTAssertTrue(grace.isInserted, "[\(kind)] undoing a saved delete inserts the object again")
            XCTAssertTrue(book.isInserted, "[\(kind)] and what the delete cascaded to")
            try context.save()

            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                let authors = try fresh.all("Author")
                try require(authors, count: 1, "[\(kind)] authors after undoing a saved delete")
                XCTAssertEqual(names(authors), ["Grace"], "[\(kind)]")
                XCTAssertEqual(authors[0].value(forKey: "rating") as? Int16, 5, "[\(kind)]")
                XCTAssertEqual(titles(authors[0].value(forKey: "books")), ["Cobol"], "[\(kind)]")
            }
        }
    }

    // MARK: Relationships

    func testUndoOfRelationshipChangesKeepsBothSidesConsistent() {
        forEachStore { kind, container in
            let (context, _) = undoableContext(container)
            let ada = context.make("Author", ["name": "Ada"])
            let grace = context.make("Author", ["name": "Grace"])
            let one = context.make("Book", ["title": "One", "author": ada])
            let two = context.make("Book", ["title": "Two", "author": ada])
            let tag = context.make("Tag", ["label": "classic"])
            try context.save()

            one.setValue(grace, forKey: "author")  // to-one, moving the book between to-manys
            context.processPendingChanges()
            grace.mutableSetValue(forKey: "books").add(two)  // to-many, through the live set
            one.mutableSetValue(forKey: "tags").add(tag)  // many-to-many
            context.processPendingChanges()
            XCTAssertEqual(titles(ada.value(forKey: "books")), [], "[\(kind)]")
            XCTAssertEqual(titles(grace.value(forKey: "books")), ["One", "Two"], "[\(kind)]")

            context.undo()
            XCTAssertEqual(titles(ada.value(forKey: "books")), ["Two"], "[\(kind)]")
            XCTAssertEqual(titles(grace.value(forKey: "books")), ["One"], "[\(kind)]")
            XCTAssertTrue(two.value(forKey: "author") as? NSManagedObject === ada, "[\(kind)]")
            XCTAssertTrue(((one.value(forKey: "tags") as? Set<NSManagedObject>) ?? []).isEmpty, "[\(kind)]")
            XCTAssertTrue(((tag.value(forKey: "books") as? Set<NSManagedObject>) ?? []).isEmpty, "[\(kind)]")

            context.undo()
            XCTAssertEqual(titles(ada.value(forKey: "books")), ["One", "Two"], "[\(kind)]")
            XCTAssertEqual(titles(grace.value(forKey: "books")), [], "[\(kind)]")
            XCTAssertTrue(one.value(forKey: "author") as? NSManagedObject === ada, "[\(kind)]")

            context.redo()
            context.redo()
            XCTAssertEqual(titles(grace.value(forKey: "books")), ["One", "Two"], "[\(kind)]")
            XCTAssertEqual(titles(tag.value(forKey: "books")), ["One"], "[\(kind)]")
            context.undo()
            try context.save()

            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                let authors = try fresh.all("Author", sortedBy: "name")
                try require(authors, count: 2, "[\(kind)] authors")
                XCTAssertEqual(titles(authors[0].value(forKey: "books")), ["Two"], "[\(kind)] Ada")
                XCTAssertEqual(titles(authors[1].value(forKey: "books")), ["One"], "[\(kind)] Grace")
                XCTAssertEqual(try fresh.all("Tag").first.map { titles($0.value(forKey: "books")) }, [], "[\(kind)]")
            }
        }
    }

    func testUndoRestoresTheOrderOfAnOrderedRelationship() {
        forEachStore { kind, container in
            let (context, _) = undoableContext(container)
            let book = context.make("Book", ["title": "Guide"])
            for heading in ["A", "B", "C"] {
                book.mutableOrderedSetValue(forKey: "chapters").add(context.make("Chapter", ["heading": heading]))
            }
            try context.save()
            func headings() -> [String] {
                ((book.value(forKey: "chapters") as? NSOrderedSet)?.array ?? []).compactMap { ($0 as? NSManagedObject)?.value(forKey: "heading") as? String }
            }
            book.mutableOrderedSetValue(forKey: "chapters").exchangeObject(at: 0, withObjectAt: 2)
            context.processPendingChanges()
            XCTAssertEqual(headings(), ["C", "B", "A"], "[\(kind)]")
            context.undo()
            XCTAssertEqual(headings(), ["A", "B", "C"], "[\(kind)]")
            context.redo()
            XCTAssertEqual(headings(), ["C", "B", "A"], "[\(kind)]")
        }
    }

    // MARK: Grouping

    /// On Linux an event ends when the context processes its pending changes: at the end of each
    /// `perform` block, or when `processPendingChanges()` is called.
    func testEachPerformBlockIsOneUndoGroup() {
        forEachStore { kind, container in
            let context = container.newBackgroundContext()
            context.performAndWait { context.undoManager = UndoManager() }
            context.perform {
                let author = context.make("Author", ["name": "Ada"])
                author.setValue(Int16(1), forKey: "rating")
            }
            context.perform {
                let author = try? context.all("Author").first
                author?.setValue("Ada Lovelace", forKey: "name")
                author?.setValue(Int16(5), forKey: "rating")
            }
            context.performAndWait {
                let author = try? context.all("Author").first
                context.undo()
                XCTAssertEqual(author?.value(forKey: "name") as? String, "Ada", "[\(kind)] the second block undone at once")
                XCTAssertEqual(author?.value(forKey: "rating") as? Int16, 1, "[\(kind)]")
                XCTAssertEqual(author?.isInserted, true, "[\(kind)]")
                context.undo()
                XCTAssertEqual(author?.isInserted, false, "[\(kind)] the first block undone")
                XCTAssertFalse(context.undoManager?.canUndo ?? true, "[\(kind)]")
            }
        }
    }

    func testExplicitGroupsGatherSeveralProcessingsAndNestedGroupsUndoApart() {
        forEachStore { kind, container in
            let (context, manager) = undoableContext(container)
            let author = context.make("Author", ["name": "Ada", "rating": Int16(0)])
            try context.save()

            manager.beginUndoGrouping()
            author.setValue(Int16(1), forKey: "rating")
            context.processPendingChanges()
            author.setValue("Ada L.", forKey: "name")
            manager.endUndoGrouping()
            manager.setActionName("Edit Author")
            XCTAssertEqual(manager.undoActionName, "Edit Author", "[\(kind)]")
            context.undo()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 0, "[\(kind)] the whole group undone")
            XCTAssertEqual(author.value(forKey: "name") as? String, "Ada", "[\(kind)]")
            XCTAssertEqual(manager.redoActionName, "Edit Author", "[\(kind)]")
            context.redo()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 1, "[\(kind)]")
            XCTAssertEqual(author.value(forKey: "name") as? String, "Ada L.", "[\(kind)]")

            // groupsByEvent off: the caller's groups are the only groups.
            manager.groupsByEvent = false
            manager.beginUndoGrouping()
            author.setValue(Int16(2), forKey: "rating")
            manager.beginUndoGrouping()
            author.setValue(Int16(3), forKey: "rating")
            manager.endUndoGrouping()
            manager.undoNestedGroup()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 2, "[\(kind)] only the nested group undone")
            manager.endUndoGrouping()
            manager.undo()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 1, "[\(kind)]")
        }
    }

    // MARK: Registration off

    func testChangesMadeWithRegistrationDisabledAreNotUndone() {
        forEachStore { kind, container in
            let (context, manager) = undoableContext(container)
            let author = context.make("Author", ["name": "Ada", "rating": Int16(0)])
            try context.save()

            author.setValue(Int16(4), forKey: "rating")
            // Apple's idiom: process before disabling, and again before enabling.
            context.processPendingChanges()
            manager.disableUndoRegistration()
            XCTAssertFalse(manager.isUndoRegistrationEnabled)
            author.setValue("Countess", forKey: "name")
            let extra = context.make("Author", ["name": "Grace"])
            context.processPendingChanges()
            manager.enableUndoRegistration()

            context.undo()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 0, "[\(kind)] the registered change undone")
            XCTAssertEqual(author.value(forKey: "name") as? String, "Countess", "[\(kind)] the unregistered one kept")
            XCTAssertTrue(extra.isInserted, "[\(kind)]")
            context.undo()
            XCTAssertTrue(author.isDeleted, "[\(kind)] next, the saved insert of the first group is undone")
            XCTAssertTrue(extra.isInserted, "[\(kind)] the unregistered insert stays")
            XCTAssertFalse(manager.canUndo, "[\(kind)]")

            // No undo manager: nothing recorded.
            context.rollback()
            context.undoManager = nil
            author.setValue(Int16(2), forKey: "rating")
            context.processPendingChanges()
            context.undo()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 2, "[\(kind)]")
        }
    }

    // MARK: Rollback and reset

    func testRollbackAndResetEmptyTheUndoStack() {
        forEachStore { kind, container in
            let (context, manager) = undoableContext(container)
            let author = context.make("Author", ["name": "Ada", "rating": Int16(1)])
            try context.save()
            author.setValue(Int16(2), forKey: "rating")
            context.processPendingChanges()
            author.setValue(Int16(3), forKey: "rating")
            context.processPendingChanges()
            context.undo()
            XCTAssertTrue(manager.canUndo && manager.canRedo, "[\(kind)]")

            context.rollback()
            XCTAssertFalse(manager.canUndo, "[\(kind)] rollback removes everything from the undo stack")
            XCTAssertFalse(manager.canRedo, "[\(kind)]")
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 1, "[\(kind)]")

            author.setValue(Int16(4), forKey: "rating")
            context.processPendingChanges()
            XCTAssertTrue(manager.canUndo, "[\(kind)]")
            context.reset()
            XCTAssertFalse(manager.canUndo, "[\(kind)] reset forgets the objects the operations act on")
        }
    }

    // MARK: Child contexts

    /// A child's save is an edit in its parent: the parent's undo manager can take it back.
    func testAChildsSaveIsUndoableInTheParent() {
        forEachStore { kind, container in
            let (parent, _) = undoableContext(container)
            let author = parent.make("Author", ["name": "Ada", "rating": Int16(1)])
            try parent.save()

            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = parent
            try child.performAndWait {
                let mine = try child.existingObject(with: author.objectID)
                mine.setValue(Int16(5), forKey: "rating")
                child.make("Author", ["name": "Grace"])
                try child.save()
            }
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 5, "[\(kind)]")
            XCTAssertEqual(parent.insertedObjects.count, 1, "[\(kind)]")
            parent.undo()
            XCTAssertEqual(author.value(forKey: "rating") as? Int16, 1, "[\(kind)]")
            XCTAssertTrue(parent.insertedObjects.isEmpty, "[\(kind)]")
        }
    }
}

/// The undo manager itself (Foundation on Linux has none; the module declares Apple's).
final class UndoManagerBehaviourTests: XCTestCase {
    private final class Counter {
        var value = 0
        func set(_ newValue: Int, on manager: UndoManager) {
            let old = value
            manager.registerUndo(withTarget: self) { $0.set(old, on: manager) }
            value = newValue
        }
    }

    func testEventGroupsUndoRedoAndLevels() {
        let manager = UndoManager()
        let counter = Counter()
        counter.set(1, on: manager)
        counter.set(2, on: manager)
        XCTAssertEqual(manager.groupingLevel, 1, "the event's group opened by the first registration")
        manager.undo()
        XCTAssertEqual(counter.value, 0, "the event's group closed and undone as one")
        XCTAssertTrue(manager.canRedo)
        manager.redo()
        XCTAssertEqual(counter.value, 2)
        XCTAssertFalse(manager.canRedo)

        manager.levelsOfUndo = 2
        for value in 3...6 {
            manager.beginUndoGrouping()
            counter.set(value, on: manager)
            manager.endUndoGrouping()
        }
        manager.undo()
        manager.undo()
        manager.undo()
        XCTAssertEqual(counter.value, 4, "only two groups kept")
        XCTAssertFalse(manager.canUndo)

        manager.beginUndoGrouping()
        counter.set(7, on: manager)
        manager.endUndoGrouping()
        XCTAssertFalse(manager.canRedo, "a new registration clears the redo stack")
    }

    func testRemovingATargetsActionsAndDisabling() {
        let manager = UndoManager()
        let kept = Counter()
        let removed = Counter()
        manager.beginUndoGrouping()
        kept.set(1, on: manager)
        removed.set(1, on: manager)
        manager.endUndoGrouping()
        manager.removeAllActions(withTarget: removed)
        manager.undo()
        XCTAssertEqual(kept.value, 0)
        XCTAssertEqual(removed.value, 1)

        manager.disableUndoRegistration()
        manager.disableUndoRegistration()
        kept.set(5, on: manager)
        manager.enableUndoRegistration()
        XCTAssertFalse(manager.isUndoRegistrationEnabled, "disabling is counted")
        manager.enableUndoRegistration()
        XCTAssertFalse(manager.canUndo)
        manager.disableUndoRegistration()
        manager.removeAllActions()
        XCTAssertTrue(manager.isUndoRegistrationEnabled, "removeAllActions enables registration again")
    }

    func testNotificationsAroundAnUndo() {
        let manager = UndoManager()
        let counter = Counter()
        manager.beginUndoGrouping()
        counter.set(1, on: manager)
        manager.endUndoGrouping()
        let will = NotificationRecorder(name: .NSUndoManagerWillUndoChange, object: manager)
        let did = NotificationRecorder(name: .NSUndoManagerDidUndoChange, object: manager)
        let checkpoints = NotificationRecorder(name: .NSUndoManagerCheckpoint, object: manager)
        manager.undo()
        XCTAssertEqual(will.notifications.count, 1)
        XCTAssertEqual(did.notifications.count, 1)
        XCTAssertFalse(checkpoints.notifications.isEmpty, "undo posts a checkpoint, at which contexts register their changes")
    }
}
