import CoreDataModel
import CoreDataStorage
import Foundation

/// The in-memory store type: nothing is written to disk.
public let NSInMemoryStoreType = "InMemory"
/// Apple's SQLite store type. There is no SQLite store on Linux; see ``NSPersistentStoreCoordinator/addPersistentStore(ofType:configurationName:at:options:)``.
public let NSSQLiteStoreType = "SQLite"
/// The binary store type (Apple's atomic binary store; here the append-only binary store).
public let NSBinaryStoreType = "Binary"
/// The XML store type.
public let NSXMLStoreType = "XML"

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

/// The store types a coordinator can open, by type name.
enum StoreTypeRegistry {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var factories: [String: StoreEngineFactory] = [
        NSInMemoryStoreType: { model, _, _, metadata in InMemoryStore(model: model, metadata: metadata) },
    ]

    static func factory(for type: String) -> StoreEngineFactory? {
        lock.lock()
        defer { lock.unlock() }
        return factories[type]
    }

    static func register(_ type: String, _ factory: @escaping StoreEngineFactory) {
        lock.lock()
        defer { lock.unlock() }
        factories[type] = factory
    }

    static var registeredTypes: [String] {
        lock.lock()
        defer { lock.unlock() }
        return factories.keys.sorted()
    }
}
