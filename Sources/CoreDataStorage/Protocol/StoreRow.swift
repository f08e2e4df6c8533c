import CoreDataModel

/// The saved state of one object: its values by slot of a ``PropertyLayout``, and a version that
/// increases with each save of the object (for optimistic locking).
///
/// Rows the object graph and the stores make carry the entity's own layout
/// (`NSEntityDescription.propertyLayout`), so a value moves from a managed object to a record
/// and back by slot number, with no property name hashed. ``values`` and
/// ``init(objectID:version:values:)`` keep the name-keyed view for code that wants it (custom
/// stores, tests); they cost a hash per value.
///
/// A slot holds `nil` when the row leaves the property out (a store that loads relationships
/// lazily, a transient attribute) and ``StoreValue/null`` when the property has no value; both
/// read as ``StoreValue/null`` through ``subscript(_:)-(String)``.
public struct StoreRow: Hashable, Sendable {
    /// The object the row belongs to.
    public var objectID: StoreObjectID
    /// The number of times the object has been saved; 1 after its insert.
    public var version: Int64
    /// The layout that gives each slot its property.
    public private(set) var layout: PropertyLayout
    /// The values by slot of ``layout``; `nil` where the row leaves the property out.
    public var slots: [StoreValue?]

    /// A row by slot.
    ///
    /// - Precondition: `slots.count == layout.count`.
    public init(objectID: StoreObjectID, version: Int64, layout: PropertyLayout, slots: [StoreValue?]) {
        precondition(slots.count == layout.count, "CoreData: a row of \(layout.entityName) needs \(layout.count) slots, got \(slots.count)")
        self.objectID = objectID
        self.version = version
        self.layout = layout
        self.slots = slots
    }

    /// A row of named values, laid out in name order. Complexity: O(n log n) in the values; the
    /// stores and the object graph use ``init(objectID:version:layout:slots:)`` instead.
    public init(objectID: StoreObjectID, version: Int64, values: [String: StoreValue]) {
        let names = values.keys.sorted()
        self.objectID = objectID
        self.version = version
        self.layout = PropertyLayout(entityName: objectID.entityName, names: names)
        self.slots = names.map { values[$0] }
    }

    /// The values by property name; a property the row leaves out has no entry.
    ///
    /// Setting re-lays the row when a new name appears. Complexity: O(slots) with a hash per value.
    public var values: [String: StoreValue] {
        get {
            var result: [String: StoreValue] = [:]
            result.reserveCapacity(slots.count)
            for (slot, value) in slots.enumerated() {
                if let value { result[layout.names[slot]] = value }
            }
            return result
        }
        set {
            if newValue.keys.allSatisfy({ layout.slot(of: $0) != nil }) {
                for slot in slots.indices { slots[slot] = newValue[layout.names[slot]] }
            } else {
                self = StoreRow(objectID: objectID, version: version, values: newValue)
            }
        }
    }

    /// The value of a property, ``StoreValue/null`` when it has none. Setting a name the layout
    /// does not have extends the layout (rare: the slow path).
    public subscript(property: String) -> StoreValue {
        get {
            guard let slot = layout.slot(of: property) else { return .null }
            return slots[slot] ?? .null
        }
        set {
            if let slot = layout.slot(of: property) {
                slots[slot] = newValue
            } else {
                let extended = PropertyLayout(entityName: layout.entityName, names: layout.names + [property], base: layout)
                slots.append(newValue)
                layout = extended
            }
        }
    }

    /// The value at a slot, ``StoreValue/null`` when the slot is empty.
    @inline(__always)
    public subscript(slot slot: Int) -> StoreValue { slots[slot] ?? .null }

    /// Whether the row names the property (with a value or ``StoreValue/null``).
    public func contains(_ property: String) -> Bool {
        guard let slot = layout.slot(of: property) else { return false }
        return slots[slot] != nil
    }

    /// The same values in `target`'s layout: slots `target` has and this row's layout does not
    /// are left out (`nil`); names this layout has and `target` does not are dropped.
    public func relaid(as target: PropertyLayout) -> StoreRow {
        if layout === target { return self }
        let map = layout.slotMap(to: target)
        var result: [StoreValue?] = .emptySlots(target.count)
        for (slot, source) in map.enumerated() where source >= 0 { result[slot] = slots[source] }
        return StoreRow(objectID: objectID, version: version, layout: target, slots: result)
    }

    public static func == (lhs: StoreRow, rhs: StoreRow) -> Bool {
        guard lhs.objectID == rhs.objectID, lhs.version == rhs.version else { return false }
        if lhs.layout === rhs.layout { return lhs.slots == rhs.slots }
        return lhs.values == rhs.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(objectID)
        hasher.combine(version)
    }
}
