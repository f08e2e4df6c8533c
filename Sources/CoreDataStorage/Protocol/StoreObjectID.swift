/// The identity of one stored object inside a store: its entity and a primary key the store
/// handed out. Stores exchange rows keyed by it; the object graph wraps it in `NSManagedObjectID`.
///
/// Primary keys start at 1 and are never reused within a store.
public struct StoreObjectID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The name of the entity of the object (the most specific one, never an abstract parent).
    public var entityName: String
    /// The object's key, unique within the store for that entity.
    public var primaryKey: Int64

    public init(entityName: String, primaryKey: Int64) {
        self.entityName = entityName
        self.primaryKey = primaryKey
    }

    public static func < (lhs: StoreObjectID, rhs: StoreObjectID) -> Bool {
        (lhs.entityName, lhs.primaryKey) < (rhs.entityName, rhs.primaryKey)
    }

    public var description: String { "\(entityName)/p\(primaryKey)" }
}
