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
    private let layout: PropertyLayout
    private let attributes: [NSAttributeDescription?]
    private var values: [Any?]
    /// Bit `i` set: slot `i` still has to be converted from `source`.
    private var pending: UInt64 = 0
    /// The row that pending slots convert from; laid out in `layout` or a layout extending it.
    private var source: StoreRow?

    /// Empty values for an object of `entity`.
    init(entity: NSEntityDescription) {
        layout = entity.propertyLayout
        attributes = entity.layoutAttributes
        values = Array(repeating: nil, count: layout.count)
    }

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
            if slot < 64, pending & (1 << UInt64(slot)) != 0 { load(slot) }
            return values[slot]
        }
        set {
            if slot < 64 { pending &= ~(1 << UInt64(slot)) }
            values[slot] = newValue
        }
    }

    /// Whether the slot still holds its source row's value unconverted (so the row's stored
    /// value is the current one, no conversion needed to save it).
    func isPending(_ slot: Int) -> Bool { slot < 64 && pending & (1 << UInt64(slot)) != 0 }

    /// Forgets every value.
    mutating func removeAll() {
        pending = 0
        source = nil
        for slot in values.indices { values[slot] = nil }
    }

    /// Takes every non-transient attribute from `row`; converted on first read. Transient
    /// attributes become `nil`, as Apple's are after a fetch.
    mutating func load(from row: StoreRow) {
        let laidOut = row.layout.extends(layout) ? row : row.relaid(as: layout)
        removeAll()
        source = laidOut
        for (slot, attribute) in attributes.enumerated() {
            guard let attribute, !attribute.isTransient, laidOut.slots[slot] != nil else { continue }
            if slot < 64 {
                pending |= 1 << UInt64(slot)
            } else {
                values[slot] = Self.objectValue(laidOut[slot: slot], attribute)
            }
        }
    }

    private mutating func load(_ slot: Int) {
        pending &= ~(1 << UInt64(slot))
        guard let source, let attribute = attributes[slot] else { return }
        values[slot] = Self.objectValue(source[slot: slot], attribute)
    }

    /// A stored attribute value as the object graph shows it: transformable values through
    /// their transformer (Apple's default, `NSSecureUnarchiveFromData`, when a class is named).
    static func objectValue(_ stored: StoreValue, _ attribute: NSAttributeDescription) -> Any? {
        let value = stored.attributeValue(as: attribute.attributeType)
        if attribute.attributeType == .transformableAttributeType, let data = value as? Data,
           let transformerName = attribute.valueTransformerName ?? (attribute.attributeValueClassName == nil ? nil : "NSSecureUnarchiveFromData"),
           let transformer = ValueTransformer.valueTransformer(forName: NSValueTransformerName(rawValue: transformerName)) {
            return transformer.reverseTransformedValue(data)
        }
        return value
    }

    /// The source row's stored value at a pending slot.
    func pendingStoredValue(_ slot: Int) -> StoreValue? { isPending(slot) ? source?[slot: slot] : nil }
}
