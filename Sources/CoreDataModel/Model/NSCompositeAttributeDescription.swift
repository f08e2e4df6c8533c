import Foundation

/// An attribute whose value is a dictionary of named element values: Apple's composite
/// attribute (iOS 17).
///
/// Matches Apple's `NSCompositeAttributeDescription`. Its ``attributeType`` is
/// ``NSAttributeType/compositeAttributeType``; ``elements`` are ordinary attributes (nested
/// composites allowed). An object's value for the attribute is a `[String: Any]` holding the
/// elements that have a value; key paths reach one element (`address.city`) in
/// `value(forKeyPath:)`, fetch predicates and sort descriptors.
///
/// Every store keeps each element as a value of its own, named by its key path
/// (`address.city`): the entity's ``NSEntityDescription/propertyLayout`` lists the elements in
/// place of the composite. Each element keeps its own optionality and default value.
///
/// Threading: as ``NSPropertyDescription``: edit before the model is used, then read-only.
open class NSCompositeAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The composed attributes, in the order the model lists them.
    public var elements: [NSAttributeDescription] = [] { willSet { checkEditable("elements") } }

    /// Creates a composite attribute with no name and no elements.
    public override init() {
        super.init()
        attributeType = .compositeAttributeType
    }

    /// The elements as stored values: each leaf element (nested composites are walked) with its
    /// key path below this attribute, e.g. `("city", city)` or `("geo.lat", lat)`.
    package var leafElements: [(path: String, attribute: NSAttributeDescription)] {
        elements.flatMap { element -> [(path: String, attribute: NSAttributeDescription)] in
            if let nested = element as? NSCompositeAttributeDescription {
                return nested.leafElements.map { ("\(element.name).\($0.path)", $0.attribute) }
            }
            return [(element.name, element)]
        }
    }

    /// One attribute per leaf element, named by its key path from the entity (`address.city`):
    /// what the entity's layout holds in the composite's place. New descriptions on every call;
    /// a frozen entity makes them once.
    package func slotElements() -> [NSAttributeDescription] {
        leafElements.map { path, element in
            let slot = CompositeElementSlot()
            slot.name = "\(name).\(path)"
            slot.composite = self
            slot.elementPath = path
            slot.attributeType = element.attributeType
            slot.isOptional = element.isOptional
            slot.isTransient = isTransient || element.isTransient
            slot.defaultValue = element.defaultValue
            slot.valueTransformerName = element.valueTransformerName
            slot.validationRules = element.validationRules
            slot.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
            if let className = element.attributeValueClassName, element.attributeType == .transformableAttributeType {
                slot.attributeValueClassName = className
            }
            return slot
        }
    }

    open override var description: String {
        super.description + ", elements \(elements.map(\.name))"
    }
}

/// The slot a composite attribute's element takes in its entity's layout: an attribute named by
/// the element's key path from the entity, never in the entity's ``NSEntityDescription/properties``.
package final class CompositeElementSlot: NSAttributeDescription, @unchecked Sendable {
    /// The composite attribute the element belongs to (the top one, for nested composites).
    package weak var composite: NSCompositeAttributeDescription?
    /// The element's key path below the composite (`city`, `geo.lat`).
    package var elementPath = ""
}
