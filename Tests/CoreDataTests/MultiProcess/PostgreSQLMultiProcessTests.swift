import CoreData
import Foundation
import XCTest

/// Two app servers on one PostgreSQL database, as real processes: this test process and a child
/// of the test binary (``MultiProcessChild``, role `postgres`) each have their own coordinator and
/// connection pool. The child changes an object this process holds unsaved changes to; this
/// process's save then meets the conflict, and each merge policy resolves it as Apple documents
/// (`Formats/postgresql-store.md` §8).
final class PostgreSQLMultiProcessTests: XCTestCase {
    private func container(_ url: URL) throws -> NSPersistentContainer {
        let container = NSPersistentContainer(name: "Server", managedObjectModel: StoreKind.sharedModel)
        let description = NSPersistentStoreDescription(url: url)
        description.type = NSPostgreSQLStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        return container
    }

    /// What the store holds for the author after the save: (name, rating).
    private func stored(_ container: NSPersistentContainer, _ id: NSManagedObjectID) throws -> (String?, Int16?) {
        let check = container.newBackgroundContext()
        return try check.performAndWait {
            let object = try check.existingObject(with: id)
            return (object.value(forKey: "name") as? String, object.value(forKey: "rating") as? Int16)
        }
    }

    func testConflictingSavesOfTwoProcessesResolvedByEachMergePolicy() throws {
        guard let url = PostgreSQLTestStores.freshURL() else {
            return XCTFail("no PostgreSQL server for the tests: \(PostgreSQLTestStores.unavailableReason)")
        }
        let container = try container(url)
        // (policy, whose name and the rating the store holds afterwards; nil: the save fails).
        // Names are unique in the test model: each policy's object has its own.
        let expectations: [(NSMergePolicy, (String, Int16)?)] = [
            (.error, nil),
            (.mergeByPropertyObjectTrump, ("child's", 2)),
            (.mergeByPropertyStoreTrump, ("child's", 3)),
            (.overwrite, ("parent's", 2)),
            (.rollback, ("child's", 3)),
        ]
        for (policy, expected) in expectations {
            let label = "policy \(policy.mergeType.rawValue)"
            let context = container.newBackgroundContext()
            context.mergePolicy = policy
            let id = try context.performAndWait { () throws -> NSManagedObjectID in
                let author = context.make("Author", ["name": "parent's \(label)", "rating": Int16(1)])
                try context.save()
                // This server's unsaved change, made on what it read.
                author.setValue(Int16(2), forKey: "rating")
                return author.objectID
            }
            // The other server changes the same object and saves first.
            let child = try ChildProcess(role: "postgres", environment: [
                "COREDATA_CHILD_STORE": url.absoluteString, "COREDATA_CHILD_OBJECT": id.uriRepresentation().absoluteString,
                "COREDATA_CHILD_NAME": "child's \(label)",
            ])
            XCTAssertEqual(child.finish(), 0, "\(label): \(child.output)")
            XCTAssertEqual(child.reports("ACK"), ["rating 3"], label)
            try context.performAndWait {
                if let expected {
                    XCTAssertNoThrow(try context.save(), label)
                    let (name, rating) = try stored(container, id)
                    XCTAssertEqual(name, "\(expected.0) \(label)", label)
                    XCTAssertEqual(rating, expected.1, label)
                } else {
                    XCTAssertThrowsError(try context.save(), label) { error in
                        let nsError = error as NSError
                        XCTAssertEqual(nsError.code, NSManagedObjectMergeError, label)
                        let conflicts = nsError.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
                        XCTAssertEqual(conflicts?.count, 1, label)
                        XCTAssertEqual(conflicts?.first?.newVersionNumber, 2, label)
                        XCTAssertEqual(conflicts?.first?.persistedSnapshot?["rating"] as? Int16, 3, label)
                    }
                    let (name, rating) = try stored(container, id)
                    XCTAssertEqual(name, "child's \(label)", label)
                    XCTAssertEqual(rating, 3, label)
                }
            }
        }
    }

    /// `NSPersistentStoreRemoteChangeNotificationPostOptionKey` on PostgreSQL: another server's
    /// save (a child process) and this server's own are each posted through `LISTEN`/`NOTIFY`,
    /// and a fetch after the notification sees the other server's object.
    func testRemoteChangeNotificationsThroughListenAndNotify() throws {
        guard let url = PostgreSQLTestStores.freshURL() else {
            return XCTFail("no PostgreSQL server for the tests: \(PostgreSQLTestStores.unavailableReason)")
        }
        let container = NSPersistentContainer(name: "Observer", managedObjectModel: StoreKind.sharedModel)
        let description = NSPersistentStoreDescription(url: url)
        description.type = NSPostgreSQLStoreType
        description.setOption(true as NSNumber, forKey: NSPersistentStoreRemoteChangeNotificationPostOptionKey)
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        let coordinator = container.persistentStoreCoordinator
        let received = NotificationLog()
        let token = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil) { note in
            received.add(note.userInfo ?? [:])
        }
        defer { NotificationCenter.default.removeObserver(token) }

        let context = container.newBackgroundContext()
        let id = try context.performAndWait { () throws -> NSManagedObjectID in
            let author = context.make("Author", ["name": "observed", "rating": Int16(1)])
            try context.save()
            return author.objectID
        }
        XCTAssertTrue(received.wait(atLeast: 1, timeout: 5), "no notification for this server's own save")
        let seen = received.count
        let child = try ChildProcess(role: "postgres", environment: [
            "COREDATA_CHILD_STORE": url.absoluteString, "COREDATA_CHILD_OBJECT": id.uriRepresentation().absoluteString,
            "COREDATA_CHILD_NAME": "renamed elsewhere",
        ])
        XCTAssertEqual(child.finish(), 0, child.output)
        XCTAssertTrue(received.wait(atLeast: seen + 1, timeout: 5), "no notification for the other server's save")
        XCTAssertEqual(received.first?[NSStoreUUIDKey] as? String, coordinator.persistentStores.first?.identifier)
        // A context that holds the object keeps its values (Apple's fetches do not refresh
        // registered objects); a new one reads the other server's.
        let fresh = container.newBackgroundContext()
        try fresh.performAndWait {
            XCTAssertEqual(names(try fresh.all("Author")), ["renamed elsewhere"])
        }
    }
}
