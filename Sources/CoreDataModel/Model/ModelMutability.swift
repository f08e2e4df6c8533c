/// Apple's Core Data makes a model immutable once a coordinator uses it and raises
/// `NSInternalInconsistencyException` on any later edit. Editing a model that other threads read
/// would be a data race, so we trap the same way: it is programmer misuse, never bad input.
@inline(__always)
func requireEditable(_ model: NSManagedObjectModel?, _ what: @autoclosure () -> String) {
    if let model, model.isFrozen {
        preconditionFailure(
            "CoreData: can't modify an immutable model (\(what())): a model is frozen once a persistent "
            + "store coordinator uses it; build or copy a new model instead")
    }
}

/// Walks `start` and its ancestors, nearest first, stopping at a repeat so that a model with an
/// inheritance cycle (invalid, reported by ``ModelConsistency``) never loops forever.
func entityChain(from start: NSEntityDescription) -> [NSEntityDescription] {
    var chain: [NSEntityDescription] = []
    var seen = Set<ObjectIdentifier>()
    var current: NSEntityDescription? = start
    while let entity = current, seen.insert(ObjectIdentifier(entity)).inserted {
        chain.append(entity)
        current = entity.superentity
    }
    return chain
}
