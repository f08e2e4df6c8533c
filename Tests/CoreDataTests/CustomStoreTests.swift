import CoreData
import Foundation
import XCTest

/// Stores users write with Apple's extension points: an `NSIncrementalStore`
/// (``DictionaryIncrementalStore``) and an `NSAtomicStore` (``JSONAtomicStore``), registered
/// with `registerStoreClass(_:type:)` and opened by type name. The conformance scenarios run over
/// both too (``StoreKind``); these check what only a custom store shows: which of its methods
/// the framework calls, and when.
final class CustomStoreTests: XCTestCase {
    private func container(_ type: String, url: URL = temporaryStoreURL()) throws -> NSPersistentContainer {
        let container = NSPersistentContainer(name: "Custom", managedObjectModel: StoreKind.sharedModel)
        let description = NSPersistentStoreDescription()
        description.type = type
        description.url = url
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        return container
    }

    // MARK: NSIncrementalStore

    func testIncrementalStoreSavesFetchesAndFulfilsFaultsThroughTheSubclass() throws {
        let container = try container(DictionaryIncrementalStore.storeType)
        let store = try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first as? DictionaryIncrementalStore)
        XCTAssertEqual(store.type, DictionaryIncrementalStore.storeType)
        XCTAssertEqual(store.metadata[NSStoreTypeKey] as? String, DictionaryIncrementalStore.storeType)
        XCTAssertEqual(store.metadata[NSStoreUUIDKey] as? String, store.identifier, "the store's identifier is its metadata UUID")

