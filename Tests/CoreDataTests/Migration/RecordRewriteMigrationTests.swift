import CoreData
import CoreDataBinaryStore
import Foundation
import XCTest

/// The binary store's record rewrite (Formats/migration.md §5): an inferred migration between
/// binary stores that only renames, adds, removes and widens rewrites the records' bytes into
/// the new file (no log is written for it), with the same results as the row path: every value,
/// default, reference and key; a mandatory value missing fails the migration and names it; a
/// change the rewrite cannot make (to-one ↔ to-many) takes the row path.
final class RecordRewriteMigrationTests: XCTestCase {
    private func insert(_ entity: String, _ values: [String: Any], into context: NSManagedObjectContext) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    private let v1 = """
        <entity name="Author"><attribute name="name" optional="YES" attributeType="String"/><attribute name="born" optional="YES" attributeType="Integer 16"/><attribute name="gone" optional="YES" attributeType="String"/><relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/><relationship name="agent" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Agent" inverseName="clients" inverseEntity="Agent"/></entity>
        <entity name="Book"><attribute name="title" optional="YES" attributeType="String"/><attribute name="price" optional="YES" attributeType="Float"/><relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/></entity>
        <entity name="Agent"><attribute name="name" optional="YES" attributeType="String"/><relationship name="clients" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Author" inverseName="agent" inverseEntity="Author"/></entity>
        """
    /// Author renamed Writer (its `name` renamed `fullName`), `born` widened to 64 bits, `gone`
    /// removed, `verified` added with a default; Book's price widened to Double, `pages` added
    /// mandatory with a default, `title` made mandatory with a default; Agent removed.
    private let v2 = """
        <entity name="Writer" elementID="Author"><attribute name="fullName" optional="YES" attributeType="String" elementID="name"/><attribute name="born" optional="YES" attributeType="Integer 64"/><attribute name="verified" attributeType="Boolean" defaultValueString="NO"/><relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/></entity>
        <entity name="Book"><attribute name="title" attributeType="String" defaultValueString="Untitled"/><attribute name="price" optional="YES" attributeType="Double"/><attribute name="pages" attributeType="Integer 32" defaultValueString="100"/><relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Writer" inverseName="books" inverseEntity="Writer"/></entity>
        """

    func testRewriteGivesEveryValueDefaultAndReference() throws {
        let package = try MigrationFixtures.package([("Model", v1), ("Model 2", v2)])
        let url = try MigrationFixtures.folder().appendingPathComponent("Books.store")
        var uris: [String: URL] = [:]
        try MigrationFixtures.fill(url, type: NSBinaryStoreType, model: try MigrationFixtures.model(v1)) { context in
            let agent = insert("Agent", ["name": "Ann"], into: context)
            let ada = insert("Author", ["name": "Ada", "born": Int16(1815), "gone": "x", "agent": agent], into: context)
            let alan = insert("Author", ["name": "Alan"], into: context)
            let notes = insert("Book", ["title": "Notes", "price": Float(2.5), "author": ada], into: context)
            _ = insert("Book", ["author": ada], into: context)
            _ = insert("Book", ["title": "Computing", "author": alan], into: context)
            try context.obtainPermanentIDs(for: [ada, notes])
            uris["ada"] = ada.objectID.uriRepresentation()
            uris["notes"] = notes.objectID.uriRepresentation()
        }
        let current = try XCTUnwrap(NSManagedObjectModel(contentsOf: package))
        let (container, context) = try MigrationFixtures.open(url, type: NSBinaryStoreType, model: current)
        let writers = try MigrationFixtures.objects("Writer", sortedBy: "fullName", in: context)
        let books = try MigrationFixtures.objects("Book", sortedBy: "pages", in: context)
        context.performAndWait {
            XCTAssertEqual(writers.map { $0.value(forKey: "fullName") as? String }, ["Ada", "Alan"])
            XCTAssertEqual(writers.map { $0.value(forKey: "born") as? Int64 }, [1815, nil])
            XCTAssertEqual(writers.map { $0.value(forKey: "verified") as? Bool }, [false, false], "an added attribute gets its default")
            let titles = books.compactMap { $0.value(forKey: "title") as? String }.sorted()
            XCTAssertEqual(titles, ["Computing", "Notes", "Untitled"], "an empty value of an attribute made mandatory gets its default")
            XCTAssertEqual(books.map { $0.value(forKey: "pages") as? Int32 }, [100, 100, 100])
            let notes = books.first { $0.value(forKey: "title") as? String == "Notes" }
            XCTAssertEqual(notes?.value(forKey: "price") as? Double, 2.5)
            XCTAssertEqual((notes?.value(forKey: "author") as? NSManagedObject)?.value(forKey: "fullName") as? String, "Ada", "references follow the renamed entity")
            let adaBooks = ((writers.first?.value(forKey: "books") as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "title") as? String }.sorted()
            XCTAssertEqual(adaBooks, ["Notes", "Untitled"])
            XCTAssertEqual(writers.first?.objectID.uriRepresentation().path, uris["ada"]?.path.replacingOccurrences(of: "/Author/", with: "/Writer/"), "keys are kept")
            XCTAssertEqual(notes?.objectID.uriRepresentation(), uris["notes"], "URIs of unrenamed entities are unchanged")
        }
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
    }

