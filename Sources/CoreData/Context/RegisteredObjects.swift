import CSwiftRuntime
import Synchronization

/// A context's objects by ID (what Apple calls its registered objects).
///
/// Keys are values, not `NSManagedObjectID`s (``IDKey``): the entity, the primary key (or the
/// temporary number) and the store identifier's number, with the same meaning as `isEqual(_:)`
/// on IDs. A fetched object is registered and found by its row's key without an ID object,
/// which is made only when someone asks for it (``NSManagedObject/objectID``): an ID cost an
/// allocation, some 700 instructions and 96 bytes per fetched object.
///
/// Unless ``retainsObjects`` is set (Apple's `retainsRegisteredObjects`), an entry holds its
/// object unretained: the context keeps objects with pending changes alive through its pending
/// sets, and lets every other object go when nothing else references it. The object's `deinit`
/// removes its entry (through ``Membership``), so a released object is absent at once; the IDs
/// of released objects whose store asked to hear of releases wait for ``removeReleased()``,
/// which the context runs as they accumulate, so that the store hears of each release once.
///
/// Why unretained entries rather than weak references: a weak reference gives its object a
/// side table, after which every retain and release of the object takes the runtime's slow path
/// (callgrind: about 2.5k instructions per fetched object, 5k per imported one, and 75 bytes).
/// The price of unretained entries is a lock: an object may be released on any thread (a fetch
/// handed to another thread is released there), so every access takes the table's mutex (some
/// 35 instructions uncontended), and a lookup retains its object with the runtime's try-retain,
/// which refuses an object whose `deinit` has begun but not yet taken the lock to remove its
/// entry. Nothing is released while the lock is held: a release can run a `deinit`, which takes
/// the lock again.
struct RegisteredObjects {
    typealias Key = NSManagedObjectID
    typealias Value = NSManagedObject

    struct IDKey: Hashable {
        /// The primary key's bits, or the temporary ID's number.
        let number: UInt64
        /// The entity, by its name's process-wide number, as the ID's `isEqual(_:)` compares it
        /// (a number, not the description's identity, so the key is 16 bytes: a registered
        /// object and every table bucket hold one).
        let entity: EntityNumber
        /// The store identifier's number (``StoreIdentifierNumbers``); 0 for a temporary ID.
        let store: UInt32

        /// The key of a permanent ID of `entity` in the store whose identifier has number `store`.
        /// The number comes from the store's ID: asking the entity description for it retains
        /// and releases the description (weakly referenced, so on the slow path) per object.
        init(entity: EntityNumber, primaryKey: Int64, store: UInt32) {
            self.number = UInt64(bitPattern: primaryKey)
            self.entity = entity
            self.store = store
        }

        /// The key of a temporary ID.
        init(entity: NSEntityDescription, temporary number: UInt64) {
            self.number = number
            self.entity = entity.entityNumber
            self.store = 0
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(number)
            hasher.combine(entity)
        }

        /// What the table's dictionary hashes by: the number and the entity, mixed as
        /// `NSManagedObjectID.hash` mixes them (the store is left out for the same reason), with
        /// the dictionary's per-instance seed, through a 64-bit finaliser (MurmurHash3's fmix64)
        /// instead of a `Hasher`. Every registration, lookup and release hashes a key; the
        /// `Hasher` was some 160 instructions of each. The seed still varies by table and
        /// process, and the finaliser spreads every bit of the key into the bucket bits, so keys
        /// from a crafted file do not pile into one bucket.
        func _rawHashValue(seed: Int) -> Int {
            let mixed = (number &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(entity.rawValue)
            var x = mixed ^ UInt64(bitPattern: Int64(seed))
            x ^= x >> 33
            x &*= 0xFF51_AFD7_ED55_8CCD
            x ^= x >> 33
            x &*= 0xC4CE_B9FE_1A85_EC53
            x ^= x >> 33
            return Int(truncatingIfNeeded: x)
        }
    }

    /// Where an object is registered: the table and its key there. The object keeps it so that
    /// its `deinit` removes its own entry (``Table/objectDidDeinit(_:key:listeningID:)``).
    struct Membership {
        let table: Table
        let key: IDKey
    }