        let context = container.viewContext
        let ada = context.make("Author", ["name": "Ada", "rating": Int16(5)])
        let alan = context.make("Author", ["name": "Alan", "rating": Int16(2)])
        let notes = context.make("Book", ["title": "Notes", "pages": Int32(120), "author": ada])
        context.make("Book", ["title": "Engines", "pages": Int32(400), "author": ada])
        context.make("Book", ["title": "Computing", "pages": Int32(30), "author": alan])
        try context.save()
        XCTAssertEqual(store.saveRequests, 1, "one save request per save")
        XCTAssertEqual(store.recordCount("Author"), 2)
        XCTAssertEqual(store.recordCount("Book"), 3)
        XCTAssertFalse(ada.objectID.isTemporaryID, "obtainPermanentIDs(for:) named the new objects")
        XCTAssertNotNil(store.referenceObject(for: ada.objectID) as? String)
        XCTAssertEqual(store.newObjectID(for: ada.entity, referenceObject: store.referenceObject(for: ada.objectID)), ada.objectID)
        XCTAssertEqual(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: notes.objectID.uriRepresentation()), notes.objectID)

        // The saving context holds the objects it saved under their permanent IDs.
        XCTAssertEqual(store.registrations[ada.objectID], 1, "the view context registered what it saved")
        let beforeReader = store.registrations
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.predicate = NSPredicate(format: "author.name == %@ AND pages > %d", "Ada", 100)
            request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
            let books = try reader.fetch(request)
            XCTAssertEqual(books.count, 2)
            XCTAssertTrue(books.allSatisfy(\.isFault), "fetched objects are faults until touched")
            XCTAssertTrue(store.registered.isSuperset(of: books.map(\.objectID)), "managedObjectContextDidRegisterObjects(with:) saw them")

            let callsBefore = store.newValuesCalls
            XCTAssertEqual(books.map { $0.value(forKey: "title") as? String }, ["Engines", "Notes"])
            XCTAssertEqual(store.newValuesCalls, callsBefore + 2, "each fault reads its node once")
            _ = books[0].value(forKey: "pages")
            XCTAssertEqual(store.newValuesCalls, callsBefore + 2, "a fulfilled object reads no more")

            let author = try XCTUnwrap(books[0].value(forKey: "author") as? NSManagedObject, "to-one from the node")
            XCTAssertEqual(author.value(forKey: "name") as? String, "Ada")
            XCTAssertFalse(store.relationshipCalls.contains("books"))
            let authorsBooks = try XCTUnwrap(author.value(forKey: "books") as? Set<NSManagedObject>)
            XCTAssertEqual(Set(authorsBooks.map(\.objectID)), Set(books.map(\.objectID)), "to-many through newValue(forRelationship:…)")
            XCTAssertTrue(store.relationshipCalls.contains("books"))

            XCTAssertEqual(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 2, "count result type")
            let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Author")
            ids.resultType = .managedObjectIDResultType
            XCTAssertEqual(Set(try reader.fetch(ids)), [ada.objectID, alan.objectID])
            reader.reset()
        }
        // The view context still holds Ada and Alan; the reader holds nothing any more.
        XCTAssertEqual(store.registrations, beforeReader, "reset unregistered the reader's objects")
        XCTAssertEqual(store.unbalancedUnregistrations, 0, "nothing was unregistered twice")

        // A context that goes away lets go of its objects too.
        do {
            let passing = container.newBackgroundContext()
            try passing.performAndWait {
                let books = try passing.fetch(NSFetchRequest<NSManagedObject>(entityName: "Book"))
                XCTAssertEqual(books.count, 3)
                XCTAssertEqual(store.registrations[notes.objectID], 2, "the view context and this one")
            }
        }
        XCTAssertEqual(store.registrations, beforeReader, "the released context unregistered its objects")
        XCTAssertEqual(store.unbalancedUnregistrations, 0)

        // Updates: inverses in step, saved as updated objects with their changes.
        notes.setValue(alan, forKey: "author")
        try context.save()
        XCTAssertEqual(store.saveRequests, 2)
        let check = container.newBackgroundContext()
        try check.performAndWait {
            let alanThere = try check.existingObject(with: alan.objectID)
            XCTAssertEqual(Set(names(Array((alanThere.value(forKey: "books") as? Set<NSManagedObject>) ?? []), "title")), ["Computing", "Notes"])
        }

        // Deletes: the cascade runs in the context, the store gets deleted objects.
        context.delete(ada)
        try context.save()
        XCTAssertEqual(store.recordCount("Author"), 1)
        XCTAssertEqual(store.recordCount("Book"), 2, "Ada's remaining book went with her (cascade)")
        XCTAssertThrowsError(try context.existingObject(with: ada.objectID)) { error in
            XCTAssertEqual((error as NSError).code, NSManagedObjectReferentialIntegrityError)
        }
    }

    /// Every context that registers an object with the store unregisters it exactly once, on
    /// every path by which an object leaves a context.
    func testIncrementalStoreRegistrationsStayBalanced() throws {
        let container = try container(DictionaryIncrementalStore.storeType)
        let store = try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first as? DictionaryIncrementalStore)
        do {
            let context = container.newBackgroundContext()
            let watcher = container.newBackgroundContext()
            try context.performAndWait {
                // A permanent ID obtained before the save, then the object deleted unsaved.
                let draft = context.make("Author", ["name": "Draft", "rating": Int16(1)])
                try context.obtainPermanentIDs(for: [draft])
                XCTAssertEqual(store.registrations[draft.objectID], 1, "obtainPermanentIDs(for:) registers")
                context.delete(draft)
                XCTAssertNil(store.registrations[draft.objectID], "deleting the unsaved object lets go of its ID")

                // A permanent ID obtained before the save, then the insert rolled back.
                let other = context.make("Author", ["name": "Other", "rating": Int16(1)])
                try context.obtainPermanentIDs(for: [other])
                let otherID = other.objectID
                context.rollback()
                XCTAssertNil(store.registrations[otherID], "rolling the insert back lets go of its ID")

                let ada = context.make("Author", ["name": "Ada", "rating": Int16(5)])
                let notes = context.make("Book", ["title": "Notes", "pages": Int32(120), "author": ada])
                let engines = context.make("Book", ["title": "Engines", "pages": Int32(400), "author": ada])
                try context.save()
                XCTAssertEqual(store.registrations[notes.objectID], 1)

                // A child deletes an object and saves into the context; then the child goes away
                // (letting go of the objects the delete rules brought in).
                do {
                    let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                    child.parent = context
                    try child.performAndWait {
                        child.delete(try child.existingObject(with: notes.objectID))
                        XCTAssertEqual(store.registrations[notes.objectID], 2, "the context and its child")
                        try child.save()
                        XCTAssertEqual(store.registrations[notes.objectID], 1, "the child let go of what it deleted")
                    }
                }
                XCTAssertEqual(store.registrations[engines.objectID], 1, "the child went away")
                try context.save()
                XCTAssertNil(store.registrations[notes.objectID], "the saved delete let go of it")

                // Another context merges a delete.
                let enginesID = engines.objectID
                try watcher.performAndWait { _ = try watcher.existingObject(with: enginesID) }
                XCTAssertEqual(store.registrations[enginesID], 2)
                context.delete(engines)
                try context.save()
                NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: [enginesID]], into: [watcher])
                XCTAssertNil(store.registrations[enginesID], "the merged delete let go of it")
            }
        }
        XCTAssertEqual(store.registrations, [:], "contexts that went away let go of everything")
        XCTAssertEqual(store.unbalancedUnregistrations, 0, "nothing was let go of twice")
    }

    func testIncrementalStoreVersionsDriveOptimisticLocking() throws {
        let container = try container(DictionaryIncrementalStore.storeType)
        let writer = container.newBackgroundContext()
        let reader = container.newBackgroundContext()
        let id = try writer.performAndWait { () throws -> NSManagedObjectID in
            let author = writer.make("Author", ["name": "Ada", "rating": Int16(1)])
            try writer.save()
            return author.objectID
        }
        try reader.performAndWait { try reader.existingObject(with: id).setValue(Int16(2), forKey: "rating") }
        try writer.performAndWait {
            try writer.existingObject(with: id).setValue(Int16(4), forKey: "rating")
            try writer.save()
        }
        try reader.performAndWait {
            XCTAssertThrowsError(try reader.save()) { error in
                XCTAssertEqual((error as NSError).code, NSManagedObjectMergeError, "the node's version moved on")
            }
        }
    }

    func testIncrementalStoreErrorsReachTheCallerUnchanged() throws {
        let container = try container(DictionaryIncrementalStore.storeType)
        let store = try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first as? DictionaryIncrementalStore)
        store.failFetchesWith = NSError(domain: "Backend", code: 503, userInfo: [NSLocalizedDescriptionKey: "service unavailable"])
        XCTAssertThrowsError(try container.viewContext.fetch(NSFetchRequest<NSManagedObject>(entityName: "Author"))) { error in
            let nsError = error as NSError
            XCTAssertEqual(nsError.domain, "Backend")
            XCTAssertEqual(nsError.code, 503)
            XCTAssertEqual(nsError.localizedDescription, "service unavailable")
        }
    }

    func testIncrementalStoreIntegerReferencesMakeStableURIs() throws {
        let container = try container(DictionaryIncrementalStore.storeType)
        let store = try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first as? DictionaryIncrementalStore)
        let entity = try XCTUnwrap(StoreKind.sharedModel.entitiesByName["Author"])
        let id = store.newObjectID(for: entity, referenceObject: 42)
        XCTAssertEqual(id.uriRepresentation().absoluteString, "x-coredata://\(store.identifier)/Author/p42")
        XCTAssertEqual(store.referenceObject(for: id) as? Int, 42)
        XCTAssertEqual(store.newObjectID(for: entity, referenceObject: 42), id, "the same reference makes the same ID")
        XCTAssertNotEqual(store.newObjectID(for: entity, referenceObject: "42"), id, "a string is another reference")
    }

    // MARK: NSAtomicStore

    func testAtomicStoreRoundTripsThroughItsFile() throws {
        let url = temporaryStoreURL()
        do {
            let container = try container(JSONAtomicStore.storeType, url: url)
            let coordinator = container.persistentStoreCoordinator
            let store = try XCTUnwrap(coordinator.persistentStores.first as? JSONAtomicStore)
            var metadata = coordinator.metadata(for: store)
            metadata["AppVersion"] = "2.1"
            coordinator.setMetadata(metadata, for: store)

            let context = container.viewContext
            let ada = context.make("Author", ["name": "Ada", "rating": Int16(5), "born": Date(timeIntervalSinceReferenceDate: 1000)])
            let book = context.make("Book", ["title": "Notes", "pages": Int32(120), "author": ada, "id": UUID()])
            let chapters = (1...3).map { context.make("Chapter", ["heading": "Chapter \($0)"]) }
            book.setValue(NSOrderedSet(array: chapters.reversed()), forKey: "chapters")
            let tag = context.make("Tag", ["label": "classic"])
            book.setValue(Set([tag]), forKey: "tags")
            context.make("Author", ["name": "Alan", "rating": Int16(2)])
            try context.save()
            XCTAssertEqual(store.saveCalls, 1)
            XCTAssertEqual(store.cacheNodes().count, 7, "one node per object")
            XCTAssertNotNil(store.cacheNode(for: ada.objectID))
            XCTAssertEqual(store.cacheNode(for: ada.objectID)?.value(forKey: "name") as? String, "Ada")

            context.delete(tag)
            try context.save()
            XCTAssertEqual(store.removedNodes, 1, "willRemoveCacheNodes(_:) saw the deleted node")
            XCTAssertEqual(store.cacheNodes().count, 6)
        }

        // A new coordinator reads everything back from the file.
        let reopened = try container(JSONAtomicStore.storeType, url: url)
        let store = try XCTUnwrap(reopened.persistentStoreCoordinator.persistentStores.first as? JSONAtomicStore)
        XCTAssertEqual(store.metadata["AppVersion"] as? String, "2.1", "metadata saved with the store")
        XCTAssertNotNil(store.metadata[NSStoreModelVersionHashesKey], "the model's version hashes were recorded")
        let context = reopened.viewContext
        XCTAssertEqual(names(try context.all("Author", where: "rating >= %d", 3)), ["Ada"])
        let book = try XCTUnwrap(try context.all("Book", where: "author.name == %@", "Ada").first)
        XCTAssertEqual(book.value(forKey: "pages") as? Int32, 120)
        XCTAssertNotNil(book.value(forKey: "id") as? UUID)
        let chapters = try XCTUnwrap(book.value(forKey: "chapters") as? NSOrderedSet)
        XCTAssertEqual(chapters.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "heading") as? String }, ["Chapter 3", "Chapter 2", "Chapter 1"], "ordered to-many keeps its order")
        XCTAssertEqual((book.value(forKey: "tags") as? Set<NSManagedObject>)?.count, 0, "the deleted tag is gone")
        let ada = try XCTUnwrap(book.value(forKey: "author") as? NSManagedObject)
        XCTAssertEqual(ada.value(forKey: "born") as? Date, Date(timeIntervalSinceReferenceDate: 1000))
        XCTAssertEqual((ada.value(forKey: "books") as? Set<NSManagedObject>)?.count, 1, "the inverse to-many")
        XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Chapter")), 3)

        // Updates on the reopened store go through updateCacheNode(_:from:) and back to the file.
        ada.setValue(Int16(4), forKey: "rating")
        try context.save()
        let third = try container(JSONAtomicStore.storeType, url: url)
        XCTAssertEqual(try third.viewContext.all("Author", where: "name == %@", "Ada").first?.value(forKey: "rating") as? Int16, 4)
    }

    func testAtomicStoreSaveFailureLeavesTheNodesAsTheyWere() throws {
        let container = try container(JSONAtomicStore.storeType)
        let store = try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first as? JSONAtomicStore)
        let context = container.viewContext
        let ada = context.make("Author", ["name": "Ada", "rating": Int16(1)])
        try context.save()

        store.failSavesWith = NSError(domain: "Disk", code: 28, userInfo: [NSLocalizedDescriptionKey: "no space left"])
        ada.setValue(Int16(5), forKey: "rating")
        context.make("Author", ["name": "Alan"])
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as NSError).domain, "Disk")
            XCTAssertEqual((error as NSError).code, 28)
        }
        XCTAssertEqual(store.cacheNodes().count, 1, "the inserted node was taken back")
        XCTAssertEqual(store.cacheNode(for: ada.objectID)?.value(forKey: "rating") as? Int16, 1, "the updated node was put back")
        XCTAssertTrue(context.hasChanges, "the context keeps its changes")

        store.failSavesWith = nil
        try context.save()
        XCTAssertEqual(store.cacheNodes().count, 2)
        XCTAssertEqual(store.cacheNode(for: ada.objectID)?.value(forKey: "rating") as? Int16, 5)
    }

    func testAtomicStoreOpenedWithAnotherModelIsIncompatible() throws {
        let url = temporaryStoreURL()
        let first = try container(JSONAtomicStore.storeType, url: url)
        first.viewContext.make("Tag", ["label": "x"])
        try first.viewContext.save()

        let changed = TestModel.make()
        changed.entitiesByName["Tag"]?.properties.append({
            let extra = NSAttributeDescription()
            extra.name = "colour"
            extra.attributeType = .stringAttributeType
            return extra
        }())
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: changed)
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: JSONAtomicStore.storeType, configurationName: nil, at: url)) { error in
            XCTAssertEqual((error as NSError).code, NSPersistentStoreIncompatibleVersionHashError)
            XCTAssertTrue((error as NSError).localizedDescription.contains("'Tag'"), (error as NSError).localizedDescription)
        }
    }

    // MARK: Registration

    func testRegisteredTypesAndRefusals() throws {
        _ = StoreKind.sharedModel
        XCTAssertTrue(NSPersistentStoreCoordinator.registeredStoreTypes.contains(JSONAtomicStore.storeType))
        NSPersistentStoreCoordinator.registerStoreClass(BareStore.self, type: "BareStore")
        defer { NSPersistentStoreCoordinator.registerStoreClass(nil, type: "BareStore") }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: StoreKind.sharedModel)
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: "BareStore", configurationName: nil, at: nil)) { error in
            XCTAssertEqual((error as NSError).code, NSPersistentStoreInvalidTypeError)
            XCTAssertTrue((error as NSError).localizedDescription.contains("NSIncrementalStore or NSAtomicStore"))
        }
        NSPersistentStoreCoordinator.registerStoreClass(nil, type: "BareStore")
        XCTAssertFalse(NSPersistentStoreCoordinator.registeredStoreTypes.contains("BareStore"))
        XCTAssertTrue(coordinator.persistentStores.isEmpty)
    }
}

/// A store class that subclasses NSPersistentStore directly, which Core Data does not support.
private final class BareStore: NSPersistentStore, @unchecked Sendable {}

private func temporaryStoreURL() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("custom-\(UUID().uuidString).store")
}
