import CoreDataFileSystem
import CoreDataBinaryStore
import CoreDataModel
import CoreDataSQLiteStore
import CoreDataStorage
import CoreDataXMLStore
import Foundation

/// The in-memory store type: nothing is written to disk.
public let NSInMemoryStoreType = "InMemory"
/// Apple's SQLite store type. At a path that holds an SQLite database (a store Core Data wrote on
/// an Apple platform, `Formats/apple-sqlite-store.md`) it opens that file in Apple's layout, for
/// reading and writing. At a new path, or one holding a binary store, it opens or creates the
/// binary store, so code written for Apple's default store gets our engine unchanged.
public let NSSQLiteStoreType = "SQLite"
/// Apple's SQLite layout, always: opens an SQLite file Core Data wrote, and creates a new one (in
/// WAL mode) at a new path. For handing a store back to an Apple app (`coredata convert --to sqlite`,
/// `migratePersistentStore(_:to:options:type:)`). Ours; Apple's `NSSQLiteStoreType` is this layout.
public let NSAppleSQLiteStoreType = "AppleSQLite"
/// The binary store type: on Linux the append-only binary store with a write-ahead log
/// (`Formats/binary-store.md`), the default store of ``NSPersistentContainer``.
public let NSBinaryStoreType = "Binary"

/// Option key for binary stores: `"full"` (the default) syncs every save before `save()`
/// returns; `"normal"` syncs only at checkpoints and close, like SQLite's `synchronous=NORMAL`:
/// never corrupt, but power loss may lose the last saves.
public let NSBinaryStoreDurabilityOption = "NSBinaryStoreDurabilityOption"
/// Option key for binary stores: the page cache's bound in bytes (an `Int`; default 64 MiB).
public let NSBinaryStorePageCacheSizeOption = "NSBinaryStorePageCacheSizeOption"
/// Option key for binary stores: with ``NSBinaryStoreExclusiveAccessOption``, wait for another
/// process's lock instead of failing (a `Bool`).
public let NSBinaryStoreWaitForLockOption = "NSBinaryStoreWaitForLockOption"
/// Option key for binary stores: hold the store alone while it is open (a `Bool`, default
/// `false`). Without it, any number of processes (and coordinators) open the same store
/// read-write, each save takes the store's write lock only for its commit, and every handle
/// sees the others' saves at its next fetch (`Formats/wal.md` §9). With it, a second writer's
/// open fails with a lock-conflict error (or waits, with ``NSBinaryStoreWaitForLockOption``).
public let NSBinaryStoreExclusiveAccessOption = "NSBinaryStoreExclusiveAccessOption"
/// Option key for binary stores: checkpoint in the background when the log passes this many
/// bytes (an `Int`; default 64 MiB).
public let NSBinaryStoreCheckpointThresholdOption = "NSBinaryStoreCheckpointThresholdOption"
/// Option key for binary stores, with ``NSReadOnlyPersistentStoreOption``: open a store whose log
/// has a synced frame damaged in place (which otherwise fails with the frame's offset) holding
/// the saves before the damage (a `Bool`, default `false`; `Formats/wal.md` §7). For getting data
/// out of a damaged store: the saves from the damaged frame on are not read, nothing is written,
/// and the store's open report names the frame.
public let NSBinaryStoreSalvageDamagedLogOption = "NSBinaryStoreSalvageDamagedLogOption"
/// Apple's SQLite pragmas option. The binary store honours `["synchronous": "NORMAL"]` (or
/// `"OFF"`) as ``NSBinaryStoreDurabilityOption`` `"normal"` and ignores other pragmas.
public let NSSQLitePragmasOption = "NSSQLitePragmasOption"
/// The XML store type: Apple's XML store layout (`Formats/xml-store.md`), one human-readable file
/// read whole when the store is added and rewritten atomically by every save. Stores written by
/// Core Data on macOS open here and the other way round.
public let NSXMLStoreType = "XML"

/// Apple's option key for how long, in seconds, opening a store (and, on a binary store that
/// processes share, each save) waits for another process's lock (an `NSNumber`; default 10).
public let NSPersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"

/// Metadata key: the store's type.
public let NSStoreTypeKey = "NSStoreType"
/// Metadata key: the store's UUID.
public let NSStoreUUIDKey = "NSStoreUUID"

/// Option key: open the store read-only.
public let NSReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// Option key: migrate the store automatically when its model changed.
public let NSMigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// Option key: infer a mapping model when none is found.
public let NSInferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"

