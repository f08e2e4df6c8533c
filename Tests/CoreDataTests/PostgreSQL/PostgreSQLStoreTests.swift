import CoreData
import CoreDataPostgreSQL
import CoreDataPostgreSQLStore
import CoreDataStorage
import Foundation
import XCTest

/// The PostgreSQL store's own behaviour beyond the shared conformance suites: its URL and
/// options, errors without credentials, the store's lifecycle through the coordinator
/// (`Formats/postgresql-store.md` §1–§3).
final class PostgreSQLStoreTests: XCTestCase {
    private func serverURL() throws -> URL {
        guard let url = PostgreSQLTestStores.freshURL() else {
            throw ScenarioStopped(description: "no PostgreSQL server for the tests: \(PostgreSQLTestStores.unavailableReason)")
        }
        return url
    }

    private func coordinator(_ url: URL, options: [AnyHashable: Any]? = nil) throws -> (NSPersistentStoreCoordinator, NSPersistentStore) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: StoreKind.sharedModel)
        let store = try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: options)
        return (coordinator, store)
    }

    func testURLsAreReadAsLibpqReadsThem() throws {
        let plain = try PostgreSQLStoreConfiguration(url: XCTUnwrap(URL(string: "postgres://app@db.example.com/sales")))
        XCTAssertEqual(plain.host, "db.example.com")
        XCTAssertEqual(plain.port, 5432)
        XCTAssertEqual(plain.database, "sales")
        XCTAssertEqual(plain.schema, "public")
        XCTAssertNil(plain.unixSocketPath)
        let full = try PostgreSQLStoreConfiguration(url: XCTUnwrap(URL(string: "postgresql://app:s%40cret@10.0.0.2:6543/sales?schema=app_1&sslmode=require")))
        XCTAssertEqual(full.password, "s@cret")
        XCTAssertEqual(full.port, 6543)
        XCTAssertEqual(full.schema, "app_1")
        XCTAssertEqual(full.tls, .require)
        XCTAssertFalse(full.description.contains("cret"), full.description)
        let socket = try PostgreSQLStoreConfiguration(url: XCTUnwrap(URL(string: "postgres://app@/sales?host=/run/postgresql")))
        XCTAssertEqual(socket.unixSocketPath, "/run/postgresql/.s.PGSQL.5432")

        for (text, complaint) in [
            ("mysql://app@host/db", "postgres:// URL"),
            ("postgres://host/db", "names no user"),
            ("postgres://app@host/", "names no database"),
            ("postgres://app:hunter2@host/db?schema=a;DROP", "not a plain identifier"),
            ("postgres://app:hunter2@host/db?sslmode=maybe", "sslmode 'maybe'"),
        ] {
            XCTAssertThrowsError(try PostgreSQLStoreConfiguration(url: XCTUnwrap(URL(string: text)))) { error in
                XCTAssertTrue("\(error)".contains(complaint), "\(text): \(error)")
                XCTAssertFalse("\(error)".contains("hunter2"), "\(text): the password is printed: \(error)")
            }
        }
    }

    func testAServerThatCannotBeReachedIsAnErrorWithoutThePassword() throws {
        // A port nothing listens on: the connection is refused at once.
        let url = try XCTUnwrap(URL(string: "postgres://app:hunter2@127.0.0.1:9/sales?schema=s"))
        XCTAssertThrowsError(try coordinator(url, options: [NSPostgreSQLConnectTimeoutOption: 2.0])) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("127.0.0.1:9"), text)
            XCTAssertTrue(text.contains("no connection within"), text)
            XCTAssertFalse(text.contains("hunter2"), "the password is printed: \(text)")
        }
    }

    func testTheStoreIsMadeAtFirstOpenAndFoundAgainWithItsMetadata() throws {
        let url = try serverURL()
        let (first, store) = try coordinator(url)
        let uuid = try XCTUnwrap(store.metadata?[NSStoreUUIDKey] as? String)
        XCTAssertEqual(store.metadata?[NSStoreTypeKey] as? String, "PostgreSQL")
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = first
        try context.performAndWait {
            context.make("Author", ["name": "Ann", "rating": Int16(4)])
            try context.save()
        }
        var metadata = try XCTUnwrap(store.metadata)
        metadata["app.version"] = "7"
        first.setMetadata(metadata, for: store)
        try context.performAndWait {
            context.make("Author", ["name": "Bob"])
            try context.save()
        }
        try first.remove(store)

        let read = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: url)
        XCTAssertEqual(read[NSStoreUUIDKey] as? String, uuid)
        XCTAssertEqual(read["app.version"] as? String, "7")
        XCTAssertTrue(StoreKind.sharedModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: read))

        let (second, _) = try coordinator(url)
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = second
        try reader.performAndWait {
            XCTAssertEqual(names(try reader.all("Author", sortedBy: "name")), ["Ann", "Bob"])
        }
        try second.destroyPersistentStore(at: url, ofType: NSPostgreSQLStoreType)
        XCTAssertThrowsError(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: url))
    }

    func testReadOnlyStoresRefuseSavesAndNewStores() throws {
        let url = try serverURL()
        XCTAssertThrowsError(try coordinator(url, options: [NSReadOnlyPersistentStoreOption: true])) { error in
            XCTAssertTrue("\(error)".contains("no PostgreSQL store"), "\(error)")
        }
        let (writer, store) = try coordinator(url)
        try writer.remove(store)
        let (reader, _) = try coordinator(url, options: [NSReadOnlyPersistentStoreOption: true])
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = reader
        try context.performAndWait {
            context.make("Author", ["name": "Ann"])
            XCTAssertThrowsError(try context.save())
        }
    }

    func testAStoreOfAnotherModelNeedsMigration() throws {
        let url = try serverURL()
        let (writer, store) = try coordinator(url)
        try writer.remove(store)
        let other = NSManagedObjectModel()
        let entity = NSEntityDescription()
        entity.name = "Author"
        let name = NSAttributeDescription()
        name.name = "fullName"
        name.attributeType = .stringAttributeType
        entity.properties = [name]
        other.entities = [entity]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: other)
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url)) { error in
            // Apple's error for a store of another model: the hashes differ.
            XCTAssertEqual((error as NSError).code, NSPersistentStoreIncompatibleVersionHashError, "\(error)")
        }
    }

    func testFetchIndexesAndUniquenessConstraintsBecomeIndexes() throws {
        let url = try serverURL()
        let model = NSManagedObjectModel()
        let user = NSEntityDescription()
        user.name = "User"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let age = NSAttributeDescription()
        age.name = "age"
        age.attributeType = .integer64AttributeType
        user.properties = [name, age]
        user.uniquenessConstraints = [["name"]]
        user.indexes = [NSFetchIndexDescription(name: "byAgeAndName", elements: [
            NSFetchIndexElementDescription(propertyName: "age", collationType: .binary),
            NSFetchIndexElementDescription(propertyName: "name", collationType: .binary, isAscending: false),
        ])]
        model.entities = [user]
        _ = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try PostgreSQLStore(configuration: PostgreSQLStoreConfiguration(url: url), model: model, metadata: StoreMetadata())
        defer { try? store.close() }
        XCTAssertEqual(try store.indexNames(), ["Z_User_UNIQUE_name", "Z_User_byAgeAndName", "z_metadata_pkey", "z_primarykey_pkey", "zuser_pkey"])
    }

    /// Sorting by a string runs in the server only while the sorted strings are ASCII
    /// (`Formats/postgresql-store.md` §7): with accents, composed and decomposed, the page is the
    /// in-memory store's all the same.
    func testStringSortsPagedAsTheInMemoryStoreSortsThem() throws {
        for names in [["delta", "Alpha", "charlie", "bravo", "Echo"], ["e\u{301}cole", "\u{e9}t\u{e9}", "zebra", "eagle", "Zoo", "\u{1F600}smile", "\u{FB01}n"]] {
            var pages: [StoreKind: [[String]]] = [:]
            for kind in [StoreKind.inMemory, .postgreSQL] {
                let container = try kind.makeContainer()
                let context = container.newBackgroundContext()
                pages[kind] = try context.performAndWait {
                    for name in names { context.make("Author", ["name": name]) }
                    try context.save()
                    context.reset()
                    var result: [[String]] = []
                    for ascending in [true, false] {
                        let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
                        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: ascending)]
                        request.fetchLimit = 3
                        request.fetchOffset = 1
                        result.append(CoreDataTests.names(try context.fetch(request)))
                    }
                    return result
                }
            }
            XCTAssertEqual(pages[.postgreSQL], pages[.inMemory], "\(names)")
        }
    }
}
