import CoreDataModel

/// The identity of one stored object inside a store: its entity and a primary key the store
/// handed out. Stores exchange rows keyed by it; the object graph wraps it in `NSManagedObjectID`.
///
/// The entity is held as its ``EntityNumber``, so an ID is 16 bytes with no reference count.
/// Hot paths build IDs with ``init(entity:primaryKey:)`` from a number they made once;
/// ``init(entityName:primaryKey:)`` takes a lock to look the name up.
///
/// Primary keys start at 1 and are never reused within a store.
public struct StoreObjectID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The entity of the object (the most specific one, never an abstract parent).
    public var entity: EntityNumber
    /// The object's key, unique within the store for that entity.
    public var primaryKey: Int64

    /// An ID of the entity with number `entity`: no lock, no lookup.
    public init(entity: EntityNumber, primaryKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
    }

    /// An ID of the entity named `entityName`. Looks the name's number up under a lock: make
    /// the number once (``EntityNumber``) where IDs are made per row.
    public init(entityName: String, primaryKey: Int64) {
        self.init(entity: EntityNumber(entityName), primaryKey: primaryKey)
    }

    /// The name of the entity of the object.
    public var entityName: String {
        get { entity.name }
        set { entity = EntityNumber(newValue) }
    }

    /// By entity name, then primary key: the order does not depend on the order in which the
    /// process first saw the names.
    public static func < (lhs: StoreObjectID, rhs: StoreObjectID) -> Bool {
        // The raw numbers, not `EntityNumber`'s `==`: a call into another module per comparison
        // of a sort.
        lhs.entity.rawValue == rhs.entity.rawValue ? lhs.primaryKey < rhs.primaryKey : lhs.entityName < rhs.entityName
    }

    public var description: String { "\(entityName)/p\(primaryKey)" }
}
