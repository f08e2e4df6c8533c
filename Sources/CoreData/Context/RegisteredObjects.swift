/// A context's objects by ID (what Apple calls its registered objects).
///
/// A dictionary keyed by `NSManagedObjectID` itself compares keys through `isEqual(_:)`, which
/// casts its `Any?` argument back to an ID; a lookup compares against every occupied slot it
/// probes, so those casts were most of what registering an object cost. The keys here compare
/// by identity first, then by the ID's key, with the same meaning as `isEqual(_:)`.
struct RegisteredObjects: ExpressibleByDictionaryLiteral {
    typealias Key = NSManagedObjectID
    typealias Value = NSManagedObject

    struct IDKey: Hashable {
        let id: NSManagedObjectID

        static func == (lhs: IDKey, rhs: IDKey) -> Bool { lhs.id === rhs.id || lhs.id.key == rhs.id.key }

        func hash(into hasher: inout Hasher) { hasher.combine(id.hash) }
    }

    private var table: [IDKey: NSManagedObject] = [:]

    init(dictionaryLiteral elements: (NSManagedObjectID, NSManagedObject)...) {
        for (id, object) in elements { table[IDKey(id: id)] = object }
    }

    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get { table[IDKey(id: id)] }
        set { table[IDKey(id: id)] = newValue }
    }

    var count: Int { table.count }

    /// Makes room for `capacity` objects, so a large fetch does not rehash as it registers.
    mutating func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }

    /// The IDs, in no particular order.
    var keys: [NSManagedObjectID] { table.keys.map(\.id) }

    /// The objects, in no particular order.
    var values: Dictionary<IDKey, NSManagedObject>.Values { table.values }

    /// The first ID and object that satisfy `predicate`, in no particular order.
    func first(where predicate: ((key: NSManagedObjectID, value: NSManagedObject)) throws -> Bool) rethrows -> (key: NSManagedObjectID, value: NSManagedObject)? {
        for (key, value) in table where try predicate((key.id, value)) { return (key.id, value) }
        return nil
    }
}
