import CoreDataModel
import CoreDataStorage
import Foundation

/// The PostgreSQL store type: the model's objects in a PostgreSQL database that several app
/// servers share (`Formats/postgresql-store.md`). The store's URL is
/// `postgres://user@host:5432/database?schema=app`.
///
/// The engine is in the `CoreDataPostgreSQL` product: add it to the app's target (and
/// `import CoreDataPostgreSQL` where the store is configured); apps that never use it never build
/// its PostgreSQL client. Without it, adding a store of this type fails with
/// `NSPersistentStoreInvalidTypeError` naming the product.
public let NSPostgreSQLStoreType = "PostgreSQL"

/// A store engine that a module other than `CoreData` provides (the PostgreSQL store), with what
/// the coordinator asks of a store type beside opening it.
///
/// Threading: the closures are called from any thread.
@_spi(StoreEngines)
public struct StoreEngineProvider: Sendable {
    /// Opens (or creates) the store: the coordinator's frozen model, the store's URL, its
    /// options, and fresh metadata for a new store.
    public typealias Open = @Sendable (NSManagedObjectModel, URL?, [AnyHashable: Any], StoreMetadata) throws -> any PersistentStoreEngine
    public var open: Open
    /// Reads a store's metadata without a model (`metadataForPersistentStore(ofType:at:options:)`).
    public var metadata: @Sendable (URL, [AnyHashable: Any]) throws -> [String: Any]
    /// Deletes a store (`destroyPersistentStore(at:ofType:options:)`).
    public var destroy: @Sendable (URL, [AnyHashable: Any]) throws -> Void

    /// How a store of this type is migrated in place: into a staging store, installed in one step.
    public struct Staging: Sendable {
        /// The URL of step `n`'s staging store for the store at a URL.
        public var url: @Sendable (URL, Int) throws -> URL
        /// Puts the complete staging store (first URL) in place of the store (second URL),
        /// atomically: the old store stays whole if it fails.
        public var install: @Sendable (URL, URL, [AnyHashable: Any]) throws -> Void
        public init(url: @escaping @Sendable (URL, Int) throws -> URL, install: @escaping @Sendable (URL, URL, [AnyHashable: Any]) throws -> Void) {
            self.url = url
            self.install = install
        }
    }
    /// Migration in place; `nil` for a type whose stores are not migrated.
    public var staging: Staging?

    public init(
        open: @escaping Open, metadata: @escaping @Sendable (URL, [AnyHashable: Any]) throws -> [String: Any],
        destroy: @escaping @Sendable (URL, [AnyHashable: Any]) throws -> Void, staging: Staging? = nil
    ) {
        self.open = open
        self.metadata = metadata
        self.destroy = destroy
        self.staging = staging
    }
}

/// A class a store module declares so that the coordinator finds its engines by name, as Apple's
/// runtime finds classes: `CoreDataPostgreSQL.PostgreSQLStoreEngines` registers
/// ``NSPostgreSQLStoreType`` the first time a coordinator meets that type, with no call in the app.
@_spi(StoreEngines)
public protocol StoreEngineRegistering: AnyObject {
    /// Registers the module's store types with
    /// ``NSPersistentStoreCoordinator/registerStoreEngine(_:forStoreType:)``.
    static func registerStoreEngines()
}

extension NSPersistentStoreCoordinator {
    /// Registers a store engine under a store type name; a later registration replaces it.
    @_spi(StoreEngines)
    public static func registerStoreEngine(_ provider: StoreEngineProvider, forStoreType type: String) {
        StoreTypeRegistry.register(type, provider: provider)
    }
}

extension StoreTypeRegistry {
    /// The modules that provide a built-in store type's engine, by type: the class that registers
    /// it, and the product to name when the module is not in the app.
    static let providingModules = [NSPostgreSQLStoreType: (registeringClass: "CoreDataPostgreSQL.PostgreSQLStoreEngines", product: "CoreDataPostgreSQL")]

    /// Registers the engine of a type whose module is linked but has not registered yet.
    static func discover(_ type: String) {
        guard let className = providingModules[type]?.registeringClass else { return }
        for mangled in SwiftClassFinder.classes(named: className) {
            if let registering = _typeByName(mangled) as? any StoreEngineRegistering.Type {
                registering.registerStoreEngines()
                return
            }
        }
    }

    /// The provider registered for `type`, discovering its module when needed.
    static func provider(for type: String) -> StoreEngineProvider? {
        if let provider = registeredProvider(type) { return provider }
        discover(type)
        return registeredProvider(type)
    }
}

extension URL {
    /// The store's location as messages name it: a file's path, or a server URL without its
    /// password (a PostgreSQL store's URL may carry one).
    var storeLocation: String { isFileURL ? path : passwordRedacted }
}
