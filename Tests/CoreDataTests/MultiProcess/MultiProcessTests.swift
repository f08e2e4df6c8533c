import CoreData
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Several processes on one binary store (Formats/wal.md §9), with real processes: children of
/// the test binary (``MultiProcessChild``) write, read, checkpoint and compact at once, and
/// writers are killed while they hold the write lock. Each scenario checks that every
/// acknowledged save is there, that no update was lost across processes, and that the store
/// verifies clean.
final class MultiProcessTests: XCTestCase {
    nonisolated(unsafe) private static var scenarios = 0
    nonisolated(unsafe) private static var children = 0
    nonisolated(unsafe) private static var acknowledged = 0
    nonisolated(unsafe) private static var kills = 0

    override class func tearDown() {
        print("multi-process suite: \(scenarios) scenarios, \(children) child processes, \(acknowledged) acknowledged saves, \(kills) writers killed holding the store")
        super.tearDown()
    }

    private func child(_ role: String, _ path: String, _ environment: [String: String] = [:]) throws -> ChildProcess {
        Self.children += 1
        var merged = environment
        merged["COREDATA_CHILD_STORE"] = path
        return try ChildProcess(role: role, environment: merged)
    }

    private func open(_ path: String) throws -> BinaryStore {
        try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: BinaryStoreOptions())
    }

    private func labels(_ store: BinaryStore) throws -> [String] {
        let entity = try XCTUnwrap(BinaryTestModel.model.entitiesByName["Tag"])
        guard case .rows(let rows) = try store.execute(StoreFetchRequest(entity: entity)) else { return [] }
        return rows.compactMap { row in if case .string(let label) = row["label"] { return label } else { return nil } }
    }

    private func assertIntact(_ path: String, file: StaticString = #filePath, line: UInt = #line) {
        let report = BinaryStore.verify(path: path)
        XCTAssertTrue(report.isIntact, "\(report)", file: file, line: line)
    }

    /// Four writers insert and increment a shared counter while two readers (one read-only)
    /// wait to see every save and a fifth process checkpoints and compacts in a loop.
    func testConcurrentWritersReadersAndMaintenance() throws {
        Self.scenarios += 1
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.owner(1, "0", items: [])]))
        let writers = 4
        let saves = 120
        let every = 4
        let common = ["COREDATA_CHILD_THRESHOLD": "\(48 << 10)"]
        let maintainer = try child("maintainer", path, common)
        let readers = try [
            child("reader", path, common.merging(["COREDATA_CHILD_EXPECT": "\(writers * saves)"]) { $1 }),
            child("reader", path, common.merging(["COREDATA_CHILD_EXPECT": "\(writers * saves)", "COREDATA_CHILD_READ_ONLY": "1"]) { $1 }),
        ]
        let writing = try (0..<writers).map { index in
            try child("writer", path, common.merging([
                "COREDATA_CHILD_NAME": "w\(index)", "COREDATA_CHILD_SAVES": "\(saves)", "COREDATA_CHILD_INCREMENT": "\(every)",
            ]) { $1 })
        }
        for writer in writing {
            XCTAssertEqual(writer.finish(), 0, writer.output)
            XCTAssertEqual(writer.reports("ACK").count, saves, writer.output)
        }
        _ = FileManager.default.createFile(atPath: path + ".stop", contents: Data())
        XCTAssertEqual(maintainer.finish(), 0, maintainer.output)
        for reader in readers {
            XCTAssertEqual(reader.finish(), 0, reader.output)
            XCTAssertEqual(reader.reports("SAW").first?.components(separatedBy: " ").first, "\(writers * saves)", reader.output)
            XCTAssertTrue(reader.reports("ERROR").isEmpty, reader.output)
        }
        let acknowledged = writing.flatMap { $0.reports("ACK") }
        Self.acknowledged += acknowledged.count
        let increments = writing.reduce(0) { $0 + $1.lines.filter { $0 == "INC" }.count }
        XCTAssertEqual(increments, writers * (saves / every))
        // This handle opened before them all and follows their saves, checkpoints and compactions.
        XCTAssertEqual(Set(try labels(store)), Set(acknowledged))
        XCTAssertEqual(try store.row(for: StoreObjectID(entityName: "Owner", primaryKey: 1))?["name"], .string("\(increments)"), "no increment was lost")
        let maintained = maintainer.reports("MAINTAINED").first?.components(separatedBy: " ").compactMap(Int.init) ?? []
        XCTAssertEqual(maintained.count, 2)
        XCTAssertGreaterThan(maintained.first ?? 0, 0, "checkpoints ran during the saves")
        XCTAssertGreaterThan(maintained.last ?? 0, 0, "compactions ran during the saves")
        try store.close()
        assertIntact(path)
        let reopened = try open(path)
        XCTAssertEqual(try labels(reopened).count, writers * saves)
        try reopened.close()
    }

    /// A writer is killed (SIGKILL) in the middle of its saves, three times over; each time
    /// another writer goes on at once, and every save acknowledged before the kill is there.
    func testAWriterKilledWhileSavingLosesNothingAcknowledged() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        var acknowledged: [String] = []
        for round in 0..<3 {
            Self.scenarios += 1
            let victim = try child("writer", path, ["COREDATA_CHILD_NAME": "victim\(round)", "COREDATA_CHILD_SAVES": "1000000", "COREDATA_CHILD_THRESHOLD": "\(32 << 10)"])
            XCTAssertTrue(victim.wait(until: { $0.reports("ACK").count >= 40 + 25 * round }, timeout: 60), victim.output)
            victim.kill()
            victim.finish()
            Self.kills += 1
            acknowledged += victim.reports("ACK")
            let survivor = try child("writer", path, ["COREDATA_CHILD_NAME": "after\(round)", "COREDATA_CHILD_SAVES": "20"])
            XCTAssertEqual(survivor.finish(timeout: 60), 0, survivor.output)
            acknowledged += survivor.reports("ACK")
            let present = Set(try labels(store))
            XCTAssertTrue(Set(acknowledged).isSubset(of: present), "lost: \(Set(acknowledged).subtracting(present).sorted().prefix(5))")
        }
        Self.acknowledged += acknowledged.count
        try store.close()
        assertIntact(path)
    }

    /// Apple's API on both sides: a container in a child process fetches what this process saved
    /// and saves objects of its own, which this process's context fetches and faults in.
    func testContainersInTwoProcessesSeeEachOthersSaves() throws {
        Self.scenarios += 1
        let path = BinaryTestModel.temporaryPath()
        let container = try loadedBinaryContainer("Parent", path: path)
        let context = container.viewContext
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
        owner.setValue("Ann", forKey: "name")
        try context.save()

        let other = try child("container", path, ["COREDATA_CHILD_SAVES": "5"])
        XCTAssertEqual(other.finish(), 0, other.output)
        XCTAssertEqual(other.reports("OWNERS"), ["Ann"])
        Self.acknowledged += other.reports("ACK").count

        let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
        XCTAssertEqual(items.compactMap { $0.value(forKey: "text") as? String }.sorted(), (0..<5).map { "child item \($0)" })
        XCTAssertTrue(items.allSatisfy { ($0.value(forKey: "owner") as? NSManagedObject)?.objectID == owner.objectID })
        context.refresh(owner, mergeChanges: false)
        XCTAssertEqual((owner.value(forKey: "items") as? NSOrderedSet)?.count, 5, "the owner's items, faulted in again, include the other process's")
        // Keys came from one sequence: this process's next insert collides with none of them.
        let mine = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
        mine.setValue("parent item", forKey: "text")
        try context.save()
        XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")), 6)
    }

    /// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`: a save in another process and a
    /// save through this coordinator each post `.NSPersistentStoreRemoteChange` with the store's
    /// URL and UUID, and a fetch in the observer sees the other process's objects.
    func testRemoteChangeNotificationsForEverySaveFromAnyProcess() throws {
        Self.scenarios += 1
        let path = BinaryTestModel.temporaryPath()
        let container = try loadedBinaryContainer("Observer", path: path, enabling: [NSPersistentStoreRemoteChangeNotificationPostOptionKey])
        let received = NotificationLog()
        let coordinator = container.persistentStoreCoordinator
        let token = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil) { note in
            received.add(note.userInfo ?? [:])
        }
        defer { NotificationCenter.default.removeObserver(token) }

        let other = try child("container", path, ["COREDATA_CHILD_SAVES": "3"])
        XCTAssertEqual(other.finish(), 0, other.output)
        XCTAssertTrue(received.wait(atLeast: 1, timeout: 5), "no notification for the other process's saves")
        let info = try XCTUnwrap(received.first)
        XCTAssertEqual((info[NSPersistentStoreURLKey] as? URL)?.path, path)
        XCTAssertEqual(info[NSStoreUUIDKey] as? String, coordinator.persistentStores.first?.identifier)
        XCTAssertEqual(try container.viewContext.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")), 3)

        let seen = received.count
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: container.viewContext)
        owner.setValue("local", forKey: "name")
        try container.viewContext.save()
        XCTAssertTrue(received.wait(atLeast: seen + 1, timeout: 5), "no notification for this coordinator's own save")
        try coordinator.remove(try XCTUnwrap(coordinator.persistentStores.first))
    }
}

