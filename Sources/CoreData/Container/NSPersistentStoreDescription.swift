import Foundation

/// How a container adds one store: its type, location, configuration and options.
///
/// Matches Apple's `NSPersistentStoreDescription`.
open class NSPersistentStoreDescription: NSObject, @unchecked Sendable {
    /// The store type; ``NSPersistentContainer`` descriptions default to the embedded store type
    /// of this library, ``NSBinaryStoreType``.
    public var type: String = NSPersistentContainer.defaultStoreType
    /// The store's file.
    public var url: URL?
    /// The model configuration the store holds; `nil` for all entities.
    public var configuration: String?
    /// Options passed to the coordinator.
    public var options: [String: Any] = [:]
    /// Whether the store is opened read-only.
    public var isReadOnly = false
    /// Seconds to wait for a store lock (kept for source compatibility).
    public var timeout: TimeInterval = 240
    /// Whether `loadPersistentStores` adds the store on a background queue.
    public var shouldAddStoreAsynchronously = false
    /// Whether an out-of-date store is migrated when it is added.
    public var shouldMigrateStoreAutomatically = true {
        didSet { options[NSMigratePersistentStoresAutomaticallyOption] = shouldMigrateStoreAutomatically }
    }
    /// Whether a mapping model is inferred when none is found.
    public var shouldInferMappingModelAutomatically = true {
        didSet { options[NSInferMappingModelAutomaticallyOption] = shouldInferMappingModelAutomatically }
    }

    /// Creates a description for a store at `url`.
    public init(url: URL) {
        self.url = url
        super.init()
    }

    /// Creates a description with no location (for an in-memory store).
    public override init() { super.init() }

    /// Sets an option (Apple's `setOption(_:forKey:)`).
    public func setOption(_ option: NSObject?, forKey key: String) { options[key] = option }

    open override var description: String {
        "<NSPersistentStoreDescription type \(type) url \(url?.path ?? "nil") configuration \(configuration ?? "nil")>"
    }
}