extension NSPersistentStore {
    /// The Swift spelling of store types (iOS 15 and later): `.inMemory`, `.sqlite`, `.binary`, `.xml`.
    public struct StoreType: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let inMemory = StoreType(rawValue: NSInMemoryStoreType)
        public static let sqlite = StoreType(rawValue: NSSQLiteStoreType)
        public static let binary = StoreType(rawValue: NSBinaryStoreType)
        public static let xml = StoreType(rawValue: NSXMLStoreType)
    }
}

/// How a store type opens its engine: given the frozen model, the store's URL (if any), options
/// and fresh metadata for a new store.
typealias StoreEngineFactory = @Sendable (NSManagedObjectModel, URL?, [AnyHashable: Any], StoreMetadata) throws -> any PersistentStoreEngine

/// How a store type is opened: a built-in engine, or a store class a user registered.
enum StoreTypeRegistration {
    case engine(StoreEngineFactory)
    case storeClass(NSPersistentStore.Type)
}

/// The store types a coordinator can open, by type name.
enum StoreTypeRegistry {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var registrations: [String: StoreTypeRegistration] = [
        NSInMemoryStoreType: .engine { model, _, options, metadata in
            InMemoryStore(model: model, metadata: metadata, recordsHistory: NSPersistentStoreCoordinator.tracksHistory(options))
        },
        NSBinaryStoreType: .engine(openBinaryStore),
        NSSQLiteStoreType: .engine(openSQLiteStore),
        NSAppleSQLiteStoreType: .engine(openAppleSQLiteStore),
        NSXMLStoreType: .engine(openXMLStore),
    ]
    /// Engines of other modules, by type, for what the coordinator asks beside opening.
    nonisolated(unsafe) private static var providers: [String: StoreEngineProvider] = [:]

    /// Whether `NSSQLiteStoreType` at `url` means Apple's layout: the file is there and is an
    /// SQLite database (`Formats/apple-sqlite-store.md` §2).
    static func holdsAppleSQLiteStore(_ url: URL?) -> Bool {
        guard let url, url.isFileURL else { return false }
        return AppleSQLiteStore.isSQLiteFile(atPath: url.path)
    }

    /// `NSSQLiteStoreType`: Apple's layout for an existing SQLite file, the binary store otherwise.
    private static let openSQLiteStore: StoreEngineFactory = { model, url, options, metadata in
        if holdsAppleSQLiteStore(url) { return try openAppleSQLiteStore(model, url, options, metadata) }
        return try openBinaryStore(model, url, options, metadata)
    }