extension MultiProcessTests {
    /// Apple's app-and-extension pattern across two processes: the extension saves with its own
    /// author; the app, told by a remote-change notification, fetches the history after its saved
    /// token without its own transactions, merges it into its view context and saves the new
    /// token (archived, as an app keeps it between launches). A second round sees only what came
    /// after that token.
    func testAppAndExtensionShareChangesThroughPersistentHistory() throws {
        Self.scenarios += 1
        let path = BinaryTestModel.temporaryPath()
        let container = try loadedBinaryContainer("App", path: path, enabling: [NSPersistentHistoryTrackingKey, NSPersistentStoreRemoteChangeNotificationPostOptionKey])
        let view = container.viewContext
        view.transactionAuthor = "app"
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: view)
        owner.setValue("Owner 0", forKey: "name")
        for index in 0..<2 {
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: view)
            item.setValue("app \(index)", forKey: "text")
            item.setValue(owner, forKey: "owner")
        }
        try view.save()
        let tokenFile = URL(fileURLWithPath: path + ".token")
        func saveToken(_ token: NSPersistentHistoryToken?) throws {
            let token = try XCTUnwrap(token)
            try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true).write(to: tokenFile)
        }
        func loadToken() throws -> NSPersistentHistoryToken? {
            try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: try Data(contentsOf: tokenFile))
        }
        try saveToken(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let notified = NotificationLog()
        let observer = NotificationCenter.default.addObserver(
            forName: .NSPersistentStoreRemoteChange, object: container.persistentStoreCoordinator, queue: nil
        ) { note in notified.add(note.userInfo ?? [:]) }
        defer { NotificationCenter.default.removeObserver(observer) }

        /// What the app does on a remote change: fetch, filter, merge, keep the token.
        func mergeRemoteHistory() throws -> [NSPersistentHistoryTransaction] {
            let request = NSPersistentHistoryChangeRequest.fetchHistory(after: try loadToken())
            let others = try XCTUnwrap(NSPersistentHistoryTransaction.fetchRequest)
            others.predicate = NSPredicate(format: "author != %@", "app")
            request.fetchRequest = others
            let transactions = try XCTUnwrap((try view.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
            for transaction in transactions { view.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
            if let last = transactions.last { try saveToken(last.token) }
            return transactions
        }

        let items = NSFetchRequest<NSManagedObject>(entityName: "Item")
        items.sortDescriptors = [NSSortDescriptor(key: "text", ascending: true)]
        for round in 1...2 {
            let seen = notified.count
            let other = try child("extension", path, ["COREDATA_CHILD_NAME": "\(round)", "COREDATA_CHILD_SAVES": "3"])
            XCTAssertEqual(other.finish(), 0, other.output)
            Self.acknowledged += other.reports("ACK").count
            XCTAssertEqual(other.reports("DELETED"), ["app \(round - 1)"])
            XCTAssertTrue(notified.wait(atLeast: seen + 1, timeout: 5), "round \(round): no remote-change notification")
            XCTAssertNotNil(notified.last?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken, "the notification carries a history token")

            let transactions = try mergeRemoteHistory()
            XCTAssertEqual(transactions.count, 5, "round \(round): rename, three inserts, one delete, none of the app's")
            XCTAssertTrue(transactions.allSatisfy { $0.author == "extension" && $0.processID != String(ProcessInfo.processInfo.processIdentifier) })
            XCTAssertEqual(owner.value(forKey: "name") as? String, "Owner \(round)", "round \(round): the merge refreshed the owner")
            let texts = try view.fetch(items).compactMap { $0.value(forKey: "text") as? String }
            XCTAssertEqual(texts.filter { $0.hasPrefix("extension \(round).") }.count, 3)
            XCTAssertFalse(texts.contains("app \(round - 1)"), "round \(round): the deleted item is gone")
            XCTAssertEqual(try mergeRemoteHistory().count, 0, "round \(round): nothing after the saved token")
        }
        try container.persistentStoreCoordinator.remove(try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first))
    }
}

extension MultiProcessTests {
    /// A context pinned to a query generation reads it while another process saves, checkpoints
    /// and tries to compact (held back while the snapshot lives, done once it is let go).
    func testAQueryGenerationHoldsWhileOtherProcessesSaveAndMaintain() throws {
        Self.scenarios += 1
        let path = BinaryTestModel.temporaryPath()
        let container = try loadedBinaryContainer("Pinned", path: path)
        let pinned = container.viewContext
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: pinned)
        owner.setValue("Ann", forKey: "name")
        try pinned.save()
        try pinned.setQueryGenerationFrom(.current)
        let items = NSFetchRequest<NSManagedObject>(entityName: "Item")
        XCTAssertEqual(try pinned.count(for: items), 0)

        let writer = try child("container", path, ["COREDATA_CHILD_SAVES": "5"])
        XCTAssertEqual(writer.finish(), 0, writer.output)
        Self.acknowledged += writer.reports("ACK").count
        let held = try child("compactor", path)
        XCTAssertEqual(held.finish(), 0, held.output)
        XCTAssertEqual(held.reports("COMPACT"), ["refused"], "the other process's compaction waits for the snapshot: \(held.output)")
        XCTAssertEqual(try pinned.count(for: items), 0, "the pinned generation has no items")
        let latest = container.newBackgroundContext()
        try latest.performAndWait { XCTAssertEqual(try latest.count(for: items), 5, "an unpinned context sees the other process's items") }

        try pinned.setQueryGenerationFrom(nil)
        let free = try child("compactor", path)
        XCTAssertEqual(free.finish(), 0, free.output)
        XCTAssertEqual(free.reports("COMPACT"), ["done"], free.output)
        XCTAssertEqual(try pinned.count(for: items), 5)
        try container.persistentStoreCoordinator.remove(try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first))
        assertIntact(path)
    }
}

/// Notifications' `userInfo`s, collected from any thread.
final class NotificationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var infos: [[AnyHashable: Any]] = []

    func add(_ info: [AnyHashable: Any]) { lock.withLock { infos.append(info) } }
    var count: Int { lock.withLock { infos.count } }
    var first: [AnyHashable: Any]? { lock.withLock { infos.first } }
    var last: [AnyHashable: Any]? { lock.withLock { infos.last } }

    func wait(atLeast count: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while self.count < count, Date() < deadline { usleep(1_000) }
        return self.count >= count
    }
}
