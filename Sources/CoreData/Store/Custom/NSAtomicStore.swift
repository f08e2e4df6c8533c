import CoreDataModel
import CoreDataStorage
import Foundation

/// The base class of a store you write yourself that keeps all its objects in memory and reads
/// and writes its file whole: a JSON file, a property list, a custom format.
///
/// Matches Apple's `NSAtomicStore`. Subclass it, override the methods below, register the class
/// with ``NSPersistentStoreCoordinator/registerStoreClass(_:type:)`` and add a store with that
/// type name and a URL:
///
/// - `load()`: read the file (if there is one); for each object make an ID with
///   ``objectID(for:withReferenceObject:)`` and an ``NSAtomicStoreCacheNode`` holding its values,
///   and register the nodes with ``addCacheNodes(_:)``. Set ``NSPersistentStore/metadata`` from
///   the file too (a new store starts with fresh metadata).
/// - `newReferenceObject(for:)`: a unique reference (a string, a number) for a new object.
/// - `newCacheNode(for:)` and `updateCacheNode(_:from:)`: copy a saved object's values into a
///   node (new or existing).
/// - `willRemoveCacheNodes(_:)` (optional): nodes of deleted objects are about to go.
/// - `save()`: write ``cacheNodes()`` and the metadata to the file.
///
/// The framework keeps the nodes and answers fetches from them (predicates, sorting, offsets and
/// limits run in memory, as Apple's do); a save calls `newCacheNode(for:)` for each inserted
/// object, `updateCacheNode(_:from:)` for each updated one and `willRemoveCacheNodes(_:)` for the
/// deleted ones, then `save()`. If `save()` throws, the nodes are put back as they were.
///
/// Differences from Apple's:
/// - The objects passed to `newCacheNode(for:)`, `updateCacheNode(_:from:)` and
///   `newReferenceObject(for:)` are working copies with the saved values, not the saving
///   context's instances (`newReferenceObject(for:)` sees attribute values only).
/// - Relationship values in nodes may be managed objects or object IDs as well as cache nodes.
/// - Reference objects must be `Hashable`; see ``NSIncrementalStore`` for which IDs hold across runs.
/// - The framework checks versions (optimistic locking) and uniqueness constraints over the
///   nodes, as the in-memory store does.
/// - `newCacheNode(for:)` and `updateCacheNode(_:from:)` have working defaults (every stored
///   property copied into the node); Apple requires overrides.
///
/// Threading: the framework calls the store from one thread at a time.
open class NSAtomicStore: NSPersistentStore, @unchecked Sendable {
    /// The engine that keeps the nodes and forwards saves to this object's overrides.
    private let adapter: AtomicStoreEngine

    /// Creates the store (the coordinator calls this for a registered class).
    public required init(persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?, at url: URL, options: [AnyHashable: Any]? = nil) {
        let adapter = AtomicStoreEngine()
        self.adapter = adapter
        super.init(
            type: String(describing: Self.self), url: url, configurationName: name, options: options,
            engine: adapter, identifier: UUID().uuidString)
        self.persistentStoreCoordinator = root
        adapter.store = self
    }

    // MARK: Overrides

    /// Reads the store's file into cache nodes (see the class description). The default throws:
    /// every store must override it.
    open func load() throws {
        throw mustOverride("load()")
    }

    /// Writes every cache node and the metadata to the store's file. The default throws: every
    /// store must override it.
    open func save() throws {
        throw mustOverride("save()")
    }

    /// A new node for a newly inserted object. The default copies every stored property of the
    /// object into a new node (relationships as object IDs).
    open func newCacheNode(for managedObject: NSManagedObject) -> NSAtomicStoreCacheNode {
        let node = NSAtomicStoreCacheNode(objectID: managedObject.objectID)
        updateCacheNode(node, from: managedObject)
        return node
    }

    /// Copies an updated object's values into its node. The default copies every stored property
    /// (relationships as object IDs).
    open func updateCacheNode(_ node: NSAtomicStoreCacheNode, from managedObject: NSManagedObject) {
        for (name, property) in managedObject.entity.propertiesByName where !property.isTransient {
            let value = managedObject.value(forKey: name)
            switch value {
            case let object as NSManagedObject:
                node.setValue(object.objectID, forKey: name)
            case let set as Set<NSManagedObject>:
                node.setValue(set.map(\.objectID), forKey: name)
            case let ordered as NSOrderedSet:
                node.setValue(NSOrderedSet(array: ordered.array.compactMap { ($0 as? NSManagedObject)?.objectID }), forKey: name)
            default:
                node.setValue(value, forKey: name)
            }
        }
    }

    /// A reference object for a new object: unique among the store's objects of its entity. The
    /// default is a new UUID string.
    open func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        UUID().uuidString
    }

    /// Called before the nodes of deleted objects are removed. Does nothing by default.
    open func willRemoveCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) {}

    // MARK: Cache nodes and IDs (not overridable, as on Apple platforms)

    /// Every node the store holds. Complexity: O(n).
    public func cacheNodes() -> Set<NSAtomicStoreCacheNode> { adapter.allNodes() }

    /// Registers nodes (in `load()`); a node replaces one with the same object ID.
    public func addCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) { adapter.add(cacheNodes) }

    /// The node of an object, or `nil`. Complexity: O(1).
    public func cacheNode(for objectID: NSManagedObjectID) -> NSAtomicStoreCacheNode? { adapter.node(for: objectID) }

    /// The ID of the object of `entity` the store knows by `data` (a `Hashable` value unique among
    /// the store's objects of the entity). Traps when `data` is not `Hashable`.
    public func objectID(for entity: NSEntityDescription, withReferenceObject data: Any) -> NSManagedObjectID {
        adapter.objectID(for: entity, reference: data)
    }

    /// The reference object `objectID` was made from. Traps for an ID this store did not make.
    public func referenceObject(for objectID: NSManagedObjectID) -> Any {
        adapter.referenceObject(for: objectID)
    }

    // MARK: Framework

    override func prepareToAdd(freshMetadata fresh: StoreMetadata) throws {
        try adapter.setMetadata(fresh)
        try adapter.load { try self.load() }
        adapter.completeMetadata(with: fresh)
        if let uuid = metadata?[NSStoreUUIDKey] as? String { identifier = uuid }
        // Nodes made before load() set the metadata carry the old identifier.
        adapter.rebindNodeIDs()
    }

    private func mustOverride(_ method: String) -> NSError {
        coreDataError(NSPersistentStoreInvalidTypeError, "\(Swift.type(of: self)) must override NSAtomicStore.\(method)")
    }
}
