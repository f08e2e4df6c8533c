/// The saved state of one object: every persistent property by name, and a version that
/// increases with each save of the object (for optimistic locking).
public struct StoreRow: Hashable, Sendable {
    /// The object the row belongs to.
    public var objectID: StoreObjectID
    /// The number of times the object has been saved; 1 after its insert.
    public var version: Int64
    /// Persistent property values by property name. A missing name reads as ``StoreValue/null``.
    public var values: [String: StoreValue]

    public init(objectID: StoreObjectID, version: Int64, values: [String: StoreValue]) {
        self.objectID = objectID
        self.version = version
        self.values = values
    }

    /// The value of a property, ``StoreValue/null`` when it has none.
    public subscript(property: String) -> StoreValue { values[property] ?? .null }
}
