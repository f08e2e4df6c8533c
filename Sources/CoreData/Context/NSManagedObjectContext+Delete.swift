import CoreDataModel

extension NSManagedObjectContext {
    /// Applies the deleted object's delete rules at once: nullify removes it from its
    /// destinations' inverse relationships, cascade deletes the destinations too, deny is checked
    /// when the context saves (`validateForDelete`), no action leaves the destinations alone.
    func applyDeleteRules(_ object: NSManagedObject) {
        for relationship in object.entity.relationshipsByName.values.sorted(by: { $0.name < $1.name }) {
            object.materialise(relationship)
            let destinations: [NSManagedObject] = relationship.isToMany
                ? object.toManyValues[relationship.name] ?? []
                : [object.toOneValues[relationship.name]].compactMap { $0 }
            switch relationship.deleteRule {
            case .cascadeDeleteRule:
                for destination in destinations where !destination.isDeleted && destination.managedObjectContext === self {
                    delete(destination)
                }
                nullifyInverse(of: relationship, from: object, destinations: destinations)
            case .nullifyDeleteRule:
                nullifyInverse(of: relationship, from: object, destinations: destinations)
            case .denyDeleteRule, .noActionDeleteRule:
                continue
            }
        }
    }

    private func nullifyInverse(of relationship: NSRelationshipDescription, from object: NSManagedObject, destinations: [NSManagedObject]) {
        guard let inverse = relationship.inverseRelationship else { return }
        for destination in destinations {
            destination.removeFromInverse(inverse, owner: object)
        }
    }
}
