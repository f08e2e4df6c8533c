import CoreData
import Foundation
import XCTest

/// Apple API that ported code calls (issue 20): faulting queries, refreshing fetches,
/// `NSFetchRequest.execute()`, the store-type spellings of the coordinator, the batch requests'
/// entity and managed-object forms, and merging models.
final class AppleAPIParityTests: XCTestCase {
    // MARK: Faulting

    /// Saves Ada with two books (Notes: three chapters in order; Engines: none) and Bob with none.
    private func seedAuthors(_ context: NSManagedObjectContext) throws -> (ada: NSManagedObjectID, books: [NSManagedObjectID], chapters: [NSManagedObjectID]) {
        let ada = context.make("Author", ["name": "Ada"])
        context.make("Author", ["name": "Bob"])
        let notes = context.make("Book", ["title": "Notes", "author": ada])
        let engines = context.make("Book", ["title": "Engines", "author": ada])
        let chapters = (1...3).map { context.make("Chapter", ["heading": "Part \($0)", "book": notes]) }
        notes.setValue(NSOrderedSet(array: chapters), forKey: "chapters")
        try context.save()
        return (ada.objectID, [notes.objectID, engines.objectID], chapters.map(\.objectID))
    }

    func testFaultingStateOfNewFetchedAndRealisedObjects() {
        forEachStore { kind, container in
            let context = container.viewContext
            let fresh = context.make("Author", ["name": "Ada"])
            XCTAssertEqual(fresh.faultingState, 0, "[\(kind)] an inserted object has its values")
            XCTAssertFalse(fresh.hasFault(forRelationshipNamed: "books"), "[\(kind)] an unsaved object's relationships are not faults")
            XCTAssertFalse(fresh.hasFault(forRelationshipNamed: "publisher"), "[\(kind)]")
            try context.save()

            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let ada = try XCTUnwrap(try reader.all("Author").first)
                XCTAssertTrue(ada.isFault, "[\(kind)]")
                XCTAssertNotEqual(ada.faultingState, 0, "[\(kind)] a fault")
                XCTAssertTrue(ada.hasFault(forRelationshipNamed: "books"), "[\(kind)] a fault's relationships are faults")
                XCTAssertTrue(ada.hasFault(forRelationshipNamed: "publisher"), "[\(kind)]")
                XCTAssertTrue(ada.isFault, "[\(kind)] asking does not fire the fault")
                XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada")
                XCTAssertEqual(ada.faultingState, 0, "[\(kind)] realised")
                reader.refresh(ada, mergeChanges: false)
                XCTAssertNotEqual(ada.faultingState, 0, "[\(kind)] refreshed into a fault")
            }
        }
    }

    func testRelationshipFaultsAndTheirObjectIDs() {
        forEachStore { kind, container in
            let saved = try seedAuthors(container.viewContext)
            let reader = container.newBackgroundContext()
            reader.performAndWait {
                let ada = reader.object(with: saved.ada)
                XCTAssertEqual(Set(ada.objectIDs(forRelationshipNamed: "books")), Set(saved.books), "[\(kind)] from a fault")
                XCTAssertTrue(ada.hasFault(forRelationshipNamed: "books"), "[\(kind)] the relationship fault did not fire")
                for book in saved.books {
                    XCTAssertNil(reader.registeredObject(for: book), "[\(kind)] no destination object was made")
                }
                XCTAssertEqual(ada.objectIDs(forRelationshipNamed: "publisher"), [], "[\(kind)] a nil to-one")

                let books = ada.value(forKey: "books") as? Set<NSManagedObject> ?? []
                XCTAssertEqual(books.count, 2, "[\(kind)]")
                XCTAssertFalse(ada.hasFault(forRelationshipNamed: "books"), "[\(kind)] read: no longer a fault, though its books are faults")
                XCTAssertTrue(books.allSatisfy(\.isFault), "[\(kind)]")

                let notes = reader.object(with: saved.books[0])
                XCTAssertEqual(notes.objectIDs(forRelationshipNamed: "chapters"), saved.chapters, "[\(kind)] an ordered relationship keeps its order")
                XCTAssertEqual(notes.objectIDs(forRelationshipNamed: "author"), [saved.ada], "[\(kind)] a to-one")
                XCTAssertFalse(notes.hasFault(forRelationshipNamed: "author"), "[\(kind)] its destination is in memory")

                // Unsaved changes are part of the answer.
                let draft = reader.make("Book", ["title": "Draft"])
                draft.setValue(ada, forKey: "author")
                let ids = ada.objectIDs(forRelationshipNamed: "books")
                XCTAssertEqual(ids.count, 3, "[\(kind)]")
                XCTAssertTrue(ids.contains(draft.objectID) && draft.objectID.isTemporaryID, "[\(kind)] the new book's temporary ID")
            }

            let other = container.newBackgroundContext()
            try other.performAndWait {
                let notes = try XCTUnwrap(try other.all("Book", where: "title == %@", "Notes").first)
                XCTAssertEqual(notes.value(forKey: "title") as? String, "Notes")
                XCTAssertTrue(notes.hasFault(forRelationshipNamed: "author"), "[\(kind)] Ada is not in memory")
                XCTAssertEqual(notes.objectIDs(forRelationshipNamed: "author"), [saved.ada], "[\(kind)]")
                XCTAssertNil(other.registeredObject(for: saved.ada), "[\(kind)] asking for the ID made no object")
                XCTAssertTrue(notes.hasFault(forRelationshipNamed: "author"), "[\(kind)]")
                // Kept in a variable: a context that does not retain its objects lets Ada go otherwise.
                let ada = other.object(with: saved.ada)
                _ = ada.value(forKey: "name")
                XCTAssertFalse(notes.hasFault(forRelationshipNamed: "author"), "[\(kind)] Ada's values are in memory now")
                withExtendedLifetime(ada) {}
            }

            let prefetching = container.newBackgroundContext()
            try prefetching.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
                request.predicate = NSPredicate(format: "name == 'Ada'")
                request.relationshipKeyPathsForPrefetching = ["books"]
                let ada = try XCTUnwrap(try prefetching.fetch(request).first)
                _ = ada.value(forKey: "name")
                XCTAssertFalse(ada.hasFault(forRelationshipNamed: "books"), "[\(kind)] prefetched books cost no store read")
            }
        }
    }

    func testObjectIDsInAChildContext() {
        forEachStore { kind, container in
            let saved = try seedAuthors(container.viewContext)
            let child = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
            child.parent = container.viewContext
            let ada = child.object(with: saved.ada)
            XCTAssertEqual(Set(ada.objectIDs(forRelationshipNamed: "books")), Set(saved.books), "[\(kind)]")
            XCTAssertTrue(ada.hasFault(forRelationshipNamed: "books"), "[\(kind)]")
            XCTAssertEqual((ada.value(forKey: "books") as? Set<NSManagedObject>)?.count, 2, "[\(kind)]")
            XCTAssertFalse(ada.hasFault(forRelationshipNamed: "books"), "[\(kind)]")
        }
    }

    // MARK: shouldRefreshRefetchedObjects

    func testRefetchKeepsValuesUnlessAskedToRefresh() {
        forEachStore { kind, container in
            let context = container.viewContext
            context.make("Author", ["name": "Ada", "rating": Int16(1)])
            context.make("Author", ["name": "Bob", "rating": Int16(2)])
            try context.save()

            let reader = container.newBackgroundContext()
            let writer = container.newBackgroundContext()
            func write(_ ratings: [String: Int16]) throws {
                try writer.performAndWait {
                    for author in try writer.all("Author") {
                        author.setValue(ratings[author.value(forKey: "name") as? String ?? ""], forKey: "rating")
                    }
                    try writer.save()
                }
            }
            try reader.performAndWait {
                let authors = try reader.all("Author", sortedBy: "name")
                XCTAssertEqual(authors.map { $0.value(forKey: "rating") as? Int16 }, [1, 2], "[\(kind)]")
                try write(["Ada": 4, "Bob": 5])
                let bob = authors[1]
                bob.setValue("Bobby", forKey: "name")

                let plain = NSFetchRequest<NSManagedObject>(entityName: "Author")
                plain.sortDescriptors = [NSSortDescriptor(key: "rating", ascending: true)]
                XCTAssertFalse(plain.shouldRefreshRefetchedObjects, "off by default")
                _ = try reader.fetch(plain)
                XCTAssertEqual(authors.map { $0.value(forKey: "rating") as? Int16 }, [1, 2], "[\(kind)] a refetch keeps the values in memory")

                let refreshing = NSFetchRequest<NSManagedObject>(entityName: "Author")
                refreshing.shouldRefreshRefetchedObjects = true
                let fetched = try reader.fetch(refreshing)
                XCTAssertEqual(Set(fetched.map(ObjectIdentifier.init)), Set(authors.map(ObjectIdentifier.init)), "[\(kind)] the same objects")
                XCTAssertEqual(authors.map { $0.value(forKey: "rating") as? Int16 }, [4, 5], "[\(kind)] the store's current values")
                XCTAssertEqual(bob.value(forKey: "name") as? String, "Bobby", "[\(kind)] the unsaved change survives")
                XCTAssertTrue(bob.hasChanges && reader.updatedObjects.contains(bob), "[\(kind)] and is still to be saved")
                XCTAssertFalse(authors[0].hasChanges, "[\(kind)]")
                XCTAssertEqual(bob.committedValues(forKeys: ["rating"])["rating"] as? Int16, 5, "[\(kind)] the saved values are the store's")

                // Identities only: the objects are read again from the store.
                try write(["Ada": 0, "Bob": 3])
                refreshing.includesPropertyValues = false
                _ = try reader.fetch(refreshing)
                XCTAssertEqual(authors.map { $0.value(forKey: "rating") as? Int16 }, [0, 3], "[\(kind)] without property values")
                XCTAssertEqual(bob.value(forKey: "name") as? String, "Bobby", "[\(kind)]")
                try reader.save()
            }
            try writer.performAndWait {
                writer.reset()
                XCTAssertEqual(Set(names(try writer.all("Author"))), ["Ada", "Bobby"], "[\(kind)]")
            }
        }
    }

    // MARK: NSFetchRequest.execute()

    func testExecuteRunsInTheContextWhoseBlockIsRunning() async throws {
        let container = try StoreKind.inMemory.makeContainer()
        let background = container.newBackgroundContext()
        let other = container.newBackgroundContext()
        try background.performAndWait {
            background.make("Author", ["name": "Ada"])
            background.make("Author", ["name": "Bob"])
            try background.save()
        }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]

        XCTAssertThrowsError(try request.execute(), "outside any block") { error in
            XCTAssertEqual((error as NSError).code, NSCoreDataError)
        }
        try background.performAndWait {
            let authors = try request.execute()
            XCTAssertEqual(names(authors), ["Ada", "Bob"])
            XCTAssertTrue(authors.allSatisfy { $0.managedObjectContext === background })
            try other.performAndWait {
                XCTAssertTrue(try request.execute().allSatisfy { $0.managedObjectContext === other }, "the innermost block's context")
            }
            XCTAssertTrue(try request.execute().allSatisfy { $0.managedObjectContext === background }, "back in the outer block")
        }
        XCTAssertThrowsError(try request.execute(), "the block is over")

        let typed = NSFetchRequest<AuthorObject>(entityName: "Author")
        let count = await background.perform { (try? typed.execute().count) ?? -1 }
        XCTAssertEqual(count, 2, "inside an asynchronous perform")
        let counted = NSFetchRequest<NSNumber>(entityName: "Author")
        counted.resultType = .countResultType
        let total = try await other.perform { try counted.execute().first?.intValue }
        XCTAssertEqual(total, 2)
    }

    // MARK: Store types

    func testCoordinatorStoreTypeSpellings() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: StoreKind.sharedModel)

        let customType = "ParityJSONAtomicStore"
        NSPersistentStoreCoordinator.registerStoreClass(JSONAtomicStore.self, forStoreType: customType)
        XCTAssertTrue(NSPersistentStoreCoordinator.registeredStoreTypes.contains(customType))
        let custom = try coordinator.addPersistentStore(
            type: NSPersistentStore.StoreType(rawValue: customType), at: folder.appendingPathComponent("custom.json"))
        XCTAssertEqual(custom.type, customType)
        try coordinator.remove(custom)
        NSPersistentStoreCoordinator.registerStoreClass(nil, forStoreType: customType)
        XCTAssertFalse(NSPersistentStoreCoordinator.registeredStoreTypes.contains(customType), "nil removes the registration")

        let url = folder.appendingPathComponent("library.store")
        let store = try coordinator.addPersistentStore(type: .binary, configuration: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.make("Author", ["name": "Ada"])
        try context.save()

        let xmlURL = folder.appendingPathComponent("library.xml")
        let xml = try coordinator.migratePersistentStore(store, to: xmlURL, options: nil, type: .xml)
        XCTAssertEqual(xml.type, NSXMLStoreType)
        try coordinator.remove(xml)

        try NSPersistentStoreCoordinator.setMetadata(["Owner": "Ada"], type: .binary, at: url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .binary, at: url)
        XCTAssertEqual(metadata["Owner"] as? String, "Ada")
        XCTAssertNotNil(metadata[NSStoreUUIDKey], "the store's own keys are kept")

        let copyURL = folder.appendingPathComponent("copy.store")
        try coordinator.replacePersistentStore(at: copyURL, destinationOptions: nil, withPersistentStoreFrom: url, sourceOptions: nil, type: .binary)
        XCTAssertEqual(try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .binary, at: copyURL)["Owner"] as? String, "Ada")

        try coordinator.destroyPersistentStore(at: url, type: .binary, options: nil)
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path))
        XCTAssertThrowsError(try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .binary, at: url))
    }

    func testConcurrencyTypeByItsObjectiveCName() {
        let kinds: [NSManagedObjectContextConcurrencyType] = [.confinementConcurrencyType, .privateQueueConcurrencyType, .mainQueueConcurrencyType]
        XCTAssertEqual(kinds.map(\.rawValue), [0, 1, 2], "Apple's raw values")
        let context = NSManagedObjectContext(concurrencyType: NSManagedObjectContextConcurrencyType.privateQueueConcurrencyType)
        XCTAssertEqual(context.concurrencyType, .privateQueueConcurrencyType)
    }

    // MARK: Batch requests

    func testBatchRequestsMadeWithAnEntity() {
        forEachStore { kind, container in
            let context = container.viewContext
            let author = try XCTUnwrap(container.managedObjectModel.entitiesByName["Author"])
            var made = 0
            var classes: [String] = []
            let insert = NSBatchInsertRequest(entity: author, managedObjectHandler: { object in
                guard made < 4 else { return true }
                classes.append(String(describing: type(of: object)))
                object.setValue("Author \(made)", forKey: "name")
                if made < 3 { object.setValue(Int16(made), forKey: "rating") }
                made += 1
                return false
            })
            XCTAssertTrue(insert.entity === author, "[\(kind)]")
            XCTAssertEqual(insert.entityName, "Author", "[\(kind)]")
            insert.resultType = .objectIDs
            let ids = (try context.execute(insert) as? NSBatchInsertResult)?.result as? [NSManagedObjectID] ?? []
            XCTAssertEqual(ids.count, 4, "[\(kind)] the object the handler stopped on is not inserted")
            XCTAssertEqual(Set(classes), ["AuthorObject"], "[\(kind)] objects of the entity's class")
            let authors = try context.all("Author", sortedBy: "name")
            XCTAssertEqual(names(authors), ["Author 0", "Author 1", "Author 2", "Author 3"], "[\(kind)]")
            XCTAssertEqual(authors.map { $0.value(forKey: "rating") as? Int16 }, [0, 1, 2, 3], "[\(kind)] an unset attribute gets its default")
            XCTAssertTrue(context.insertedObjects.isEmpty, "[\(kind)] the filled objects belong to no context")

            var pending = ["Dora", "Eve"]
            let dictionaries = NSBatchInsertRequest(entity: author, dictionaryHandler: { dictionary in
                guard let next = pending.popLast() else { return true }
                dictionary["name"] = next
                return false
            })
            _ = try context.execute(dictionaries)
            let byName = NSBatchInsertRequest(entityName: "Author", managedObjectHandler: { _ in true })
            XCTAssertNil(byName.entity, "[\(kind)]")
            _ = try context.execute(byName)
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 6, "[\(kind)]")

            let update = NSBatchUpdateRequest(entity: author)
            XCTAssertEqual(update.entityName, "Author")
            update.predicate = NSPredicate(format: "rating == 3")
            update.propertiesToUpdate = ["rating": Int16(5)]
            update.resultType = .updatedObjectsCountResultType
            XCTAssertEqual((try context.execute(update) as? NSBatchUpdateResult)?.result as? Int, 3, "[\(kind)] Author 3, Dora and Eve")
        }
    }

    // MARK: Merging models

    /// Model pieces: a Library model (Author 1—* Book) and a Shelf model (Shelf), built in code.
    private func libraryModel(withBorn: Bool = false) -> NSManagedObjectModel {
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        var authorProperties: [NSPropertyDescription] = [name]
        if withBorn {
            let born = NSAttributeDescription()
            born.name = "born"
            born.attributeType = .dateAttributeType
            authorProperties.append(born)
        }
        let books = NSRelationshipDescription()
        books.name = "books"
        books.maxCount = 0
        books.deleteRule = .cascadeDeleteRule
        let author = NSRelationshipDescription()
        author.name = "author"
        author.maxCount = 1
        let authorEntity = NSEntityDescription()
        authorEntity.name = "Writer"
        authorEntity.properties = authorProperties + [books]
        authorEntity.uniquenessConstraints = [[name]]
        let title = NSAttributeDescription()
        title.name = "title"
        title.attributeType = .stringAttributeType
        let bookEntity = NSEntityDescription()
        bookEntity.name = "Volume"
        bookEntity.properties = [title, author]
        books.destinationEntity = bookEntity
        books.inverseRelationship = author
        author.destinationEntity = authorEntity
        author.inverseRelationship = books
        let model = NSManagedObjectModel()
        model.entities = [authorEntity, bookEntity]
        model.setEntities([authorEntity, bookEntity], forConfigurationName: "Main")
        model.versionIdentifiers = [withBorn ? "2" : "1"]
        return model
    }

    private func shelfModel() -> NSManagedObjectModel {
        let label = NSAttributeDescription()
        label.name = "label"
        label.attributeType = .stringAttributeType
        let shelf = NSEntityDescription()
        shelf.name = "Shelf"
        shelf.properties = [label]
        let model = NSManagedObjectModel()
        model.entities = [shelf]
        model.setEntities([shelf], forConfigurationName: "Main")
        let template = NSFetchRequest<NSFetchRequestResult>(entityName: "Shelf")
        template.predicate = NSPredicate(format: "label == $LABEL")
        model.setFetchRequestTemplate(template, forName: "ShelfLabelled")
        return model
    }

    func testModelByMergingCopiesEveryEntity() throws {
        let library = libraryModel()
        let shelves = shelfModel()
        let merged = try XCTUnwrap(NSManagedObjectModel(byMerging: [library, shelves]))
        XCTAssertEqual(merged.entities.compactMap(\.name), ["Writer", "Volume", "Shelf"])
        XCTAssertEqual(merged.configurations, ["Main"])
        XCTAssertEqual(merged.entities(forConfigurationName: "Main")?.compactMap(\.name), ["Writer", "Volume", "Shelf"], "same-named configurations are joined")
        XCTAssertEqual(merged.versionIdentifiers, ["1"])
        XCTAssertNotNil(merged.fetchRequestTemplate(forName: "ShelfLabelled"))
        XCTAssertEqual(
            merged.entityVersionHashesByName,
            library.entityVersionHashesByName.merging(shelves.entityVersionHashesByName) { first, _ in first },
            "each copy has its original's version hash")

        let writer = try XCTUnwrap(merged.entitiesByName["Writer"])
        XCTAssertTrue(writer.managedObjectModel === merged)
        XCTAssertTrue(library.entitiesByName["Writer"]?.managedObjectModel === library, "the originals stay with their model")
        let books = try XCTUnwrap(writer.relationshipsByName["books"])
        XCTAssertTrue(books.destinationEntity === merged.entitiesByName["Volume"], "relationships lead to the copies")
        XCTAssertTrue(books.inverseRelationship === merged.entitiesByName["Volume"]?.relationshipsByName["author"])
        XCTAssertEqual(writer.uniquenessConstraintNames, [["name"]])

        XCTAssertNil(NSManagedObjectModel(byMerging: [library, libraryModel()]), "two entities named Writer")
        XCTAssertEqual(NSManagedObjectModel(byMerging: nil)?.entities.count, 0)

        // The merged model is a model like any other.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: merged)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let ada = context.make("Writer", ["name": "Ada"])
        context.make("Volume", ["title": "Notes", "author": ada])
        context.make("Shelf", ["label": "Top"])
        try context.save()
        context.reset()
        let found = try XCTUnwrap(try context.all("Writer").first)
        XCTAssertEqual(((found.value(forKey: "books") as? Set<NSManagedObject>) ?? []).map { $0.value(forKey: "title") as? String }, ["Notes"])
    }

    func testMergingTheTestModelKeepsInheritanceFetchedPropertiesAndTemplates() throws {
        let original = TestModel.make()
        let merged = try XCTUnwrap(NSManagedObjectModel(byMerging: [original]))
        XCTAssertEqual(merged.entityVersionHashesByName, original.entityVersionHashesByName)
        XCTAssertTrue(merged.entitiesByName["Novel"]?.superentity === merged.entitiesByName["Book"])
        XCTAssertEqual(merged.entitiesByName["Novel"]?.attributesByName["title"]?.isOptional, false, "inherited")
        XCTAssertNotNil(merged.entitiesByName["Author"]?.propertiesByName["longBooks"] as? NSFetchedPropertyDescription)
        XCTAssertEqual(merged.entitiesByName["Author"]?.attributesByName["rating"]?.validationRules, [.minimumValue(0), .maximumValue(5)])
        XCTAssertEqual(merged.fetchRequestTemplate(forName: "AuthorsRatedAtLeast")?.predicate?.predicateFormat, "rating >= $MIN")
        XCTAssertTrue(merged.entitiesByName["Person"]?.relationshipsByName["spouse"]?.inverseRelationship === merged.entitiesByName["Person"]?.relationshipsByName["spouse"])
    }

    func testModelByMergingForStoreMetadataPicksTheStoresVersion() throws {
        let version1 = libraryModel()
        let version2 = libraryModel(withBorn: true)
        XCTAssertNotEqual(version1.entityVersionHashesByName, version2.entityVersionHashesByName)

        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parity-merge-\(UUID().uuidString).store")
        defer { try? FileManager.default.removeItem(at: url) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: version1)
        let store = try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url)
        try coordinator.remove(store)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSBinaryStoreType, at: url)

        let picked = try XCTUnwrap(NSManagedObjectModel(byMerging: [version2, libraryModel(), shelfModel()], forStoreMetadata: metadata))
        XCTAssertEqual(picked.entityVersionHashesByName, version1.entityVersionHashesByName, "the version the store was saved with")
        XCTAssertTrue(picked.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        XCTAssertNotNil(NSManagedObjectModel(byMerging: [libraryModel(), libraryModel()], forStoreMetadata: metadata), "one version given twice")
        XCTAssertNil(NSManagedObjectModel(byMerging: [version2], forStoreMetadata: metadata), "no model matches")
        XCTAssertNil(NSManagedObjectModel(byMerging: [version1], forStoreMetadata: [:]), "no version hashes")

        // A store Core Data wrote on an Apple platform records Apple's hashes.
        let appleMetadata: [String: Any] = [NSStoreModelVersionHashesKey: version1.appleEntityVersionHashesByName]
        let fromApple = try XCTUnwrap(NSManagedObjectModel(byMerging: [version2, version1], forStoreMetadata: appleMetadata))
        XCTAssertEqual(fromApple.entityVersionHashesByName, version1.entityVersionHashesByName)
        XCTAssertTrue(try XCTUnwrap(NSPersistentStoreCoordinator(managedObjectModel: fromApple).addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url)).type == NSBinaryStoreType,
                      "the picked model opens the store")
    }

    func testMergedModelFromBundlesForStoreMetadataReadsEveryVersion() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CoreDataModelTests/Fixtures/models")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parity-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let package = fixtures.appendingPathComponent("CoreDataPlus/SampleModel.xcdatamodeld")
        try FileManager.default.copyItem(at: package, to: folder.appendingPathComponent("Sample.momd"))
        let bundle = try XCTUnwrap(Bundle(url: folder))

        let versions = try XcodeModelPackage(contentsOf: package)
        XCTAssertEqual(versions.versionNames.count, 3)
        for name in versions.versionNames {
            let version = try versions.loadModel(version: name)
            let metadata: [String: Any] = [NSStoreModelVersionHashesKey: version.entityVersionHashesByName]
            let model = try XCTUnwrap(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: metadata), name)
            XCTAssertEqual(model.entityVersionHashesByName, version.entityVersionHashesByName, name)
        }
        let current = try XCTUnwrap(NSManagedObjectModel.mergedModel(from: [bundle]))
        XCTAssertEqual(current.entityVersionHashesByName, try versions.loadCurrentModel().entityVersionHashesByName)
        XCTAssertNil(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: [NSStoreModelVersionHashesKey: ["Car": Data([1, 2, 3])]]))
    }
}
