import ArgumentParser
import CoreData
import CoreDataBinaryStore
import CoreDataSQLiteStore
import CoreDataStorage
import Foundation

/// The store types `convert` writes.
enum ConvertTarget: String, CaseIterable, ExpressibleByArgument {
    case binary
    case xml
    /// Apple's SQLite layout (`NSAppleSQLiteStoreType`), a file Core Data on Apple platforms opens.
    case sqlite

    var storeType: NSPersistentStore.StoreType {
        switch self {
        case .binary: return .binary
        case .xml: return .xml
        case .sqlite: return NSPersistentStore.StoreType(rawValue: NSAppleSQLiteStoreType)
        }
    }
}

/// `coredata convert SOURCE DEST --to binary|xml|sqlite --model M`: copies a store into a new file
/// of another type through `NSPersistentStoreCoordinator.migratePersistentStore`, as an app would.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Copy a store into a new binary, XML or Apple SQLite store, through migratePersistentStore.",
        discussion: """
            Opens SOURCE (a binary, XML or Apple SQLite store) read-only with a coordinator on \
            the app's model, and copies every object, relationship and metadata entry into a new \
            store at DEST of the type --to names, with \
            NSPersistentStoreCoordinator.migratePersistentStore, the path the API takes. Objects \
            get new primary keys (an XML store numbers them store-wide). SOURCE is never \
            changed; DEST must not exist (status 8; for sqlite, nor may DEST-wal, DEST-shm or \
            DEST-journal); when the copy fails no DEST is left behind.

            --to sqlite writes Apple's SQLite layout (NSAppleSQLiteStoreType, in WAL mode), the \
            file Core Data's NSSQLiteStoreType opens on Apple platforms, e.g. to hand a store \
            back to an Apple app. Its metadata records this implementation's model version \
            hashes, not Apple's (Formats/apple-sqlite-store.md §9). An Apple SQLite SOURCE (a \
            file Core Data wrote) is checked as verify --model does first.

            --model is required. A store alone does not describe its model fully: a binary \
            store's records do not tell Integer 16 from Integer 64, Float from Double, binary data \
            from transformable, nor whether a to-many relationship is ordered or what its inverse \
            is; an XML store keeps property names only lower-cased; an SQLite store's columns do \
            not say which are relationships. A model rebuilt from any of them would write a store \
            the app's model cannot open. A model that does not match SOURCE is refused (status 6).

            Prints the objects copied per entity.

            Example:
              coredata convert Library.store Library.xml --to xml --model Library.xcdatamodeld
              coredata convert Library.xml Copy.store --to binary --model Library.xcdatamodeld --json
              coredata convert Library.sqlite Library.store --to binary --model Library.xcdatamodeld
              coredata convert Library.store Library.sqlite --to sqlite --model Library.xcdatamodeld
            """
    )

    @Argument(help: "The store to copy (binary, XML or Apple SQLite).")
    var source: String

    @Argument(help: "The new store's file; must not exist.")
    var destination: String

    @Option(help: "The new store's type: binary, xml or sqlite (Apple's SQLite layout).")
    var to: ConvertTarget

    @Option(help: "The app's model (.xcdatamodeld, .xcdatamodel or contents file); required, see above.")
    var model: String

    @Option(name: .customLong("model-version"), help: "The version of a .xcdatamodeld package to use (default: its current one).")
    var modelVersion: String?

    @Flag(help: "Print machine-readable JSON instead of text.")
    var json = false

    func run() throws {
        try reportingFailures {
            let kind = try StoreKind.detect(path: source)
            try requireNewDestination()
            let loadedModel = try ModelLoading.load(model, version: modelVersion)
            // The CLI's own read-only open first: it names a lock, damage (with its location) or a
            // model mismatch precisely, and for a binary store keeps its shared lock, so no writer
            // changes the source while it is copied.
            var guardStore: BinaryStore?
            defer { if let guardStore { try? guardStore.close() } }
            switch kind {
            case .binary:
                let store = try StoreAccess.open(source, command: "convert", model: loadedModel)
                guardStore = store
                try StoreAccess.requireIntact(source)
                let metadata: [String: Any]
                do throws(StoreError) { metadata = try store.metadata().values } catch { throw CLIError.store(error, path: source) }
                try ModelLoading.requireMatch(loadedModel, metadata: metadata, modelPath: model, storePath: source)
            case .xml:
                _ = try XMLStoreAccess.read(source, model: loadedModel, modelPath: model)
            case .sqlite:
                try SQLiteStoreAccess.requireIntact(source, model: loadedModel, modelPath: model)
            }
            let counts = try migrate(kind: kind, model: loadedModel)
            report(counts, from: kind)
        }
    }

    /// Refuses an existing DEST, and for a binary store a leftover log beside it, which the new
    /// store would otherwise read as its own.
    private func requireNewDestination() throws(CLIError) {
        var leftovers = [destination]
        if to == .binary { leftovers.append(destination + "-wal") }
        // SQLite would take a leftover journal beside a new database for its own.
        if to == .sqlite { leftovers += ["-wal", "-shm", "-journal"].map { destination + $0 } }
        for path in leftovers where FileManager.default.fileExists(atPath: path) {
            throw CLIError(.destinationExists, "\(path) already exists; convert never overwrites a file (remove it or choose another destination)")
        }
        let folder = URL(fileURLWithPath: destination).deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw CLIError(.unreadable, "cannot create \(destination): no such folder \(folder)")
        }
    }

    /// Adds SOURCE to a coordinator read-only and migrates it to DEST; returns the objects per
    /// entity the copy holds, counted through a context as an app would.
    private func migrate(kind: StoreKind, model: NSManagedObjectModel) throws(CLIError) -> [String: Int] {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let sourceType: NSPersistentStore.StoreType
        switch kind {
        case .binary: sourceType = .binary
        case .xml: sourceType = .xml
        case .sqlite: sourceType = NSPersistentStore.StoreType(rawValue: NSAppleSQLiteStoreType)
        }
        do {
            let store = try coordinator.addPersistentStore(
                ofType: sourceType.rawValue, configurationName: nil, at: URL(fileURLWithPath: source),
                options: [NSReadOnlyPersistentStoreOption: true, NSBinaryStoreWaitForLockOption: false])
            let copy = try coordinator.migratePersistentStore(store, to: URL(fileURLWithPath: destination), options: nil, type: to.storeType)
            let counts = try count(in: coordinator, model: model)
            try coordinator.remove(copy)
            return counts
        } catch {
            for store in coordinator.persistentStores { try? coordinator.remove(store) }
            throw Self.failure(error, source: source, destination: destination)
        }
    }

    private func count(in coordinator: NSPersistentStoreCoordinator, model: NSManagedObjectModel) throws -> [String: Int] {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var counts: [String: Int] = [:]
        var failure: (any Error)?
        context.performAndWait {
            for entity in model.entities where !entity.isAbstract {
                guard let name = entity.name else { continue }
                let request = NSFetchRequest<NSManagedObject>(entityName: name)
                request.includesSubentities = false
                do { counts[name] = try context.count(for: request) } catch { failure = error }
            }
        }
        if let failure { throw failure }
        return counts
    }

    /// A coordinator's error as the CLI's failure of its kind.
    private static func failure(_ error: any Error, source: String, destination: String) -> CLIError {
        let nsError = error as NSError
        let message = nsError.localizedDescription
        switch nsError.code {
        case NSPersistentStoreIncompatibleVersionHashError:
            return CLIError(.badModel, "the model does not match \(source): \(message)")
        case NSPersistentStoreInvalidFileError:
            return CLIError(.damaged, "cannot convert \(source): \(message)")
        case NSPersistentStoreOpenError:
            return CLIError(.unreadable, "converting \(source) to \(destination) failed: \(message)")
        default:
            return CLIError(.internalError, "converting \(source) to \(destination) failed: \(message)")
        }
    }

    private func report(_ counts: [String: Int], from kind: StoreKind) {
        let total = counts.values.reduce(0, +)
        if json {
            Console.print(JSONValue.object([
                ("source", .string(source)), ("sourceFormat", .string(kind.rawValue)),
                ("destination", .string(destination)), ("format", .string(to.rawValue)),
                ("objects", .integer(Int64(total))), ("objectsByEntity", .counts(counts)),
            ]).pretty)
            return
        }
        Console.print("converted \(source) (\(kind.rawValue)) to \(destination) (\(to.rawValue)): \(total) object\(total == 1 ? "" : "s") copied")
        let width = counts.keys.map(\.count).max() ?? 0
        for name in counts.keys.sorted() {
            Console.print("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(counts[name] ?? 0)")
        }
    }
}