    /// One registered object: unretained, or holding one strong reference (+1) of its own when
    /// ``retainsObjects``. One word, the pointer with the flag in its low bit (objects are
    /// 16-byte aligned), rather than a pointer beside an optional strong reference: a table of a
    /// million entries is 16 MB smaller, and moving an entry retains and releases nothing. The
    /// +1 is taken and given back by hand (`retainedObject(_:)`, ``heldReference``), never
    /// under the lock.
    private struct Entry {
        private let bits: UInt

        /// An entry that does not retain `object`.
        init(unretained object: Unmanaged<NSManagedObject>) {
            bits = UInt(bitPattern: object.toOpaque())
        }

        /// An entry owning the +1 the caller took on `object`.
        init(owning object: Unmanaged<NSManagedObject>) {
            bits = UInt(bitPattern: object.toOpaque()) | 1
        }

        var object: Unmanaged<NSManagedObject> {
            // The pointer is never null: it was made from an object.
            Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits & ~1).unsafelyUnwrapped)
        }

        /// Whether the entry owns a +1 on its object.
        var isRetained: Bool { bits & 1 != 0 }

        /// The +1 the entry owned, for the caller to release outside the lock once the entry is
        /// gone; `nil` for an unretained entry.
        var heldReference: Unmanaged<NSManagedObject>? { isRetained ? object : nil }
    }

    /// The entries behind the mutex. A class, shared with the registered objects' memberships,
    /// because their `deinit` may run on any thread after the context is gone.
    final class Table: @unchecked Sendable {
        private let lock = Mutex<Void>(())
        // Guarded by `lock`, which is also why the runtime's exclusivity checks (some 80
        // instructions an access) are left out.
        @exclusivity(unchecked) private var entries: [IDKey: Entry] = [:]
        /// IDs of released objects whose store listens to registrations, not yet reported.
        /// (Objects of such stores are always given their ID when made.)
        @exclusivity(unchecked) private var released: [IDKey: NSManagedObjectID] = [:]
        @exclusivity(unchecked) private var retains = false
        /// Whether an object whose store listens to registrations was ever registered here:
        /// until then ``listeningKeys`` need not visit every object.
        @exclusivity(unchecked) private var mayHoldListening = false

        /// Notes that an object of a store that listens to registrations is registered.
        func noteListening() {
            lock.withLock { _ in mayHoldListening = true }
        }

        /// Called from the object's `deinit` (its strong count is zero): removes its entry if the
        /// entry is still this object's, and notes the release for a store that listens.
        /// `listeningID` is the object's ID when its store listens to registrations.
        func objectDidDeinit(_ object: UnsafeMutableRawPointer, key: IDKey, listeningID: NSManagedObjectID?) {
            lock.withLock { _ in
                guard let index = entries.index(forKey: key), entries.values[index].object.toOpaque() == object else { return }
                entries.remove(at: index)
                if let listeningID { released[key] = listeningID }
            }
        }

        /// Removes `object`'s entry under `key` if it is still there, as when it is registered
        /// in another table: one table names an object at a time, or the other's entry would
        /// outlive the object (its deinit removes only the entry its membership names).
        func removeEntry(of object: NSManagedObject, key: IDKey) {
            let pointer = Unmanaged.passUnretained(object).toOpaque()
            var dropped: Unmanaged<NSManagedObject>?
            lock.withLock { _ in
                guard let index = entries.index(forKey: key), entries.values[index].object.toOpaque() == pointer else { return }
                dropped = entries.remove(at: index).value.heldReference
            }
            dropped?.release()
        }

        /// The entry's object, retained (+1) for the caller, or `nil` once its `deinit` has begun.
        private static func retainedObject(_ entry: Entry) -> Unmanaged<NSManagedObject>? {
            if entry.isRetained { return entry.object.retain() }
            return coredata_swift_try_retain(entry.object.toOpaque()) ? entry.object : nil
        }

        /// The live object under `key`; `listeningID` is the key's ID when its store listens to
        /// registrations (a release found here is noted under it).
        func object(for key: IDKey, listeningID: NSManagedObjectID?) -> NSManagedObject? {
            let found = lock.withLock { _ -> Unmanaged<NSManagedObject>? in
                guard let index = entries.index(forKey: key) else { return nil }
                if let object = Self.retainedObject(entries.values[index]) { return object }
                // Its deinit has begun on another thread and waits for the lock: the entry goes
                // now, with the release noted, so that registering the ID again before that
                // deinit runs cannot lose the release (the deinit then finds no entry of its own).
                entries.remove(at: index)
                if let listeningID { released[key] = listeningID }
                return nil
            }
            return found?.takeRetainedValue()
        }

        /// Registers `object` under `key`, removing the entry of the key it was registered under
        /// before (an object has one entry).
        func set(_ object: NSManagedObject, for key: IDKey) {
            let pointer = Unmanaged.passUnretained(object)
            if let other = object.registration, other.table !== self {
                // Registered in another context's table (obtainPermanentIDs or undo with an object
                // of another context): leave it first, under its own lock, not ours.
                other.table.removeEntry(of: object, key: other.key)
            }
            let previousKey = object.registration.flatMap { $0.table === self && $0.key != key ? $0.key : nil }
            var dropped: [Unmanaged<NSManagedObject>] = []
            lock.withLock { _ in
                // One entry per object: an object registered again under a new ID leaves the old
                // one, or its deinit (which removes the entry under its current key) would leave
                // an entry pointing at freed memory.
                if let previousKey, let index = entries.index(forKey: previousKey), entries.values[index].object.toOpaque() == pointer.toOpaque() {
                    if let held = entries.remove(at: index).value.heldReference { dropped.append(held) }
                }
                forgetRelease(of: key)
                let old = entries.updateValue(retains ? Entry(owning: pointer.retain()) : Entry(unretained: pointer), forKey: key)
                if let held = old?.heldReference { dropped.append(held) }
            }
            object.registration = Membership(table: self, key: key)
            for object in dropped { object.release() }
        }

        /// Removes `key`'s entry.
        func remove(_ key: IDKey) {
            let dropped = lock.withLock { _ -> Unmanaged<NSManagedObject>? in
                forgetRelease(of: key)
                guard let entry = entries.removeValue(forKey: key) else { return nil }
                return entry.heldReference
            }
            dropped?.release()
        }

        /// A released object's ID stands for its entry until reported: registering the ID
        /// again or removing it takes its place (the caller reports it, as ``holdsReleased(_:)``
        /// tells it to), so the store never hears of one release twice. Called under the lock.
        private func forgetRelease(of key: IDKey) {
            if !released.isEmpty { released[key] = nil }
        }

        func holdsReleased(_ key: IDKey) -> Bool {
            lock.withLock { _ in released[key] != nil }
        }

        var count: Int { lock.withLock { _ in entries.count } }

        var releasedCount: Int { lock.withLock { _ in released.count } }

        func reserveCapacity(_ capacity: Int) { lock.withLock { _ in entries.reserveCapacity(capacity) } }

        /// The IDs of the entries whose store listens to registrations, then the released IDs
        /// not yet reported. (The ID of such an object is made with it; reading it here is safe
        /// for an object whose deinit waits for the lock, as its memory outlives its entry.)
        var listeningKeys: [NSManagedObjectID] {
            lock.withLock { _ in
                guard mayHoldListening else { return Array(released.values) }
                var ids: [NSManagedObjectID] = []
                for entry in entries.values {
                    if let id = entry.object._withUnsafeGuaranteedRef({ $0.storedID }), id.storeObservesRegistrations { ids.append(id) }
                }
                return ids + released.values
            }
        }

        /// The live objects, each retained (+1) for the caller.
        func liveObjects() -> [Unmanaged<NSManagedObject>] {
            lock.withLock { _ in
                var result: [Unmanaged<NSManagedObject>] = []
                result.reserveCapacity(entries.count)
                for entry in entries.values {
                    if let object = Self.retainedObject(entry) { result.append(object) }
                }
                return result
            }
        }

        /// Empties the table. Returns the objects it held strongly (+1 each).
        func removeAll() -> [Unmanaged<NSManagedObject>] {
            lock.withLock { _ in
                let held = entries.values.compactMap(\.heldReference)
                entries = [:]
                released = [:]
                return held
            }
        }

        func takeReleased() -> [NSManagedObjectID] {
            lock.withLock { _ in
                let ids = Array(released.values)
                released = [:]
                return ids
            }
        }

        var retainsObjects: Bool { lock.withLock { _ in retains } }

        /// Holds every live object strongly (`true`) or not (`false`) from now on. Returns the
        /// objects no longer held strongly (+1 each), for the caller to release outside the lock.
        func setRetainsObjects(_ newValue: Bool) -> [Unmanaged<NSManagedObject>] {
            lock.withLock { _ in
                guard newValue != retains else { return [] }
                retains = newValue
                var dropped: [Unmanaged<NSManagedObject>] = []
                for (key, entry) in entries {
                    if newValue {
                        // An object already in its deinit stays unretained; the deinit removes it.
                        if !entry.isRetained, coredata_swift_try_retain(entry.object.toOpaque()) {
                            entries[key] = Entry(owning: entry.object)
                        }
                    } else if let held = entry.heldReference {
                        dropped.append(held)
                        entries[key] = Entry(unretained: entry.object)
                    }
                }
                return dropped
            }
        }
    }

    /// The released IDs not yet reported at which ``needsSweep`` reports.
    private static let sweepThreshold = 1024

    private let table = Table()

    /// Whether entries hold their objects strongly (Apple's `retainsRegisteredObjects`).
    var retainsObjects: Bool { table.retainsObjects }

    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get { table.object(for: id.registryKey, listeningID: id.storeObservesRegistrations ? id : nil) }
        nonmutating set {
            guard let newValue else { return table.remove(id.registryKey) }
            if id.storeObservesRegistrations { table.noteListening() }
            table.set(newValue, for: id.registryKey)
        }
    }

    /// The object under a row's key; `listeningID` is the row's ID when its store listens to
    /// registrations (a release found here is noted under it), `nil` otherwise.
    subscript(key: IDKey, listeningID: NSManagedObjectID?) -> NSManagedObject? {
        table.object(for: key, listeningID: listeningID)
    }

    /// Registers `object` under its own key (``NSManagedObject/registryKey``).
    func register(_ object: NSManagedObject, key: IDKey) { table.set(object, for: key) }

    /// Whether `id`'s object was released and its store has not heard of it yet
    /// (``removeReleased()``).
    func holdsReleased(_ id: NSManagedObjectID) -> Bool { table.holdsReleased(id.registryKey) }

    /// The number of entries (live objects, and objects whose `deinit` is running).
    var count: Int { table.count }

    /// Makes room for `capacity` objects, so a large fetch does not rehash as it registers.
    func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }

    /// The IDs of the entries and released objects a listening store has to hear of when the
    /// context lets go of all of them (so that it hears of each ID once), in no particular order.
    /// Objects of other stores are left out: their IDs may not even have been made.
    var listeningKeys: [NSManagedObjectID] { table.listeningKeys }

    /// The objects still alive, in no particular order.
    var values: [NSManagedObject] { table.liveObjects().map { $0.takeRetainedValue() } }

    /// Forgets every entry; keeps ``retainsObjects``.
    func removeAll() {
        for object in table.removeAll() { object.release() }
    }

    /// Whether enough released IDs wait to be reported for ``removeReleased()`` to run.
    var needsSweep: Bool { table.releasedCount >= Self.sweepThreshold }

    /// Returns the IDs of released objects not reported yet, and forgets them.
    func removeReleased() -> [NSManagedObjectID] { table.takeReleased() }

    /// Holds every live object strongly (`true`) or not (`false`) from now on; returns the IDs
    /// of released objects not reported yet.
    func setRetainsObjects(_ retains: Bool) -> [NSManagedObjectID] {
        for object in table.setRetainsObjects(retains) { object.release() }
        return table.takeReleased()
    }
}
