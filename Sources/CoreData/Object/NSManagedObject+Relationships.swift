import CoreDataModel

/// Inverse maintenance: setting one side of a relationship updates the other side at once, in
/// memory, as Apple's Core Data does. Only the side the caller set calls into the inverse; the
/// inverse side updates itself without calling back, so every change runs exactly once.
extension NSManagedObject {
    func setToOne(_ relationship: NSRelationshipDescription, to newValue: NSManagedObject?) {
        materialise(relationship)
        let old = toOneValues[relationship.name]
        if old === newValue { return }
        if let newValue { requireSameContext(newValue, relationship) }
        willChangeForUndo(relationship.name)
        toOneValues[relationship.name] = newValue
        noteChange(relationship.name)
        guard let inverse = relationship.inverseRelationship else { return }
        old?.removeFromInverse(inverse, owner: self)
        newValue?.addToInverse(inverse, owner: self)
    }

    func setToMany(_ relationship: NSRelationshipDescription, to objects: [NSManagedObject]) {
        materialise(relationship)
        let old = toManyValues[relationship.name] ?? []
        for object in objects { requireSameContext(object, relationship) }
        let oldSet = Set(old.map(ObjectIdentifier.init))
        let newSet = Set(objects.map(ObjectIdentifier.init))
        if old.count == objects.count && zip(old, objects).allSatisfy({ $0 === $1 }) { return }
        willChangeForUndo(relationship.name)
        toManyValues[relationship.name] = objects
        noteChange(relationship.name)
        guard let inverse = relationship.inverseRelationship else { return }
        for object in old where !newSet.contains(ObjectIdentifier(object)) { object.removeFromInverse(inverse, owner: self) }
        for object in objects where !oldSet.contains(ObjectIdentifier(object)) { object.addToInverse(inverse, owner: self) }
    }

    /// `owner` now points at this object through `relationship`'s inverse; record it on this side.
    func addToInverse(_ relationship: NSRelationshipDescription, owner: NSManagedObject) {
        fireFaultIfNeeded()
        materialise(relationship)
        if relationship.isToMany {
            var list = toManyValues[relationship.name] ?? []
            guard !list.contains(where: { $0 === owner }) else { return }
            observation?.nextMutation = (relationship.name, .insertion([owner]))
            willChangeForUndo(relationship.name)
            list.append(owner)
            toManyValues[relationship.name] = list
            noteChange(relationship.name)
        } else {
            let previous = toOneValues[relationship.name]
            guard previous !== owner else { return }
            willChangeForUndo(relationship.name)
            toOneValues[relationship.name] = owner
            noteChange(relationship.name)
            // This object moves from its previous owner to `owner`: the previous owner lets go.
            if let previous, let back = relationship.inverseRelationship {
                previous.removeFromInverse(back, owner: self)
            }
        }
    }

    /// `owner` no longer points at this object; drop it from this side.
    func removeFromInverse(_ relationship: NSRelationshipDescription, owner: NSManagedObject) {
        fireFaultIfNeeded()
        materialise(relationship)
        if relationship.isToMany {
            var list = toManyValues[relationship.name] ?? []
            guard let index = list.firstIndex(where: { $0 === owner }) else { return }
            observation?.nextMutation = (relationship.name, .removal([owner]))
            willChangeForUndo(relationship.name)
            list.remove(at: index)
            toManyValues[relationship.name] = list
            noteChange(relationship.name)
        } else if toOneValues[relationship.name] === owner {
            willChangeForUndo(relationship.name)
            toOneValues[relationship.name] = nil
            noteChange(relationship.name)
        }
    }

    private func requireSameContext(_ object: NSManagedObject, _ relationship: NSRelationshipDescription) {
        guard object.managedObjectContext === managedObjectContext else {
            preconditionFailure(
                "CoreData: Illegal attempt to establish a relationship '\(relationship.name)' between objects in different contexts "
                    + "(source \(objectID), destination \(object.objectID))")
        }
        if let destination = relationship.destinationEntity, !object.entity.isKindOf(entity: destination) {
            preconditionFailure(
                "CoreData: Unacceptable type of value for to-\(relationship.isToMany ? "many" : "one") relationship: property = \"\(relationship.name)\"; "
                    + "desired type = \(destination.name ?? "?"); given type = \(object.entity.name ?? "?")")
        }
    }
}
