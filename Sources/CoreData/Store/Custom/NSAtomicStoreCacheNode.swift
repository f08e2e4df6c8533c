import Foundation

/// One object of a user's ``NSAtomicStore`` as the store keeps it in memory: its ID and its
/// property values.
///
/// Matches Apple's `NSAtomicStoreCacheNode`. Values are keyed by property name: an attribute's
/// value; a to-one relationship's destination as another cache node (or `nil`); a to-many
/// relationship's destinations as a collection of cache nodes (a `Set`, an `NSSet`, an
/// `NSOrderedSet` for an ordered relationship, or an array). Where Apple requires cache nodes,
/// relationship values here may also be managed objects or object IDs, which is what a store
/// reads from the objects it is given: the destination need not have a node yet.
///
/// Subclass it to keep values another way: override `value(forKey:)` and `setValue(_:forKey:)`.
/// Threading: the framework reads nodes while it holds the store, so change them only inside
/// the store's own calls (`load()`, `newCacheNode(for:)`, `updateCacheNode(_:from:)`).
open class NSAtomicStoreCacheNode: NSObject, @unchecked Sendable {
    /// The object the node holds.
    public internal(set) var objectID: NSManagedObjectID

    /// The node's values by property name, read and written by `value(forKey:)` and
    /// `setValue(_:forKey:)`. `nil` until set or until a value is stored.
    open var propertyCache: NSMutableDictionary?

    /// Creates an empty node for `moid`.
    public init(objectID moid: NSManagedObjectID) {
        self.objectID = moid
        super.init()
    }

    /// The value stored for `key`, or `nil`.
    open func value(forKey key: String) -> Any? {
        propertyCache?.object(forKey: key)
    }

    /// Stores `value` for `key`; `nil` removes it.
    open func setValue(_ value: Any?, forKey key: String) {
        if let value {
            let cache = propertyCache ?? NSMutableDictionary()
            cache.setObject(value, forKey: key)
            propertyCache = cache
        } else {
            propertyCache?.removeObject(forKey: key)
        }
    }
}
