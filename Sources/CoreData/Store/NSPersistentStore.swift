import CoreDataModel
import CoreDataStorage
import Foundation

/// One store added to a coordinator: its type, location, configuration and metadata, in front
/// of the engine that keeps the rows.
///
/// Matches Apple's `NSPersistentStore`. Threading: safe to use from any thread.
open class NSPersistentStore: NSObject, @unchecked Sendable {
    /// The store's type name (``NSInMemoryStoreType``, …).
    public let type: String
    /// The store's location; `nil` for a store without a file.
    public private(set) var url: URL?
    /// The configuration whose entities the store holds; `nil` or `"Default"` for all.
    public let configurationName: String
    /// The options the store was added with.
    public let options: [AnyHashable: Any]?
    /// The store's UUID, also under `NSStoreUUIDKey` in its metadata.
    public let identifier: String
    /// The coordinator the store belongs to.
    public internal(set) weak var persistentStoreCoordinator: NSPersistentStoreCoordinator?
    /// Whether saves to the store are refused.
    public var isReadOnly: Bool

    let engine: any PersistentStoreEngine

    init(type: String, url: URL?, configurationName: String?, options: [AnyHashable: Any]?, engine: any PersistentStoreEngine, identifier: String) {
        self.type = type
        self.url = url
        self.configurationName = configurationName ?? "PF_DEFAULT_CONFIGURATION_NAME"
        self.options = options
        self.engine = engine
        self.identifier = identifier
        self.isReadOnly = (options?[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        super.init()
    }

    /// The store's metadata (`NSStoreTypeKey`, `NSStoreUUIDKey`, `NSStoreModelVersionHashes`, …).
    public var metadata: [String: Any]! {
        get { (try? engine.metadata().values) ?? [:] }
        set { try? engine.setMetadata(StoreMetadata(newValue ?? [:])) }
    }

    open override var description: String {
        "<NSPersistentStore \(type) \(identifier) at \(url?.path ?? "no file") configuration \(configurationName)>"
    }
}
