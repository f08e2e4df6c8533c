import CoreData
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// The roles a child process of ``MultiProcessTests`` plays. In a normal test run (no role in the
/// environment) the test returns at once.
final class MultiProcessChild: XCTestCase {
    private var environment: [String: String] { ProcessInfo.processInfo.environment }

    func testRunAsChildProcess() throws {
        guard let role = environment["COREDATA_CHILD_ROLE"] else { return }
        let path = try XCTUnwrap(environment["COREDATA_CHILD_STORE"])
        do {
            switch role {
            case "writer": try writer(path)
            case "reader": try reader(path)
            case "maintainer": try maintainer(path)
            case "container": try container(path)
            case "extension": try appExtension(path)
            case "compactor": try compactor(path)
            case "postgres": try postgresServer(path)
            default: XCTFail("no role \(role)")
            }
        } catch {
            report("ERROR \(error)")
            throw error
        }
    }

    private func report(_ line: String) {
        // Unbuffered: the parent may kill this process right after the line.
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    private func number(_ name: String, _ otherwise: Int) -> Int { environment[name].flatMap(Int.init) ?? otherwise }

    private func open(_ path: String, readOnly: Bool = false) throws -> BinaryStore {
        var options = BinaryStoreOptions()
        options.readOnly = readOnly
        // Small: checkpoints happen while the others read and write.
        options.checkpointThreshold = number("COREDATA_CHILD_THRESHOLD", 64 << 20)
        return try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
    }

    /// Inserts one tag per save, `ACK label` after each returned; every `COREDATA_CHILD_INCREMENT`
    /// saves it also adds one to the shared counter (owner 1's name) by read, modify, write,
    /// retrying on an optimistic-locking conflict, `INC` after each that returned.
    private func writer(_ path: String) throws {
        let name = environment["COREDATA_CHILD_NAME"] ?? "w"
        let saves = number("COREDATA_CHILD_SAVES", 100)
        let every = number("COREDATA_CHILD_INCREMENT", 0)
        let store = try open(path)
        let counter = StoreObjectID(entityName: "Owner", primaryKey: 1)
        for index in 0..<saves {
            let key = try store.newPrimaryKeys(entityName: "Tag", count: 1)[0]
            _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.tag(key, "\(name)-\(index)")]))
            report("ACK \(name)-\(index)")
            guard every > 0, index % every == 0 else { continue }
            while true {
                guard let row = try store.row(for: counter), case .string(let text) = row["name"], let value = Int(text) else {
                    report("ERROR no counter")
                    return
                }
                var next = BinaryTestModel.owner(1, "\(value + 1)", items: [])
                next.version = row.version
                if try saveReportingConflict(store, StoreChangeSet(updated: [next])) {
                    report("INC")
                    break
                }
                report("CONFLICT")
            }
        }
        try store.close()
        report("DONE")
    }

    /// Saves `changes`; `false` when another process changed an object first.
    private func saveReportingConflict(_ store: BinaryStore, _ changes: StoreChangeSet) throws -> Bool {
        do {
            _ = try store.save(changes)
            return true
        } catch {
            if case .optimisticLockingFailure = error { return false }
            throw error
        }
    }

    /// Counts tags until it sees `COREDATA_CHILD_EXPECT` of them, checking that the count never
    /// goes down and that every fetched row reads whole.
    private func reader(_ path: String) throws {
        let expected = number("COREDATA_CHILD_EXPECT", 0)
        let store = try open(path, readOnly: environment["COREDATA_CHILD_READ_ONLY"] == "1")
        let entity = try XCTUnwrap(BinaryTestModel.model.entitiesByName["Tag"])
        let deadline = Date().addingTimeInterval(Double(number("COREDATA_CHILD_SECONDS", 180)))
        var last = 0
        var fetches = 0
        while Date() < deadline {
            fetches += 1
            let count: Int
            if fetches % 5 == 0 {
                guard case .rows(let rows) = try store.execute(StoreFetchRequest(entity: entity)) else { return }
                for row in rows {
                    guard case .string(let label) = row["label"], label.contains("-") else {
                        report("ERROR a row read torn: \(row)")
                        return
                    }
                }
                count = rows.count
            } else {
                guard case .count(let counted) = try store.execute(StoreFetchRequest(entity: entity, resultType: .count)) else { return }
                count = counted
            }
            if count < last { report("ERROR the count went from \(last) to \(count)") }
            last = count
            if count >= expected { break }
        }
        try store.close()
        report("SAW \(last) FETCHES \(fetches)")
    }

    /// Checkpoints and compacts in turn until the stop file appears.
    private func maintainer(_ path: String) throws {
        let store = try open(path)
        var checkpoints = 0
        var compactions = 0
        while !FileManager.default.fileExists(atPath: path + ".stop") {
            try store.checkpoint()
            checkpoints += 1
            usleep(15_000)
            try store.compact()
            compactions += 1
            usleep(15_000)
        }
        try store.close()
        report("MAINTAINED \(checkpoints) \(compactions)")
    }

    /// An app extension as Apple's guide writes one: history tracking and remote-change
    /// notifications on, its own transaction author; it renames the owner, adds items and
    /// deletes the first item the app made, one save each.
    private func appExtension(_ path: String) throws {
        let container = try loadedBinaryContainer("Extension", path: path, enabling: [NSPersistentHistoryTrackingKey, NSPersistentStoreRemoteChangeNotificationPostOptionKey])
        let context = container.newBackgroundContext()
        context.transactionAuthor = "extension"
        let round = environment["COREDATA_CHILD_NAME"] ?? "1"
        try context.performAndWait {
            let owner = try XCTUnwrap(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).first)
            owner.setValue("Owner \(round)", forKey: "name")
            try context.save()
            for index in 0..<number("COREDATA_CHILD_SAVES", 3) {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("extension \(round).\(index)", forKey: "text")
                item.setValue(owner, forKey: "owner")
                try context.save()
                report("ACK extension \(round).\(index)")
            }
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "text BEGINSWITH %@", "app")
            request.sortDescriptors = [NSSortDescriptor(key: "text", ascending: true)]
            if let first = try context.fetch(request).first {
                context.delete(first)
                try context.save()
                report("DELETED \(first.value(forKey: "text") as? String ?? "?")")
            }
        }
        report("DONE")
    }

    /// Checkpoints and compacts once; reports whether a snapshot held the compaction back.
    private func compactor(_ path: String) throws {
        let store = try open(path)
        try store.checkpoint()
        do {
            try store.compact()
            report("COMPACT done")
        } catch {
            report("\(error)".contains("query generation") ? "COMPACT refused" : "ERROR \(error)")
        }
        try store.close()
    }

    /// Apple's API in a second process: fetches what the parent saved, inserts items of its own.
    private func container(_ path: String) throws {
        let container = try loadedBinaryContainer("Child", path: path)
        let context = container.viewContext
        let owners = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
        report("OWNERS \(owners.compactMap { $0.value(forKey: "name") as? String }.sorted().joined(separator: ","))")
        for index in 0..<number("COREDATA_CHILD_SAVES", 5) {
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("child item \(index)", forKey: "text")
            item.setValue(owners.first, forKey: "owner")
            try context.save()
            report("ACK child item \(index)")
        }
        report("DONE")
    }

    /// Another app server on the PostgreSQL store at `url`: changes the object
    /// `COREDATA_CHILD_OBJECT` (its name to `COREDATA_CHILD_NAME`, its rating to 3) and saves (``PostgreSQLMultiProcessTests``).
    private func postgresServer(_ url: String) throws {
        let storeURL = try XCTUnwrap(URL(string: url))
        let container = NSPersistentContainer(name: "Child", managedObjectModel: StoreKind.sharedModel)
        let description = NSPersistentStoreDescription(url: storeURL)
        description.type = NSPostgreSQLStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        let objectURL = try XCTUnwrap(environment["COREDATA_CHILD_OBJECT"].flatMap(URL.init(string:)))
        let context = container.viewContext
        let id = try XCTUnwrap(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: objectURL))
        let author = try context.existingObject(with: id)
        author.setValue(environment["COREDATA_CHILD_NAME"] ?? "child", forKey: "name")
        author.setValue(Int16(3), forKey: "rating")
        try context.save()
        report("ACK rating 3")
        report("DONE")
    }
}
