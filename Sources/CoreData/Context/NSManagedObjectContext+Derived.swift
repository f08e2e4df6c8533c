import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

/// Derived attributes (``NSDerivedAttributeDescription``) are computed here, when a context saves
/// to its stores, before the change set is built: the stores only keep the values. Writes that
/// bypass a save (migration, batch requests) run the same code through
/// `DerivedValueRecomputation`.
///
/// What is recomputed in a save: every inserted or updated object whose entity has derived
/// attributes, and the objects one relationship away from a changed or deleted object whose
/// derivation reads through that relationship (an `Owner` whose `items.@count` or `items.@sum.price`
/// depends on a changed `Item`, an `Item` whose `owner.name` depends on a changed `Owner`), found
/// through the relationship's inverse. A relationship without an inverse, or a path of two
/// relationships (`owner.company.name`), is recomputed only when the object itself is saved.
extension NSManagedObjectContext {
    func computeDerivedAttributes() {
        guard let model = persistentStoreCoordinator?.managedObjectModel,
              let derivations = model.derivationIndex else { return }
        let saveTime = Date()
        var candidates: [ObjectIdentifier: NSManagedObject] = [:]
        let changed = Array(pendingInserted.values) + Array(pendingUpdated.values)
        for object in changed where !object.isDeleted && derivations.derives(object.entity) {
            candidates[ObjectIdentifier(object)] = object
        }
        for object in changed + Array(pendingDeleted.values) {
            for dependent in object.derivationDependents(in: derivations) where !dependent.isDeleted {
                candidates[ObjectIdentifier(dependent)] = dependent
            }
        }
        for object in candidates.values.sorted(by: Self.stableOrder) { object.computeDerivedValues(saveTime: saveTime) }
    }
}

extension NSManagedObject {
    /// The objects one relationship away whose derived attributes read through that relationship
    /// to this object (found through its inverse): what a change of this object makes stale. The
    /// rule a save follows, and batch requests too.
    func derivationDependents(in derivations: DerivationIndex) -> [NSManagedObject] {
        var dependents: [NSManagedObject] = []
        for dependency in derivations.dependencies where entity.isKindOf(entity: dependency.source) {
            for dependent in relatedObjects(through: dependency.inverse) where dependent.entity.isKindOf(entity: dependency.dependent) {
                dependents.append(dependent)
            }
        }
        return dependents
    }

    /// The objects this object's relationship `relationship` holds (none for a fault or a nil).
    private func relatedObjects(through relationship: NSRelationshipDescription) -> [NSManagedObject] {
        guard let owner = relationship.entity, entity.isKindOf(entity: owner) else { return [] }
        let current = currentValue(of: relationship)
        if let one = current as? NSManagedObject { return [one] }
        return Self.objects(in: current, key: relationship.name)
    }

    /// Sets each derived attribute to its expression's value for this object, as a change of the
    /// object when the value differs (so it is saved). `now()` is the save's time.
    func computeDerivedValues(saveTime: Date) {
        fireFaultIfNeeded()
        let table = entity.slotTable
        for (slot, attribute) in table.attributes.enumerated() {
            guard let derived = attribute as? NSDerivedAttributeDescription else { continue }
            let type = derived.attributeType
            var value: Any?
            if let expression = derived.derivationExpression {
                let raw = expression.expressionType == .function && expression.function == "now"
                    ? saveTime : expression.expressionValue(with: self, context: nil)
                value = StoreValue(attributeValue: raw.flatMap(Self.unwrapped), type: type)?.attributeValue(as: type)
            }
            let old = attributeValues[slot: slot]
            if let stored = StoreValue(attributeValue: old, type: type), stored == StoreValue(attributeValue: value, type: type) { continue }
            attributeValues[slot: slot] = value
            if slot < 64 { noteChange(slot: slot) } else { noteChange(derived.name) }
        }
    }

    /// `NSNull` and nested optionals from the evaluator as plain values or nil.
    private static func unwrapped(_ value: Any) -> Any? {
        if value is NSNull { return nil }
        return value
    }
}
