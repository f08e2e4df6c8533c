import Foundation

/// The frozen order of an entity's properties: each property has one slot, a small integer that
/// every layer uses instead of the property's name (values by slot, `Formats/` calls it a column).
///
/// An entity's layout (``NSEntityDescription/propertyLayout``) lists its attributes and
/// relationships, transient ones included, fetched properties left out, in ``NSEntityDescription/properties``
/// order: inherited properties first, so a property has the same slot in the entity and in every
/// subentity. Stores may make layouts of their own (names read from a file); a layout may
/// ``extends(_:)`` another, naming every property of it first and then more.
///
/// Name → slot is one hash lookup; callers do it once per call or once per batch, never per value.
///
/// Threading: immutable except for the cached ``slotMap(to:)``, which is guarded; safe from any
/// thread.
public final class PropertyLayout: @unchecked Sendable, CustomStringConvertible {
    /// The entity the layout belongs to.
    public let entityName: String
    /// The property names by slot.
    public let names: [String]
    /// The layout this one extends (its names are this layout's first names), if any.
    public let base: PropertyLayout?
    private let slotsByName: [String: Int]
    /// Slots by a cheap fingerprint of the name (its length and first byte), each list
    /// checked with `==`: finding a slot costs a few comparisons instead of hashing the whole
    /// name, which was most of the cost of `value(forKey:)` and `setValue(_:forKey:)`.
    private let fingerprinted: [[Int]]
    /// Every name is ASCII: then a name not found by fingerprint is not in the layout. (Swift
    /// compares strings by canonical equivalence, so a non-ASCII name may equal one with other
    /// bytes; those misses ask the dictionary.)
    private let namesAreASCII: Bool
    private let mapLock = NSLock()
    // Weak, so two layouts that map to each other never keep each other alive.
    private weak var lastMapTarget: PropertyLayout?
    private var lastMap: [Int] = []

    /// Makes a layout; a name that appears twice keeps its first slot.
    ///
    /// - Precondition: when `base` is given, `names` starts with `base.names`.
    public init(entityName: String, names: [String], base: PropertyLayout? = nil) {
        precondition(base.map { names.starts(with: $0.names) } ?? true, "CoreData: a layout must name its base layout's properties first")
        self.entityName = entityName
        self.names = names
        self.base = base
        var slots: [String: Int] = [:]
        slots.reserveCapacity(names.count)
        for (slot, name) in names.enumerated() where slots[name] == nil { slots[name] = slot }
        self.slotsByName = slots
        var buckets = [[Int]](repeating: [], count: Self.fingerprintBuckets)
        for (slot, name) in names.enumerated() where slots[name] == slot {
            buckets[Self.fingerprint(name)].append(slot)
        }
        self.fingerprinted = buckets
        self.namesAreASCII = names.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }
    }

    private static let fingerprintBuckets = 64

    @inline(__always)
    private static func fingerprint(_ name: String) -> Int {
        // Length and first byte: both O(1) on a native string (the last byte is not cheap).
        let utf8 = name.utf8
        return (utf8.count &* 7 &+ Int(utf8.first ?? 0)) & (fingerprintBuckets - 1)
    }

    /// The number of slots.
    public var count: Int { names.count }

    /// The slot of a property, `nil` when the layout does not name it. One hash lookup.
    @inline(__always)
    public func slot(of name: String) -> Int? {
        for slot in fingerprinted[Self.fingerprint(name)] where names[slot] == name { return slot }
        if namesAreASCII, name.utf8.allSatisfy({ $0 < 0x80 }) { return nil }
        return slotsByName[name]
    }

    /// Whether a value at slot `i` of this layout is the value of slot `i` of `other` for every
    /// slot of `other`: the same layout, or one that extends it.
    @inline(__always)
    public func extends(_ other: PropertyLayout) -> Bool { self === other || base === other }

    /// For each slot of `target`, the slot of this layout with the same name, or -1.
    ///
    /// Complexity: O(target.count) the first time for a target, then O(1) while the same target
    /// is asked for again (the last map is kept).
    public func slotMap(to target: PropertyLayout) -> [Int] {
        mapLock.lock()
        defer { mapLock.unlock() }
        if lastMapTarget === target { return lastMap }
        let map = target.names.map { slotsByName[$0] ?? -1 }
        lastMapTarget = target
        lastMap = map
        return map
    }

    public var description: String { "PropertyLayout(\(entityName): \(names.joined(separator: ", ")))" }
}
