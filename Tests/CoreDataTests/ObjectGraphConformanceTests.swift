import CoreData
import Foundation
import XCTest

/// Object-graph scenarios written once and run against every store (``StoreKind``).
final class ObjectGraphConformanceTests: XCTestCase {
    // MARK: Insert, save, fetch

    func testInsertSaveAndFetchWithPredicateSortAndLimits() {
        forEachStore { kind, container in
            let context = container.viewContext
            for (name, rating) in [("Ada", 5), ("Grace", 4), ("Alan", 2), ("Barbara", 4)] {
                context.make("Author", ["name": name, "rating": Int16(rating)])
            }
            XCTAssertTrue(context.hasChanges)
            try context.save()
            XCTAssertFalse(context.hasChanges, "[\(kind)]")

            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                XCTAssertEqual(names(try fresh.all("Author", sortedBy: "name")), ["Ada", "Alan", "Barbara", "Grace"], "[\(kind)]")
                XCTAssertEqual(names(try fresh.all("Author", where: "rating >= %d", 4, sortedBy: "name")), ["Ada", "Barbara", "Grace"], "[\(kind)]")
                XCTAssertEqual(names(try fresh.all("Author", where: "name BEGINSWITH %@", "A", sortedBy: "name")), ["Ada", "Alan"], "[\(kind)]")

                let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
                request.sortDescriptors = [NSSortDescriptor(key: "rating", ascending: false), NSSortDescriptor(key: "name", ascending: true)]
                request.fetchOffset = 1
                request.fetchLimit = 2
                XCTAssertEqual(names(try fresh.fetch(request)), ["Barbara", "Grace"], "[\(kind)]")
                XCTAssertEqual(try fresh.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 4, "[\(kind)]")
            }
        }
    }

    /// Fetched objects convert their values slot by slot on first read (issue 14): an update
    /// that reads and changes one attribute saves every other attribute exactly as stored,
    /// inherited attributes of a subentity object included.
    func testUnreadValuesOfAFetchedObjectSaveUnchanged() {
        forEachStore { kind, container in
            let context = container.viewContext
            let novel = context.make("Novel", ["title": "Dune", "pages": Int32(412), "price": 9.5, "isbn": "123-4567890123", "genre": "SF"])
            let id = UUID()
            novel.setValue(id, forKey: "id")
            try context.save()

            let other = container.newBackgroundContext()
            try other.performAndWait {
                let fetched = try XCTUnwrap(other.all("Novel").first)
                XCTAssertEqual(fetched.value(forKey: "pages") as? Int32, 412, "[\(kind)]")
                fetched.setValue(Int32(413), forKey: "pages")
                XCTAssertEqual(Set(fetched.changedValues().keys), ["pages"], "[\(kind)]")
                XCTAssertEqual(fetched.committedValues(forKeys: ["title", "genre"]) as? [String: String], ["title": "Dune", "genre": "SF"], "[\(kind)]")
                try other.save()
            }
            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                let saved = try XCTUnwrap(fresh.all("Book").first)
                XCTAssertEqual(saved.entity.name, "Novel", "[\(kind)]")
                XCTAssertEqual(saved.value(forKey: "title") as? String, "Dune", "[\(kind)]")
                XCTAssertEqual(saved.value(forKey: "pages") as? Int32, 413, "[\(kind)]")
                XCTAssertEqual(saved.value(forKey: "price") as? Double, 9.5, "[\(kind)]")
                XCTAssertEqual(saved.value(forKey: "isbn") as? String, "123-4567890123", "[\(kind)]")
                XCTAssertEqual(saved.value(forKey: "id") as? UUID, id, "[\(kind)]")
                XCTAssertEqual(saved.value(forKey: "genre") as? String, "SF", "[\(kind)]")
                XCTAssertNil(saved.value(forKey: "draftNote"), "[\(kind)]")
            }
        }
    }

    func testDefaultsTypesAndAttributeValuesRoundTrip() {
        forEachStore { kind, container in
            let context = container.viewContext
            let id = UUID()
            let book = context.make("Book", ["title": "Notes", "price": 12.5, "id": id])
            XCTAssertEqual(book.value(forKey: "pages") as? Int32, 0, "the model's default")
            try context.save()
            context.reset()
            let fetched = try XCTUnwrap(try context.all("Book").first)
            XCTAssertEqual(fetched.value(forKey: "title") as? String, "Notes", "[\(kind)]")
            XCTAssertEqual(fetched.value(forKey: "pages") as? Int32, 0, "[\(kind)]")
            XCTAssertEqual(fetched.value(forKey: "price") as? Double, 12.5, "[\(kind)]")
            XCTAssertEqual(fetched.value(forKey: "id") as? UUID, id, "[\(kind)]")
        }
    }

    /// Validation converts each value to its stored form once and the save reuses it: a value
    /// set after validation must still be the one saved, and defaults are there until replaced.
    func testValuesSetAfterValidationAreTheOnesSaved() {
        forEachStore { kind, container in
            let context = container.viewContext
            let book = context.make("Book", ["title": "A", "price": 1.0])
            try book.validateForInsert()
            book.setValue("B", forKey: "title")
            book.setValue(Int32(7), forKey: "pages")
            try book.validateForInsert()
            book.setValue(2.5, forKey: "price")
            try context.save()
            book.setValue("C", forKey: "title")
            try context.save()
            context.reset()
            let fetched = try XCTUnwrap(try context.all("Book").first)
            XCTAssertEqual(fetched.value(forKey: "title") as? String, "C", "[\(kind)]")
            XCTAssertEqual(fetched.value(forKey: "pages") as? Int32, 7, "[\(kind)]")
            XCTAssertEqual(fetched.value(forKey: "price") as? Double, 2.5, "[\(kind)]")
            let wrong = context.make("Book", ["title": "D", "price": 1.0])
            wrong.setValue("not a number", forKey: "pages")
            XCTAssertThrowsError(try wrong.validateForInsert(), "[\(kind)]")
            wrong.setValue(Int32(3), forKey: "pages")
            XCTAssertNoThrow(try wrong.validateForInsert(), "[\(kind)]")
        }
    }

    func testTransientValuesAreNotSaved() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.make("Book", ["title": "Draft", "draftNote": "only in memory"])
            try context.save()
            context.reset()
            let fetched = try XCTUnwrap(try context.all("Book").first)
            XCTAssertNil(fetched.value(forKey: "draftNote"), "[\(kind)]")
        }
    }

    // MARK: Identity and faulting

    func testTemporaryIDsBecomePermanentAndURIsRoundTrip() {
        forEachStore { kind, container in
            let context = container.viewContext
            let author = context.make("Author", ["name": "Ada"])
            XCTAssertTrue(author.objectID.isTemporaryID)
            XCTAssertTrue(author.objectID.uriRepresentation().absoluteString.hasPrefix("x-coredata:///Author/t"))
            let second = context.make("Author", ["name": "Grace"])
            XCTAssertNotEqual(second.objectID, author.objectID)
            XCTAssertNotEqual(second.objectID.uriRepresentation(), author.objectID.uriRepresentation())
            XCTAssertNotEqual(second.objectID.hash, author.objectID.hash)
            try context.save()
            XCTAssertFalse(author.objectID.isTemporaryID, "[\(kind)]")
            let uri = author.objectID.uriRepresentation()
            XCTAssertEqual(uri.scheme, "x-coredata")
            let back = try XCTUnwrap(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uri))
            XCTAssertEqual(back, author.objectID, "[\(kind)]")
            XCTAssertNil(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://nope/Author/p1")!))
        }
    }

    func testObtainPermanentIDsBeforeSave() {
        forEachStore { kind, container in
            let context = container.viewContext
            let a = context.make("Author", ["name": "A"])
            let b = context.make("Author", ["name": "B"])
            try context.obtainPermanentIDs(for: [a, b])
            XCTAssertFalse(a.objectID.isTemporaryID)
            XCTAssertNotEqual(a.objectID, b.objectID)
            XCTAssertTrue(context.registeredObject(for: a.objectID) === a)
            try context.save()
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 2, "[\(kind)]")
        }
    }

    func testOneObjectPerIDPerContextAndFetchedObjectsAreFaults() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.make("Author", ["name": "Ada"])
            try context.save()
            let other = container.newBackgroundContext()
            try other.performAndWait {
                let first = try XCTUnwrap(try other.all("Author").first)
                XCTAssertTrue(first.isFault, "[\(kind)] fetched objects start as faults")
                XCTAssertEqual(first.value(forKey: "name") as? String, "Ada")
                XCTAssertFalse(first.isFault, "[\(kind)] touching fires the fault")
                let second = try XCTUnwrap(try other.all("Author").first)
                XCTAssertTrue(first === second, "[\(kind)] one object per ID per context")
                XCTAssertTrue(other.object(with: first.objectID) === first)
                XCTAssertTrue(try other.existingObject(with: first.objectID) === first)
            }
        }
    }

    func testExistingObjectForADeletedRowThrows() {
        forEachStore { kind, container in
            let context = container.viewContext
            let author = context.make("Author", ["name": "Ada"])
            try context.save()
            let id = author.objectID
            context.delete(author)
            try context.save()
            let other = container.newBackgroundContext()
            try other.performAndWait {
                XCTAssertThrowsError(try other.existingObject(with: id)) { error in
                    XCTAssertEqual((error as NSError).code, NSManagedObjectReferentialIntegrityError, "[\(kind)]")
                }
                // With shouldDeleteInaccessibleFaults (the default) the fault reads as empty.
                let fault = other.object(with: id)
                XCTAssertNil(fault.value(forKey: "name"))
            }
        }
    }

    // MARK: Relationships

    func testInversesAreKeptInStepImmediately() {
        forEachStore { kind, container in
            let context = container.viewContext
            let ada = context.make("Author", ["name": "Ada"])
            let alan = context.make("Author", ["name": "Alan"])
            let book = context.make("Book", ["title": "Notes"])
            book.setValue(ada, forKey: "author")
            XCTAssertEqual((ada.value(forKey: "books") as? Set<NSManagedObject>)?.count, 1, "[\(kind)] to-one set updates the to-many inverse")
            book.setValue(alan, forKey: "author")
            XCTAssertEqual((ada.value(forKey: "books") as? Set<NSManagedObject>)?.count, 0, "[\(kind)] moved away")
            XCTAssertTrue((alan.value(forKey: "books") as? Set<NSManagedObject>)?.contains(book) == true)

            let other = context.make("Book", ["title": "Other"])
            ada.setValue(Set([other, book]), forKey: "books")
            XCTAssertTrue(book.value(forKey: "author") as? NSManagedObject === ada, "[\(kind)] to-many set updates the to-one inverse")
            XCTAssertEqual((alan.value(forKey: "books") as? Set<NSManagedObject>)?.count, 0, "[\(kind)] the previous owner lets go")

            let swift = context.make("Tag", ["label": "swift"])
            let data = context.make("Tag", ["label": "data"])
            book.setValue(Set([swift, data]), forKey: "tags")
            other.setValue(Set([swift]), forKey: "tags")
            XCTAssertEqual((swift.value(forKey: "books") as? Set<NSManagedObject>)?.count, 2, "[\(kind)] many-to-many")

            let p1 = context.make("Person", ["name": "P1"])
            let p2 = context.make("Person", ["name": "P2"])
            let p3 = context.make("Person", ["name": "P3"])
            p1.setValue(p2, forKey: "spouse")
            XCTAssertTrue(p2.value(forKey: "spouse") as? NSManagedObject === p1, "[\(kind)] one-to-one")
            p3.setValue(p2, forKey: "spouse")
            XCTAssertNil(p1.value(forKey: "spouse"), "[\(kind)] one-to-one steal clears the old partner")
            XCTAssertTrue(p2.value(forKey: "spouse") as? NSManagedObject === p3)

            try context.save()
            context.reset()
            let reread = try XCTUnwrap(try context.all("Author", where: "name == %@", "Ada").first)
            XCTAssertEqual(((reread.value(forKey: "books") as? Set<NSManagedObject>) ?? []).count, 2, "[\(kind)] saved and read back")
            let tag = try XCTUnwrap(try context.all("Tag", where: "label == %@", "swift").first)
            XCTAssertEqual(((tag.value(forKey: "books") as? Set<NSManagedObject>) ?? []).count, 2, "[\(kind)]")
        }
    }

    func testOrderedToManyKeepsOrder() {
        forEachStore { kind, container in
            let context = container.viewContext
            let book = context.make("Book", ["title": "Ordered"])
            let chapters = (1...4).map { context.make("Chapter", ["heading": "Chapter \($0)"]) }
            book.setValue(NSOrderedSet(array: chapters.reversed()), forKey: "chapters")
            try context.save()
            context.reset()
            let fetched = try XCTUnwrap(try context.all("Book").first)
            let ordered = try XCTUnwrap(fetched.value(forKey: "chapters") as? NSOrderedSet)
            XCTAssertEqual(ordered.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "heading") as? String },
                           ["Chapter 4", "Chapter 3", "Chapter 2", "Chapter 1"], "[\(kind)]")
        }
    }

    func testKeyPathsAcrossRelationshipsInPredicates() {
        forEachStore { kind, container in
            let context = container.viewContext
            let ada = context.make("Author", ["name": "Ada"])
            let alan = context.make("Author", ["name": "Alan"])
            context.make("Book", ["title": "Notes", "pages": Int32(120), "author": ada])
            context.make("Book", ["title": "Engines", "pages": Int32(400), "author": ada])
            context.make("Book", ["title": "Computing", "pages": Int32(30), "author": alan])
            try context.save()
            XCTAssertEqual(names(try context.all("Book", where: "author.name == %@", "Ada", sortedBy: "title"), "title"), ["Engines", "Notes"], "[\(kind)]")
            XCTAssertEqual(names(try context.all("Author", where: "ANY books.pages > 300"), "name"), ["Ada"], "[\(kind)]")
            XCTAssertEqual(names(try context.all("Book", where: "author == %@", alan), "title"), ["Computing"], "[\(kind)] a managed object as argument")
            XCTAssertEqual(names(try context.all("Book", where: "author == %@", alan.objectID), "title"), ["Computing"], "[\(kind)] an object ID as argument")
            XCTAssertEqual(names(try context.all("Author", where: "books.@count == 2"), "name"), ["Ada"], "[\(kind)]")
        }
    }

    // MARK: Delete rules

    func testCascadeAndNullifyDeleteRules() {
        forEachStore { kind, container in
            let context = container.viewContext
            let ada = context.make("Author", ["name": "Ada"])
            let book = context.make("Book", ["title": "Notes", "author": ada])
            let chapter = context.make("Chapter", ["heading": "One"])
            book.setValue(NSOrderedSet(array: [chapter]), forKey: "chapters")
            let tag = context.make("Tag", ["label": "x"])
            book.setValue(Set([tag]), forKey: "tags")
            try context.save()

            context.delete(ada)
            XCTAssertTrue(book.isDeleted, "[\(kind)] author → books cascades")
            XCTAssertTrue(chapter.isDeleted, "[\(kind)] book → chapters cascades")
            XCTAssertEqual((tag.value(forKey: "books") as? Set<NSManagedObject>)?.count, 0, "[\(kind)] tags are nullified")
            try context.save()
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Book")), 0)
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Chapter")), 0)
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Tag")), 1)
        }
    }

    func testDenyDeleteRuleFailsTheSave() {
        forEachStore { kind, container in
            let context = container.viewContext
            let publisher = context.make("Publisher", ["name": "P"])
            let author = context.make("Author", ["name": "Ada"])
            author.setValue(publisher, forKey: "publisher")
            try context.save()
            context.delete(publisher)
            XCTAssertThrowsError(try context.save()) { error in
                let nsError = error as NSError
                XCTAssertEqual(nsError.domain, NSCocoaErrorDomain)
                XCTAssertEqual(nsError.code, NSValidationRelationshipDeniedDeleteError, "[\(kind)]")
                XCTAssertEqual(nsError.userInfo[NSValidationKeyErrorKey] as? String, "authors")
            }
            context.rollback()
            XCTAssertFalse(publisher.isDeleted, "[\(kind)] rollback undoes the delete")
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Publisher")), 1)
        }
    }

    // MARK: Validation

    func testMissingMandatoryValue() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.make("Author", [:])
            XCTAssertThrowsError(try context.save()) { error in
                let nsError = error as NSError
                XCTAssertEqual(nsError.code, NSValidationMissingMandatoryPropertyError, "[\(kind)]")
                XCTAssertEqual(nsError.userInfo[NSValidationKeyErrorKey] as? String, "name")
                XCTAssertTrue(nsError.localizedDescription.contains("'name' of Author is a required value"), nsError.localizedDescription)
            }
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 1, "the unsaved insert is still pending")
        }
    }

    func testSeveralValidationErrorsAreCombined() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.make("Author", ["name": String(repeating: "x", count: 41), "rating": Int16(9)])
            context.make("Book", ["isbn": "not an isbn"])
            XCTAssertThrowsError(try context.save()) { error in
                let nsError = error as NSError
                XCTAssertEqual(nsError.code, NSValidationMultipleErrorsError, "[\(kind)]")
                let codes = Set(((nsError.userInfo[NSDetailedErrorsKey] as? [NSError]) ?? []).map(\.code))
                XCTAssertEqual(codes, [NSValidationStringTooLongError, NSValidationNumberTooLargeError, NSValidationMissingMandatoryPropertyError, NSValidationStringPatternMatchingError], "[\(kind)]")
            }
        }
    }

    func testRelationshipCountValidation() {
        forEachStore { kind, container in
            let context = container.viewContext
            let publisher = context.make("Publisher", ["name": "P"])
            let authors = (1...4).map { context.make("Author", ["name": "A\($0)"]) }
            publisher.setValue(Set(authors), forKey: "authors")
            XCTAssertThrowsError(try context.save()) { error in
                XCTAssertEqual((error as NSError).code, NSValidationRelationshipExceedsMaximumCountError, "[\(kind)]")
            }
            let chapter = context.make("Chapter", ["heading": "orphan"])
            publisher.setValue(Set(authors.prefix(2)), forKey: "authors")
            XCTAssertThrowsError(try context.save()) { error in
                XCTAssertEqual((error as NSError).code, NSValidationMissingMandatoryPropertyError, "[\(kind)] a chapter needs its book")
                XCTAssertEqual((error as NSError).userInfo[NSValidationKeyErrorKey] as? String, "book")
            }
            context.delete(chapter)
            try context.save()
        }
    }

    // MARK: Uniqueness and conflicts

    func testUniquenessConstraintConflict() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.make("Author", ["name": "Ada"])
            try context.save()
            context.make("Author", ["name": "Ada"])
            XCTAssertThrowsError(try context.save()) { error in
                let nsError = error as NSError
                XCTAssertEqual(nsError.code, NSManagedObjectConstraintMergeError, "[\(kind)]")
                let conflicts = nsError.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict]
                XCTAssertEqual(conflicts?.first?.constraint, ["name"])
            }
        }
    }

    func testUniquenessConflictsResolvedByMergePolicies() {
        forEachStore { kind, container in
            for (policy, expectedRating) in [(NSMergePolicy.mergeByPropertyObjectTrump, Int16(5)), (.mergeByPropertyStoreTrump, Int16(1)), (.overwrite, Int16(5)), (.rollback, Int16(1))] {
                let context = container.newBackgroundContext()
                try context.performAndWait {
                    let name = "Unique\(policy.mergeType.rawValue)"
                    let existing = context.make("Author", ["name": name, "rating": Int16(1)])
                    try context.save()
                    let existingID = existing.objectID
                    context.reset()
                    context.mergePolicy = policy
                    let newcomer = context.make("Author", ["name": name, "rating": Int16(5)])
                    let book = context.make("Book", ["title": "By \(name)", "author": newcomer])
                    try context.save()
                    XCTAssertEqual(newcomer.objectID, existingID, "[\(kind)] \(policy.mergeType): the new object takes the existing one's identity")
                    XCTAssertFalse(newcomer.objectID.isTemporaryID)
                    let check = container.newBackgroundContext()
                    try check.performAndWait {
                        let stored = try check.all("Author", where: "name == %@", name)
                        XCTAssertEqual(stored.count, 1, "[\(kind)] \(policy.mergeType)")
                        XCTAssertEqual(stored.first?.value(forKey: "rating") as? Int16, expectedRating, "[\(kind)] \(policy.mergeType)")
                        let savedBook = try XCTUnwrap(try check.all("Book", where: "title == %@", "By \(name)").first)
                        XCTAssertEqual((savedBook.value(forKey: "author") as? NSManagedObject)?.objectID, existingID, "[\(kind)] references follow")
                        XCTAssertEqual((stored.first?.value(forKey: "books") as? Set<NSManagedObject>)?.count, 1, "[\(kind)] \(policy.mergeType): the inverse is kept")
                    }
                    _ = book
                }
            }
        }
    }

    func testOptimisticLockingConflictWithEachMergePolicy() {
        forEachStore { kind, container in
            func setUpConflict(_ policy: NSMergePolicy) throws -> (NSManagedObjectContext, NSManagedObject) {
                let writer = container.newBackgroundContext()
                let reader = container.newBackgroundContext()
                reader.mergePolicy = policy
                var objectID: NSManagedObjectID?
                try writer.performAndWait {
                    let author = writer.make("Author", ["name": "Policy\(policy.mergeType.rawValue)", "rating": Int16(1)])
                    try writer.save()
                    objectID = author.objectID
                }
                let id = try XCTUnwrap(objectID)
                let mine = try reader.performAndWait { () throws -> NSManagedObject in
                    let object = try reader.existingObject(with: id)
                    object.setValue(Int16(2), forKey: "rating")
                    return object
                }
                try writer.performAndWait {
                    let theirs = try writer.existingObject(with: id)
                    theirs.setValue(Int16(4), forKey: "rating")
                    theirs.setValue(nil, forKey: "born")
                    theirs.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "born")
                    try writer.save()
                }
                return (reader, mine)
            }
            func stored(_ id: NSManagedObjectID) throws -> (rating: Int16?, born: Date?) {
                let check = container.newBackgroundContext()
                return try check.performAndWait {
                    let object = try check.existingObject(with: id)
                    return (object.value(forKey: "rating") as? Int16, object.value(forKey: "born") as? Date)
                }
            }

            let (errorContext, errorObject) = try setUpConflict(.error)
            try errorContext.performAndWait {
                XCTAssertThrowsError(try errorContext.save()) { error in
                    let nsError = error as NSError
                    XCTAssertEqual(nsError.code, NSManagedObjectMergeError, "[\(kind)]")
                    let conflicts = nsError.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
                    XCTAssertEqual(conflicts?.count, 1)
                    XCTAssertTrue(conflicts?.first?.sourceObject === errorObject)
                    XCTAssertEqual(conflicts?.first?.newVersionNumber, 2)
                    XCTAssertEqual(conflicts?.first?.oldVersionNumber, 1)
                }
            }

            let (objectTrump, objectTrumpObject) = try setUpConflict(.mergeByPropertyObjectTrump)
            try objectTrump.performAndWait { try objectTrump.save() }
            var result = try stored(objectTrumpObject.objectID)
            XCTAssertEqual(result.rating, 2, "[\(kind)] object trump: my rating wins")
            XCTAssertNotNil(result.born, "[\(kind)] object trump: their other change stays")

            let (storeTrump, storeTrumpObject) = try setUpConflict(.mergeByPropertyStoreTrump)
            try storeTrump.performAndWait { try storeTrump.save() }
            result = try stored(storeTrumpObject.objectID)
            XCTAssertEqual(result.rating, 4, "[\(kind)] store trump: their rating wins")

            let (overwrite, overwriteObject) = try setUpConflict(.overwrite)
            try overwrite.performAndWait { try overwrite.save() }
            result = try stored(overwriteObject.objectID)
            XCTAssertEqual(result.rating, 2, "[\(kind)] overwrite: mine wins")
            XCTAssertNil(result.born, "[\(kind)] overwrite: my whole object, their born is gone")

            let (rollback, rollbackObject) = try setUpConflict(.rollback)
            try rollback.performAndWait { try rollback.save() }
            result = try stored(rollbackObject.objectID)
            XCTAssertEqual(result.rating, 4, "[\(kind)] rollback: theirs stays")
        }
    }

    // MARK: Pending changes, rollback, reset

    func testFetchIncludesPendingChanges() {
        forEachStore { kind, container in
            let context = container.viewContext
            let ada = context.make("Author", ["name": "Ada", "rating": Int16(5)])
            let alan = context.make("Author", ["name": "Alan", "rating": Int16(1)])
            try context.save()
            context.make("Author", ["name": "Grace", "rating": Int16(5)])
            alan.setValue(Int16(5), forKey: "rating")
            context.delete(ada)
            XCTAssertEqual(names(try context.all("Author", where: "rating == 5", sortedBy: "name")), ["Alan", "Grace"], "[\(kind)]")
            let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
            request.includesPendingChanges = false
            XCTAssertEqual(Set(names(try context.fetch(request))), ["Ada", "Alan"], "[\(kind)] the store's state")
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 2)
        }
    }

    func testRollbackAndReset() {
        forEachStore { kind, container in
            let context = container.viewContext
            let ada = context.make("Author", ["name": "Ada"])
            try context.save()
            ada.setValue("Augusta", forKey: "name")
            let extra = context.make("Author", ["name": "Extra"])
            XCTAssertEqual(ada.changedValues()["name"] as? String, "Augusta")
            XCTAssertEqual(ada.committedValues(forKeys: ["name"])["name"] as? String, "Ada")
            XCTAssertTrue(ada.isUpdated)
            context.rollback()
            XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada", "[\(kind)]")
            XCTAssertNil(extra.managedObjectContext)
            XCTAssertFalse(context.hasChanges)
            context.reset()
            XCTAssertTrue(context.registeredObjects.isEmpty)
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 1)
        }
    }

    func testSubentitiesAreFetchedWithTheirParent() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.make("Book", ["title": "Plain"])
            context.make("Novel", ["title": "Story", "genre": "fiction"])
            try context.save()
            XCTAssertEqual(Set(names(try context.all("Book"), "title")), ["Plain", "Story"], "[\(kind)]")
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.includesSubentities = false
            XCTAssertEqual(names(try context.fetch(request), "title"), ["Plain"], "[\(kind)]")
        }
    }

    func testResultTypes() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.make("Author", ["name": "Ada", "rating": Int16(5)])
            context.make("Author", ["name": "Alan", "rating": Int16(5)])
            try context.save()
            let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Author")
            ids.resultType = .managedObjectIDResultType
            XCTAssertEqual(try context.fetch(ids).count, 2, "[\(kind)]")
            let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Author")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.propertiesToFetch = ["rating"]
            dictionaries.returnsDistinctResults = true
            let rows = try context.fetch(dictionaries)
            XCTAssertEqual(rows.count, 1, "[\(kind)] distinct")
            XCTAssertEqual(rows.first?["rating"] as? Int16, 5)
            let count = NSFetchRequest<NSNumber>(entityName: "Author")
            count.resultType = .countResultType
            XCTAssertEqual(try context.fetch(count).first?.intValue, 2)
        }
    }

    // MARK: Typed subclasses and lifecycle

    func testTypedSubclassIsUsedForItsEntity() {
        forEachStore { kind, container in
            let context = container.viewContext
            let author = AuthorObject(context: context)
            author.name = "Typed"
            XCTAssertEqual(author.awakeFromInsertCalls, 1)
            XCTAssertEqual(AuthorObject.entity().name, "Author")
            try context.save()
            context.reset()
            let fetched = try context.fetch(AuthorObject.fetchRequest())
            XCTAssertTrue(fetched.first is AuthorObject, "[\(kind)] fetched objects have the entity's class")
            XCTAssertEqual((fetched.first as? AuthorObject)?.name, "Typed")
        }
    }

    // MARK: Notifications and queues

    func testDidSaveNotificationCarriesTheSavedObjects() {
        forEachStore { kind, container in
            let context = container.viewContext
            let received = NotificationRecorder(name: .NSManagedObjectContextDidSave, object: context)
            let author = context.make("Author", ["name": "Ada"])
            try context.save()
            XCTAssertEqual(received.notifications.count, 1, "[\(kind)]")
            let inserted = received.notifications.first?.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>
            XCTAssertEqual(inserted, [author])
            author.setValue("Augusta", forKey: "name")
            try context.save()
            let updated = received.notifications.last?.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject>
            XCTAssertEqual(updated, [author])
        }
    }

    func testBackgroundSavesAreSeenByOtherContexts() async throws {
        for kind in StoreKind.allCases {
            let container = try kind.makeContainer()
            let background = container.newBackgroundContext()
            try await background.perform {
                for index in 0..<1000 { background.make("Author", ["name": "Author \(index)"]) }
                try background.save()
            }
            // A second private context: the main queue is not drained while an async test waits.
            let reader = container.newBackgroundContext()
            let count = try await reader.perform {
                try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author"))
            }
            XCTAssertEqual(count, 1000, "[\(kind)]")
        }
    }
}

/// Collects notifications posted while it lives.
final class NotificationRecorder: @unchecked Sendable {
    private(set) var notifications: [Notification] = []
    private var token: NSObjectProtocol?

    init(name: Notification.Name, object: AnyObject?) {
        token = NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [weak self] note in
            self?.notifications.append(note)
        }
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }
}
