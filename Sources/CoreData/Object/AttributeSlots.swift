import CoreDataModel
import CoreDataStorage
import Foundation

/// A managed object's attribute values by slot of its entity's ``PropertyLayout``, filled lazily:
/// a fetched object keeps the store's row and converts a slot from it the first time the slot is
/// read, so fetching a million objects and reading one attribute converts one value each.
///
/// Relationship slots are unused here (the object keeps destinations as objects). Name access is
/// one hash lookup (name → slot); slot access none.
///
/// Threading: part of its object; touched only on the object's context queue.
struct AttributeSlots {
    /// The entity's slot table (kept here, so that a read by name need not ask the entity).
    let table: EntitySlotTable
    /// Values set or read into the object, by slot; empty (no allocation) until a slot is set,
    /// so a fetched object whose values are only read holds nothing but its row.
    private var values: [Any?] = []
    /// Bit `i` set: slot `i` still has to be filled: converted from `source`, or when there is
    /// no source, set to the attribute's default (so an object made for a fetched row never
    /// sets defaults it would throw away).
    private var pending: UInt64 = 0
    /// The slots of the row that pending slots convert from, laid out in `layout` or a layout
    /// extending it. Only the slot array, not the row: the object keeps the row itself as its
    /// committed row, and a second copy here cost 48 bytes and a release per object.
    private var source: [StoreValue?]?
    /// Each slot's value as a store value, converted once (at a set that round-trips, see
    /// `storedOnly`, or for validation) and reused by the save; empty until first needed. A
    /// set that does not round-trip clears the slot's entry.
    private var stored: [StoreValue?] = []
    /// Bit `i` set: slot `i`'s value is `stored[i]` alone, converted on each read; `values`
    /// holds nothing there. A plain stored attribute set with the Swift type reads give back
    /// (`StoreValue.roundTripping`) is kept this way: converted once, at the set, which
    /// validation and the save then take as is, and with no `[Any?]` to allocate and free.
    private var storedOnly: UInt64 = 0
    /// No slot of `values` or `stored` has been written since they were made empty, so
    /// forgetting them costs nothing (a fetched object's values are forgotten twice on the way in).
    private var isBlank = true

    /// The default values of an object of `entity` (filled on first read).
    init(entity: NSEntityDescription) {
        table = entity.slotTable
        pending = table.defaultSlots
        if table.traits.count > 64 {
            isBlank = false
            values = .emptySlots(table.traits.count)
            for slot in 64..<table.traits.count { values[slot] = table.defaultValues[slot] }
        }
    }

    /// Makes room for values before the first write.
    @inline(__always)
    private mutating func allocateValues() {
        if values.isEmpty { values = .emptySlots(table.traits.count) }
    }

    private var layout: PropertyLayout { table.layout }

    /// The value of the attribute named `name`; `nil` for a name that is no attribute slot.
    subscript(name: String) -> Any? {
        mutating get {
            guard let slot = layout.slot(of: name) else { return nil }
            return self[slot: slot]
        }
        set {
            guard let slot = layout.slot(of: name) else { return }
            self[slot: slot] = newValue
        }
    }

    /// The value at a slot, converted from the source row on first read.
    subscript(slot slot: Int) -> Any? {
        mutating get {
            if slot < 64, storedOnly & (1 << UInt64(slot)) != 0, let value = stored[slot] {
                return value.attributeValue(as: table.traits[slot].attributeType ?? .undefinedAttributeType)
            }
            if slot < 64, pending & (1 << UInt64(slot)) != 0 {
                // A value type read from the row is converted on every read instead of kept:
                // the object then holds only its row until something is set. Transformed
                // values are kept, so that each read gives the same object.
                if values.isEmpty, table.convertedOnReadSlots & (1 << UInt64(slot)) != 0, let source {
                    return source[slot]?.attributeValue(as: table.traits[slot].attributeType ?? .undefinedAttributeType)
                }
                load(slot)
            }
            return values.isEmpty ? nil : values[slot]
        }
        set { set(newValue, atSlot: slot) }
    }

    /// Sets the value at a slot. The value is borrowed, not taken: one kept as its store value
    /// (`storedOnly`) is converted straight from the caller's `Any`, where a setter's owned
    /// `newValue` made `setValue(_:forKey:)` copy and destroy it twice (a retain and a release
    /// of a string's storage each time).
    mutating func set(_ newValue: Any?, atSlot slot: Int) {
        let bit: UInt64 = slot < 64 ? 1 << UInt64(slot) : 0
        pending &= ~bit
        isBlank = false
        if bit & table.plainAttributeSlots != 0, let type = table.traits[slot].attributeType,
           let value = StoreValue.roundTripping(newValue, type: type) {
            if stored.isEmpty { stored = .emptySlots(table.traits.count) }
            stored[slot] = value
            if !values.isEmpty { values[slot] = nil }
            storedOnly |= bit
            return
        }
        storedOnly &= ~bit
        if !stored.isEmpty { stored[slot] = nil }
        allocateValues()
        values[slot] = newValue
    }

