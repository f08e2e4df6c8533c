import CoreDataModel
import CoreDataStorage
import Foundation

/// One store added to a coordinator: its type, location, configuration and metadata, in front
/// of the engine that keeps the rows.
///
/// Matches Apple's `NSPersistentStore`. The built-in store types are made by the coordinator;
/// a store of your own subclasses ``NSIncrementalStore`` or ``NSAtomicStore`` and is registered
/// with ``NSPersistentStoreCoordinator/registerStoreClass(_:type:)``.
///
/// Threading: safe to use from any thread.
open class NSPersistentStore: NSObject, @unchecked Sendable {
    /// The store's type name (``NSInMemoryStoreType``, or the name a store class was registered
    /// with). Subclasses may override it, as on Apple platforms.
    open var type: String { registeredType }
    /// The store's location; `nil` for a store without a file.
    public internal(set) var url: URL?
    /// The configuration whose entities the store holds; `"PF_DEFAULT_CONFIGURATION_NAME"` for all.
    public let configurationName: String
    /// Apple's name for the configuration of every entity.
    static let defaultConfigurationName = "PF_DEFAULT_CONFIGURATION_NAME"
    /// The options the store was added with.
    public let options: [AnyHashable: Any]?
    /// The store's UUID, also under `NSStoreUUIDKey` in its metadata.
    ///
    /// Apple lets subclasses set it; here the coordinator sets it from the metadata when the store
    /// is added, because object IDs and their URIs carry it.
    public internal(set) var identifier: String {
        didSet {
            identifierNumber = StoreIdentifierNumbers.number(for: identifier)
            // Set only while the store is added, before any object is fetched from it; a handle
            // made before then must not name the old identifier.
            fetchedHandle = FetchedStoreHandle(self)
        }
    }
    /// ``identifier``'s number (``StoreIdentifierNumbers``), part of every registry key of the
    /// store's objects.
    private(set) var identifierNumber: UInt32
    /// A weak reference to this store that its fetched objects share (``FetchedStoreHandle``).
    private(set) lazy var fetchedHandle = FetchedStoreHandle(self)
    /// The coordinator the store belongs to.
    public internal(set) weak var persistentStoreCoordinator: NSPersistentStoreCoordinator?
    /// Whether saves to the store are refused.
    public var isReadOnly: Bool

    /// The type name the store was added with.
    var registeredType: String
    let engine: any PersistentStoreEngine
    /// Whether contexts tell this store which of its objects they hold
    /// (``contextDidRegister(_:)``); only stores that subclass ``NSIncrementalStore`` listen.
    var observesRegistrations: Bool { false }

    init(type: String, url: URL?, configurationName: String?, options: [AnyHashable: Any]?, engine: any PersistentStoreEngine, identifier: String) {
        self.registeredType = type
        self.url = url
        self.configurationName = configurationName ?? Self.defaultConfigurationName
        self.options = options
        self.engine = engine
        self.identifier = identifier
        self.identifierNumber = StoreIdentifierNumbers.number(for: identifier)
        self.isReadOnly = (options?[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        super.init()
    }

    /// Creates a store for `root`'s model (Apple's designated initializer).
    ///
    /// Subclass ``NSIncrementalStore`` or ``NSAtomicStore`` rather than this class: a direct
    /// subclass has no way to keep objects, and adding it fails with
    /// `NSPersistentStoreInvalidTypeError`. The coordinator calls this initializer for a
    /// registered store class; `url` is the URL given to `addPersistentStore`, or
    /// `file:///dev/null` when none was given (Apple requires one).
    public required init(persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?, at url: URL, options: [AnyHashable: Any]? = nil) {
        self.registeredType = String(describing: Self.self)
        self.url = url
        self.configurationName = name ?? Self.defaultConfigurationName
        self.options = options
        self.engine = UnsupportedStoreEngine(className: String(describing: Self.self))
        let identifier = UUID().uuidString
        self.identifier = identifier
        self.identifierNumber = StoreIdentifierNumbers.number(for: identifier)
        self.isReadOnly = (options?[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        self.persistentStoreCoordinator = root
        super.init()
    }

    /// The store's metadata (`NSStoreTypeKey`, `NSStoreUUIDKey`, `NSStoreModelVersionHashes`, …).
    ///
    /// A subclass of ``NSIncrementalStore`` sets it in `loadMetadata()`, one of ``NSAtomicStore``
    /// in `load()`; the coordinator fills in `NSStoreTypeKey` and `NSStoreUUIDKey` if they are missing.
    open var metadata: [String: Any]! {
        get { (try? engine.metadata().values) ?? [:] }
        set {
            try? engine.setMetadata(StoreMetadata(newValue ?? [:]))
            // While the store is being added, its UUID follows its metadata, so that object IDs
            // a user's store makes while loading carry the identifier the store will keep.
            if isBeingAdded, let uuid = newValue?[NSStoreUUIDKey] as? String { identifier = uuid }
        }
    }

    /// Set by the coordinator while a store of a registered class loads.
    var isBeingAdded = false

    /// Called after the store was added to `coordinator`. Does nothing; subclasses may override.
    open func didAdd(to coordinator: NSPersistentStoreCoordinator) {}

    /// Called before the store is removed from `coordinator`. Does nothing; subclasses may override.
    open func willRemove(from coordinator: NSPersistentStoreCoordinator?) {}

    /// Makes a store of a registered class ready before the coordinator adds it: a user's store
    /// loads its metadata (and an atomic store its file) here. The built-in stores are ready
    /// when made. `fresh` is the metadata a new store starts with.
    func prepareToAdd(freshMetadata fresh: StoreMetadata) throws {
        throw coreDataError(
            NSPersistentStoreInvalidTypeError,
            "\(Swift.type(of: self)) subclasses NSPersistentStore directly; subclass NSIncrementalStore or NSAtomicStore for a store of your own")
    }

    /// A context now holds these objects of the store. Only ``NSIncrementalStore`` listens.
    func contextDidRegister(_ objectIDs: [NSManagedObjectID]) {}

    /// A context let go of these objects of the store. Only ``NSIncrementalStore`` listens.
    func contextDidUnregister(_ objectIDs: [NSManagedObjectID]) {}

    open override var description: String {
        "<\(Swift.type(of: self)) \(type) \(identifier) at \(url?.path ?? "no file") configuration \(configurationName)>"
    }
}

/// The engine of a store class that subclasses `NSPersistentStore` directly: it refuses everything.
private final class UnsupportedStoreEngine: PersistentStoreEngine {
    let className: String

    init(className: String) { self.className = className }

    private var refusal: StoreError {
        .io(detail: "\(className) subclasses NSPersistentStore directly; subclass NSIncrementalStore or NSAtomicStore")
    }

    func metadata() throws(StoreError) -> StoreMetadata { throw refusal }
    func setMetadata(_ metadata: StoreMetadata) throws(StoreError) { throw refusal }
    func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult { throw refusal }
    func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] { throw refusal }
    func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? { throw refusal }
    func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] { throw refusal }
    func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] { throw refusal }
    func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] { throw refusal }
    func close() throws(StoreError) {}
}