    /// Persistent history survives the rewrite: its transactions keep their numbers (so saved
    /// tokens stay valid), and numbering goes on after them.
    func testRewriteKeepsPersistentHistory() throws {
        let package = try MigrationFixtures.package([("Model", v1), ("Model 2", v2)])
        let url = try MigrationFixtures.folder().appendingPathComponent("History.store")
        let tracking: [AnyHashable: Any] = [NSPersistentHistoryTrackingKey: true]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try MigrationFixtures.model(v1))
        let store = try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: tracking)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "v1"
        try context.performAndWait {
            _ = insert("Book", ["title": "Notes"], into: context)
            try context.save()
            _ = insert("Author", ["name": "Ada"], into: context)
            try context.save()
        }
        let token = try XCTUnwrap(coordinator.currentPersistentHistoryToken(fromStores: nil))
        try coordinator.remove(store)

        let container = NSPersistentContainer(name: "Migrated", managedObjectModel: try XCTUnwrap(NSManagedObjectModel(contentsOf: package)))
        let description = NSPersistentStoreDescription(url: url)
        description.type = NSBinaryStoreType
        description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey)
        container.persistentStoreDescriptions = [description]
        var failure: Error?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        let view = container.viewContext
        let all = try XCTUnwrap((try view.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        XCTAssertEqual(all.map(\.transactionNumber), [1, 2])
        XCTAssertEqual(all.map(\.author), ["v1", "v1"])
        XCTAssertEqual(all.first?.changes?.map { $0.changedObjectID.entity.name }, ["Book"])
        view.transactionAuthor = "v2"
        _ = insert("Book", ["title": "After"], into: view)
        try view.save()
        let after = try XCTUnwrap((try view.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token)) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        XCTAssertEqual(after.map(\.transactionNumber), [3], "a token from before the migration still works")
        XCTAssertEqual(after.map(\.author), ["v2"])
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
    }

    /// The rewrite writes the new file directly: the manager's destination has no log, where the
    /// row path's destination (a store it saved into) would have one.
    func testManagerRewritesRecordsBetweenBinaryStores() throws {
        let folder = try MigrationFixtures.folder()
        let source = folder.appendingPathComponent("v1.store")
        let from = try MigrationFixtures.model(v1)
        let to = try MigrationFixtures.model(v2)
        try MigrationFixtures.fill(source, type: NSBinaryStoreType, model: from) { context in
            for index in 0..<2_500 { _ = insert("Book", ["title": "b\(index)"], into: context) }
        }
        let manager = NSMigrationManager(sourceModel: from, destinationModel: to)
        let destination = folder.appendingPathComponent("v2.store")
        try manager.migrateStore(
            from: source, sourceType: NSBinaryStoreType, with: try NSMappingModel.inferredMappingModel(forSourceModel: from, destinationModel: to),
            toDestinationURL: destination, destinationType: NSBinaryStoreType)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path + "-wal"), "no log: the records were rewritten into the file")
        let verification = BinaryStore.verify(path: destination.path)
        XCTAssertEqual(verification.issues, [], "every page, record and index entry of the rewritten file checks out")
        XCTAssertEqual(manager.migrationProgress, 1)
        let (container, context) = try MigrationFixtures.open(destination, type: NSBinaryStoreType, model: to)
        XCTAssertEqual(try MigrationFixtures.objects("Book", sortedBy: "title", in: context).count, 2_500)
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
    }

    func testMissingMandatoryValueFailsAndNamesIt() throws {
        let from = try MigrationFixtures.model(#"<entity name="Item"><attribute name="name" optional="YES" attributeType="String"/></entity>"#)
        let to = try MigrationFixtures.model(#"<entity name="Item"><attribute name="name" attributeType="String"/></entity>"#)
        let folder = try MigrationFixtures.folder()
        let source = folder.appendingPathComponent("v1.store")
        try MigrationFixtures.fill(source, type: NSBinaryStoreType, model: from) { context in
            _ = insert("Item", ["name": "a"], into: context)
            _ = insert("Item", [:], into: context)
        }
        let mapping = NSMappingModel()
        let entity = NSEntityMapping()
        entity.name = "ItemToItem"
        entity.mappingType = .copyEntityMappingType
        entity.sourceEntityName = "Item"
        entity.destinationEntityName = "Item"
        mapping.entityMappings = [entity]
        let destination = folder.appendingPathComponent("v2.store")
        XCTAssertThrowsError(try NSMigrationManager(sourceModel: from, destinationModel: to).migrateStore(
            from: source, sourceType: NSBinaryStoreType, with: mapping, toDestinationURL: destination, destinationType: NSBinaryStoreType)
        ) { error in
            let error = error as NSError
            XCTAssertEqual(error.code, NSMigrationError)
            XCTAssertEqual(error.userInfo[NSValidationKeyErrorKey] as? String, "name")
            XCTAssertTrue(error.localizedDescription.contains("Item.name is mandatory, and the object Item "), error.localizedDescription)
            XCTAssertTrue(error.localizedDescription.hasSuffix("has no value for it"), error.localizedDescription)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "a failed rewrite leaves no file")
    }

    /// More references than a one-byte count holds, and a reference a No Action delete left
    /// behind: the first are all kept, the second dropped, as the row path does.
    func testLongReferenceListsAndDanglingReferences() throws {
        let from = try MigrationFixtures.model("""
            <entity name="Shelf"><relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/><relationship name="favourite" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Book"/></entity>
            <entity name="Book"><attribute name="title" optional="YES" attributeType="String"/><relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/></entity>
            """)
        let to = try MigrationFixtures.model("""
            <entity name="Shelf"><attribute name="label" optional="YES" attributeType="String"/><relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/><relationship name="favourite" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Book"/></entity>
            <entity name="Book"><attribute name="title" optional="YES" attributeType="String"/><relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/></entity>
            """)
        let folder = try MigrationFixtures.folder()
        let source = folder.appendingPathComponent("v1.store")
        try MigrationFixtures.fill(source, type: NSBinaryStoreType, model: from) { context in
            let shelf = insert("Shelf", [:], into: context)
            for index in 0..<300 { _ = insert("Book", ["title": String(format: "b%03d", index), "shelf": shelf], into: context) }
            shelf.setValue(insert("Book", ["title": "gone"], into: context), forKey: "favourite")
        }
        try MigrationFixtures.fill(source, type: NSBinaryStoreType, model: from) { context in
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.predicate = NSPredicate(format: "title == 'gone'")
            for book in try context.fetch(request) { context.delete(book) }
        }
        let destination = folder.appendingPathComponent("v2.store")
        try NSMigrationManager(sourceModel: from, destinationModel: to).migrateStore(
            from: source, sourceType: NSBinaryStoreType, with: try NSMappingModel.inferredMappingModel(forSourceModel: from, destinationModel: to),
            toDestinationURL: destination, destinationType: NSBinaryStoreType)
        XCTAssertEqual(BinaryStore.verify(path: destination.path).issues, [])
        let (container, context) = try MigrationFixtures.open(destination, type: NSBinaryStoreType, model: to)
        let shelves = try MigrationFixtures.objects("Shelf", sortedBy: "label", in: context)
        context.performAndWait {
            XCTAssertEqual((shelves.first?.value(forKey: "books") as? Set<NSManagedObject>)?.count, 300, "a list of 300 references arrives whole")
            XCTAssertNil(shelves.first?.value(forKey: "favourite"), "a reference to a deleted object is dropped")
        }
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
    }
}