    /// Whether the slot's value is kept as its store value alone (`storedOnly`): a value that
    /// converted to the attribute's type at its set and is not `nil` (`roundTripping` never
    /// gives `.null`), so validation's type and mandatory checks hold.
    func holdsStoreValueOnly(_ slot: Int) -> Bool { slot < 64 && storedOnly & (1 << UInt64(slot)) != 0 }

    /// Whether the slot still holds its source row's value unconverted (so the row's stored
    /// value is the current one, no conversion needed to save it).
    func isPending(_ slot: Int) -> Bool { source != nil && slot < 64 && pending & (1 << UInt64(slot)) != 0 }

    /// Forgets every value (defaults included).
    mutating func removeAll() {
        pending = 0
        storedOnly = 0
        source = nil
        guard !isBlank else { return }
        if !stored.isEmpty { stored = [] }
        values = []
        isBlank = true
    }

    /// Takes every non-transient attribute from `row`; converted on first read. Transient
    /// attributes become `nil`, as Apple's are after a fetch.
    mutating func load(from row: StoreRow) {
        if row.layout === layout, table.traits.count <= 64 {
            // The common case, a row of this very entity: only the pending mask to compute.
            removeAll()
            var present: UInt64 = 0
            row.slots.withUnsafeBufferPointer { slots in
                for slot in slots.indices { if case .some = slots[slot] { present |= 1 << UInt64(slot) } }
            }
            pending = present & table.storedAttributeSlots
            source = row.slots
            return
        }
        let laidOut = row.layout.extends(layout) ? row : row.relaid(as: layout)
        removeAll()
        source = laidOut.slots
        let traits = table.traits
        for slot in traits.indices {
            guard traits[slot].attributeType != nil, !traits[slot].isTransient, laidOut.slots[slot] != nil else { continue }
            if slot < 64 {
                pending |= 1 << UInt64(slot)
            } else if let attribute = table.attributes[slot] {
                isBlank = false
                allocateValues()
                values[slot] = Self.objectValue(laidOut[slot: slot], attribute)
            }
        }
    }

    private mutating func load(_ slot: Int) {
        pending &= ~(1 << UInt64(slot))
        isBlank = false
        allocateValues()
        guard let source else {
            values[slot] = table.defaultValues[slot]
            return
        }
        guard let attribute = table.attributes[slot] else { return }
        values[slot] = Self.objectValue(source[slot] ?? .null, attribute)
    }

    /// The slot's value as a store value of `type`, or `nil` when it does not convert (a wrong
    /// type: validation reports it). A slot never read since the fetch gives the row's stored
    /// value unconverted; otherwise the conversion is done once and kept until the slot is set.
    /// Not for transformable attributes (their stored form goes through a transformer).
    mutating func storeValue(at slot: Int, type: NSAttributeType) -> StoreValue? {
        if let stored = pendingStoredValue(slot) { return stored }
        if !stored.isEmpty, let value = stored[slot] { return value }
        guard let value = StoreValue(attributeValue: self[slot: slot], type: type) else { return nil }
        if stored.isEmpty { stored = .emptySlots(table.traits.count) }
        isBlank = false
        stored[slot] = value
        return value
    }

    /// The converted values as a row's slot array, shared rather than copied, when they are
    /// exactly a row's attribute values: an object with no source row (an inserted one) whose
    /// every plain stored attribute, and nothing else, was converted (at its set, or by
    /// validation, which converts them all). The row then costs no building, and the object and
    /// its committed row free one array between them instead of two. A later change to a slot
    /// copies the array once.
    func storedValuesAsRowSlots() -> [StoreValue?]? {
        guard source == nil, let plain = table.plainStoredAttributeSlots, stored.count == table.traits.count else { return nil }
        var present: UInt64 = 0
        stored.withUnsafeBufferPointer { slots in
            for slot in slots.indices { if case .some = slots[slot] { present |= 1 << UInt64(slot) } }
        }
        return present == plain ? stored : nil
    }

    /// A stored attribute value as the object graph shows it: transformable values through
    /// their transformer (Apple's default, `NSSecureUnarchiveFromData`, when none is named).
    static func objectValue(_ stored: StoreValue, _ attribute: NSAttributeDescription) -> Any? {
        let value = stored.attributeValue(as: attribute.attributeType)
        if attribute.attributeType == .transformableAttributeType, let data = value as? Data {
            return TransformableValues.objectValue(fromStored: data, attribute)
        }
        return value
    }

    /// The source row's stored value at a pending slot.
    func pendingStoredValue(_ slot: Int) -> StoreValue? { isPending(slot) ? source?[slot] ?? .null : nil }
}