    /// Opens (or creates) a store in Apple's SQLite layout; honours ``NSReadOnlyPersistentStoreOption``
    /// and ``NSPersistentStoreTimeoutOption``.
    private static let openAppleSQLiteStore: StoreEngineFactory = { model, url, options, metadata in
        guard let url, url.isFileURL else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, "an SQLite store needs a file URL; got \(url?.absoluteString ?? "none")")
        }
        var settings = AppleSQLiteStoreOptions()
        settings.readOnly = (options[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        if let timeout = lockTimeout(options) { settings.lockTimeout = timeout }
        return try mapStoreError { () throws(StoreError) -> any PersistentStoreEngine in
            try AppleSQLiteStore(path: url.path, model: model, metadata: metadata, options: settings)
        }
    }

    /// Opens an XML store; honours ``NSReadOnlyPersistentStoreOption``.
    private static let openXMLStore: StoreEngineFactory = { model, url, options, metadata in
        guard let url, url.isFileURL else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, "an XML store needs a file URL; got \(url?.absoluteString ?? "none")")
        }
        var settings = XMLStoreOptions()
        settings.fileSystem = PrivateStoreOption.fileSystem(options)
        settings.readOnly = (options[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        settings.recordsHistory = NSPersistentStoreCoordinator.tracksHistory(options)
        if let timeout = lockTimeout(options) { settings.lockTimeout = timeout }
        return try mapStoreError { () throws(StoreError) -> any PersistentStoreEngine in
            try XMLStore(path: url.path, model: model, metadata: metadata, options: settings)
        }
    }

    /// Apple's ``NSPersistentStoreTimeoutOption`` in seconds (a `Double` or an `Int`), if given.
    static func lockTimeout(_ options: [AnyHashable: Any]) -> Double? {
        if let timeout = options[NSPersistentStoreTimeoutOption] as? Double { return max(0, timeout) }
        if let timeout = options[NSPersistentStoreTimeoutOption] as? Int { return Double(max(0, timeout)) }
        return nil
    }

    /// Opens a binary store with the options of `options`.
    private static let openBinaryStore: StoreEngineFactory = { model, url, options, metadata in
        guard let url, url.isFileURL else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, "a binary store needs a file URL; got \(url?.absoluteString ?? "none")")
        }
        var settings = BinaryStoreOptions()
        settings.fileSystem = PrivateStoreOption.fileSystem(options)
        settings.readOnly = (options[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        if let durability = options[NSBinaryStoreDurabilityOption] as? String {
            guard let value = BinaryStoreOptions.Durability(rawValue: durability.lowercased()) else {
                throw coreDataError(NSPersistentStoreInvalidTypeError, "\(NSBinaryStoreDurabilityOption) must be \"full\" or \"normal\", not \"\(durability)\"")
            }
            settings.durability = value
        } else if let pragmas = options[NSSQLitePragmasOption] as? [String: Any],
                  let synchronous = (pragmas["synchronous"] as? String)?.uppercased(), synchronous == "NORMAL" || synchronous == "OFF" {
            settings.durability = .normal
        }
        if let bytes = options[NSBinaryStorePageCacheSizeOption] as? Int { settings.pageCacheBytes = max(0, bytes) }
        if let wait = options[NSBinaryStoreWaitForLockOption] as? Bool { settings.waitForLock = wait }
        if (options[NSBinaryStoreSalvageDamagedLogOption] as? Bool) == true {
            guard settings.readOnly else {
                throw coreDataError(NSPersistentStoreInvalidTypeError, "\(NSBinaryStoreSalvageDamagedLogOption) needs \(NSReadOnlyPersistentStoreOption): a salvaged store holds only the saves before the damage and must not be written")
            }
            settings.salvagesDamagedLog = true
        }
        if let exclusive = options[NSBinaryStoreExclusiveAccessOption] as? Bool { settings.exclusiveAccess = exclusive }
        if let timeout = lockTimeout(options) { settings.lockTimeout = timeout }
        settings.recordsHistory = NSPersistentStoreCoordinator.tracksHistory(options)
        if let threshold = options[NSBinaryStoreCheckpointThresholdOption] as? Int { settings.checkpointThreshold = max(4096, threshold) }
        return try mapStoreError { () throws(StoreError) -> any PersistentStoreEngine in
            try BinaryStore(path: url.path, model: model, metadata: metadata, options: settings)
        }
    }

    static func registration(for type: String) -> StoreTypeRegistration? {
        if let found = lock.withLock({ registrations[type] }) { return found }
        // A store type whose engine is in another module registers itself when that module is
        // linked (`StoreEngineRegistering`).
        guard providingModules[type] != nil else { return nil }
        discover(type)
        return lock.withLock { registrations[type] }
    }

    /// Registers an engine another module provides.
    static func register(_ type: String, provider: StoreEngineProvider) {
        lock.lock()
        defer { lock.unlock() }
        registrations[type] = .engine(provider.open)
        providers[type] = provider
    }

    /// The provider registered for `type`, without discovery.
    static func registeredProvider(_ type: String) -> StoreEngineProvider? {
        lock.withLock { providers[type] }
    }

    /// Registers an engine factory for a type name (tests and built-in types).
    static func register(_ type: String, _ factory: @escaping StoreEngineFactory) {
        lock.lock()
        defer { lock.unlock() }
        registrations[type] = .engine(factory)
    }

    /// Registers (or, with `nil`, removes) a store class for a type name.
    static func register(_ type: String, storeClass: NSPersistentStore.Type?) {
        lock.lock()
        defer { lock.unlock() }
        registrations[type] = storeClass.map { .storeClass($0) }
    }

    static var registeredTypes: [String] {
        lock.lock()
        defer { lock.unlock() }
        return registrations.keys.sorted()
    }
}

/// Options the library passes to itself (and its tests), never documented to users.
package enum PrivateStoreOption {
    /// The `NSStoreUUIDKey` a new store gets instead of a fresh one (a migrated store keeps its source's).
    static let storeUUID = "_CoreDataLinuxNewStoreUUID"
    /// The ``StoreFileSystem`` the binary and XML stores, metadata reads and migration use
    /// instead of the real one: the crash and fault suites pass theirs.
    package static let fileSystem = "_CoreDataLinuxFileSystem"
    /// The model configuration an in-place migration's stores are added with.
    static let configuration = "_CoreDataLinuxMigrationConfiguration"

    /// The file system `options` name, else the real one.
    static func fileSystem(_ options: [AnyHashable: Any]?) -> any StoreFileSystem {
        (options?[fileSystem] as? any StoreFileSystem) ?? POSIXFileSystem()
    }
}
