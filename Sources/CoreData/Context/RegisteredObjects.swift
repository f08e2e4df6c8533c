/// A context's objects by ID (what Apple calls its registered objects).
///
/// A dictionary keyed by `NSManagedObjectID` itself compares keys through `isEqual(_:)`, which
/// casts its `Any?` argument back to an ID; a lookup compares against every occupied slot it
/// probes, so those casts were most of what registering an object cost. The keys here compare
/// by identity first, then by the ID's key, with the same meaning as `isEqual(_:)`.
///
/// Unless ``retainsObjects`` is set (Apple's `retainsRegisteredObjects`), an entry holds its
/// object weakly: the context keeps objects with pending changes alive through its pending
/// sets, and lets every other object go when nothing else references it. A released object's
/// entry reads as absent at once; the entry itself is removed by ``removeReleased()``, which the
/// context runs as the table grows, so that the store hears of the release once.
///
/// Why weak references rather than unretained pointers removed by the object's `deinit`: an
/// object may be released on any thread, so an unretained table would need a lock on every
/// registration and lookup, a try-retain that fails for an object already in its `deinit`, and
/// an entry whose key always matched the object's current ID, or a lookup would touch freed
/// memory. A weak reference is safe against all of that by construction. Its cost is the side
/// table Swift allocates for an object on its first weak reference, after which every retain and
/// release of the object takes the runtime's slow path: callgrind counts about 2.5k instructions
/// more per object for the benchmark's managed fetch (15.2k before) and about 5k more per
/// imported object, and the fetch's peak memory grows by about 75 bytes per object.
struct RegisteredObjects {
    typealias Key = NSManagedObjectID
    typealias Value = NSManagedObject

    struct IDKey: Hashable {
        let id: NSManagedObjectID

        static func == (lhs: IDKey, rhs: IDKey) -> Bool { lhs.id === rhs.id || lhs.id.key == rhs.id.key }

        func hash(into hasher: inout Hasher) { hasher.combine(id.hash) }
    }

    /// One registered object: held strongly (``retainsObjects``) or weakly.
    private struct Entry {
        weak var unretained: NSManagedObject?
        var retained: NSManagedObject?

        init(_ object: NSManagedObject, retains: Bool) {
            if retains { retained = object } else { unretained = object }
        }

        var object: NSManagedObject? { retained ?? unretained }
    }

    /// The smallest table ``needsSweep`` reports; below it a sweep costs more than it frees.
    private static let minimumSweepThreshold = 1024

    private var table: [IDKey: Entry] = [:]
    /// The table size at which released entries are next looked for: twice the entries left by
    /// the last sweep, so that sweeping costs O(1) per registration, amortized.
    private var sweepThreshold = RegisteredObjects.minimumSweepThreshold

    /// Whether entries hold their objects strongly (Apple's `retainsRegisteredObjects`).
    private(set) var retainsObjects = false

    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get { table[IDKey(id: id)]?.object }
        set {
            if let newValue {
                table[IDKey(id: id)] = Entry(newValue, retains: retainsObjects)
            } else {
                table[IDKey(id: id)] = nil
            }
        }
    }

    /// Whether `id` has an entry whose object was released and that ``removeReleased()`` has not
    /// removed yet.
    func holdsReleased(_ id: NSManagedObjectID) -> Bool {
        guard let entry = table[IDKey(id: id)] else { return false }
        return entry.object == nil
    }

    /// The number of entries, released ones not yet removed included.
    var count: Int { table.count }

    /// Makes room for `capacity` objects, so a large fetch does not rehash as it registers.
    mutating func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }

    /// The IDs of every entry, released objects not yet removed included (so that a context
    /// letting go of all of them reports each ID once), in no particular order.
    var keys: [NSManagedObjectID] { table.keys.map(\.id) }

    /// The objects still alive, in no particular order.
    var values: [NSManagedObject] { table.values.compactMap(\.object) }

    /// The first ID and live object that satisfy `predicate`, in no particular order.
    func first(where predicate: ((key: NSManagedObjectID, value: NSManagedObject)) throws -> Bool) rethrows -> (key: NSManagedObjectID, value: NSManagedObject)? {
        for (key, entry) in table {
            guard let object = entry.object else { continue }
            if try predicate((key.id, object)) { return (key.id, object) }
        }
        return nil
    }

    /// Forgets every entry; keeps ``retainsObjects``.
    mutating func removeAll() {
        table = [:]
        sweepThreshold = Self.minimumSweepThreshold
    }

    /// Whether the table has grown enough since the last sweep for ``removeReleased()`` to run.
    var needsSweep: Bool { table.count >= sweepThreshold }

    /// Removes the entries of released objects and returns their IDs.
    ///
    /// Complexity: O(number of entries).
    mutating func removeReleased() -> [NSManagedObjectID] {
        var released: [NSManagedObjectID] = []
        for (key, entry) in table where entry.object == nil { released.append(key.id) }
        for id in released { table[IDKey(id: id)] = nil }
        sweepThreshold = max(Self.minimumSweepThreshold, 2 * table.count)
        return released
    }

    /// Holds every live object strongly (`true`) or weakly (`false`) from now on; returns the IDs
    /// of entries whose objects were already released, which it removes.
    mutating func setRetainsObjects(_ retains: Bool) -> [NSManagedObjectID] {
        guard retains != retainsObjects else { return [] }
        retainsObjects = retains
        let released = removeReleased()
        for (key, entry) in table {
            guard let object = entry.object else { continue }
            table[key] = Entry(object, retains: retains)
        }
        return released
    }
}
