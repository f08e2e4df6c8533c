import Foundation

/// What saving, fetching and validating need to know about one slot of an entity's
/// ``PropertyLayout``, read from the property once when the model freezes.
///
/// A property's getters are class-property reads with exclusivity checks; reading five of them
/// per value per save cost more than the value's conversion. Hot paths read this table instead.
///
/// Plain bits only (the default value lives in ``EntitySlotTable/defaultValues``): reading one
/// field of an element then copies no existential.
///
/// Threading: immutable once made; part of the entity's frozen state.
package struct SlotTraits {
    /// The attribute's type; `nil` at a relationship's slot.
    package let attributeType: NSAttributeType?
    package let isTransient: Bool
    package let isOptional: Bool
    /// A derived attribute: computed at save, never set by the app.
    package let isDerived: Bool
    /// Whether saving the slot needs more than a type check and the mandatory check: validation
    /// rules, custom validation predicates, a transformable or transient attribute, or a
    /// relationship.
    package let needsFullValidation: Bool
    package init(_ property: NSPropertyDescription) {
        isTransient = property.isTransient
        isOptional = property.isOptional
        isDerived = property is NSDerivedAttributeDescription
        if let attribute = property as? NSAttributeDescription {
            attributeType = attribute.attributeType
            needsFullValidation = isTransient || attribute.attributeType == .transformableAttributeType
                || !attribute.validationRules.isEmpty || !attribute.customValidationPredicates.isEmpty
        } else {
            attributeType = nil
            needsFullValidation = true
        }
    }
}

/// Everything an object of an entity needs about its slots, in one frozen object so that making
/// an object costs one retain instead of a getter (with its exclusivity check) per table.
///
/// Threading: immutable; made when the model freezes (or per call before that).
package final class EntitySlotTable: @unchecked Sendable {
    package let layout: PropertyLayout
    /// The attribute at each slot, `nil` at a relationship's slot.
    package let attributes: [NSAttributeDescription?]
    package let traits: [SlotTraits]
    /// Each slot's default value (`nil` when it has none or the slot is a relationship).
    package let defaultValues: [Any?]
    /// Bit `i` set: slot `i` (below 64) has a default value.
    package let defaultSlots: UInt64
    /// Bit `i` set: slot `i` (below 64) is a non-transient attribute, a value a fetched row holds.
    package let storedAttributeSlots: UInt64
    /// Bit `i` set: slot `i` (below 64) is a non-transformable attribute, whose value converts from
    /// the row on each read instead of being kept.
    package let convertedOnReadSlots: UInt64
    /// Bit `i` set: slot `i` (below 64) is a stored (non-transient) attribute of a type that
    /// converts directly to a store value (not transformable): `storedAttributeSlots &
    /// convertedOnReadSlots`.
    package let plainAttributeSlots: UInt64
    /// Bit `i` set: slot `i` is a stored attribute that converts directly to a store value
    /// (as in ``plainAttributeSlots``); `nil` when a row of the entity holds more
    /// attribute values than those (a stored transformable attribute) or has over 64 slots.
    /// An inserted object whose converted values cover exactly these slots can hand them to
    /// the store as its row's slots.
    package let plainStoredAttributeSlots: UInt64?

    package init(layout: PropertyLayout, properties: [NSPropertyDescription]) {
        self.layout = layout
        attributes = properties.map { $0 as? NSAttributeDescription }
        traits = properties.map { SlotTraits($0) }
        defaultValues = properties.map { ($0 as? NSAttributeDescription)?.defaultValue }
        var defaults: UInt64 = 0
        for (slot, value) in defaultValues.enumerated() where slot < 64 && value != nil { defaults |= 1 << UInt64(slot) }
        defaultSlots = defaults
        var stored: UInt64 = 0
        var converted: UInt64 = 0
        for (slot, traits) in traits.enumerated() where slot < 64 {
            guard let type = traits.attributeType else { continue }
            if !traits.isTransient { stored |= 1 << UInt64(slot) }
            if type != .transformableAttributeType { converted |= 1 << UInt64(slot) }
        }
        storedAttributeSlots = stored
        convertedOnReadSlots = converted
        plainAttributeSlots = stored & converted
        // A stored attribute that is not plain is a stored transformable one.
        let onlyPlain = traits.count <= 64 && stored & ~converted == 0
        plainStoredAttributeSlots = onlyPlain ? plainAttributeSlots : nil
    }
}
