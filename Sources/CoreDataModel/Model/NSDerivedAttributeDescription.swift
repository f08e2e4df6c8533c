import CoreDataPredicate
import Foundation

/// An attribute whose value is computed from other values of the object when it is saved.
///
/// Matches Apple's `NSDerivedAttributeDescription`. The ``derivationExpression`` may be a key
/// path to an attribute of the same entity or through to-one relationships (`name`,
/// `owner.name`), one of the functions `canonical:`, `lowercase:` or `uppercase:` of such a key
/// path (`canonical:(name)` folds case and diacritics), an aggregate of a to-many relationship
/// (`items.@count`, `items.@sum.price`, also `@min`, `@max`, `@avg`), or `now()` (the time of the
/// save).
///
/// The value is computed when a context saves to its stores, before the changes reach the store,
/// so every store keeps it as an ordinary attribute and fetch predicates and sort descriptors
/// use it like any other. Until then an object shows the last saved value; after the save, the
/// computed one. The app never sets it: `setValue(_:forKey:)` on a derived attribute traps.
///
/// Threading: as ``NSPropertyDescription``: edit before the model is used, then read-only.
open class NSDerivedAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The expression the value is computed from; `nil` leaves the attribute without a value.
    ///
    /// The model check (when a coordinator first uses the model) rejects an expression whose
    /// key paths name no property of the entity, with the entity and attribute named.
    public var derivationExpression: CoreDataPredicate.NSExpression? { willSet { checkEditable("derivationExpression") } }

    /// Creates a derived attribute with no name, type or expression.
    public override init() { super.init() }

    open override var description: String {
        let expression = derivationExpression.map { "\($0)" } ?? "nil"
        return super.description + ", derivationExpression \(expression)"
    }
}
