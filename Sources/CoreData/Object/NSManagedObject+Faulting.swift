import CoreDataModel
import CoreDataStorage
import Foundation

extension NSManagedObject {
    /// The object's faulting state: `0` when the object is fully realised (its values are in
    /// memory) and not turning into a fault; some other value otherwise.
    ///
    /// Matches Apple's `faultingState`. The nonzero values are not part of the contract (Apple's
    /// are private flags): test against `0`. Here a fault reads `1`, and an object inside
    /// `willTurnIntoFault()` or `didTurnIntoFault()` reads nonzero too, so code those hooks call
    /// (and property observers) can tell a transition from a user's change.
    /// Reading it never fires the fault.
    public var faultingState: Int {
        if lifecycle.isTurningIntoFault { return 2 }
        return isFaultState ? 1 : 0
    }

    /// Whether reading the relationship `key` would still have to read the store; never fires a
    /// fault.
    ///
    /// Matches Apple's `hasFault(forRelationshipNamed:)`: `true` for every relationship of an
    /// object that is itself a fault. A to-one relationship is a fault when its destination is
    /// (or is not in memory at all); a nil to-one is not. A to-many relationship is a fault until
    /// it is read (its destinations turned into objects), unless it has destinations and every
    /// one is already in the context with its values (as after
    /// `relationshipKeyPathsForPrefetching`), since reading it then costs no store read. The
    /// relationships of an object inserted and not yet saved are never faults.
    ///
    /// A `key` that is not a relationship of the entity traps, as Apple's raises.
    /// Threading: call on the context's queue.
    public func hasFault(forRelationshipNamed key: String) -> Bool {
        let relationship = relationshipForFaultQuery(key, "hasFault(forRelationshipNamed:)")
        context_checkAccess()
        if isFaultState { return true }
        if materialisedRelationships.contains(key) {
            guard !relationship.isToMany else { return false }
            return toOneValues[key]?.isFaultState ?? false
        }
        guard let stored = unmaterialisedDestinationIDs(relationship, readingStore: false) else {
            // Not known without a store read (a store that loads relationships lazily), or an
            // unsaved object's relationship (known, and empty).
            return committedRow != nil || parentRelationships != nil
        }
        guard let context = managedObjectContext else { return false }
        let destinationsInMemory = stored.allSatisfy { id in context.registeredObject(for: id).map { !$0.isFaultState } ?? false }
        // An unread to-many is a fault on Apple platforms even when it turns out empty.
        return relationship.isToMany ? stored.isEmpty || !destinationsInMemory : !destinationsInMemory
    }

    /// The IDs of the objects the relationship `key` holds, without turning them into objects
    /// (the relationship fault does not fire).
    ///
    /// Matches Apple's `objectIDs(forRelationshipNamed:)`. The IDs are the relationship's current
    /// value, unsaved changes included (an object inserted and not saved has a temporary ID); an
    /// ordered relationship gives them in order. When the object itself is a fault its row is
    /// read (from the fetch that returned it when it came with one) but no destination object is
    /// made; a store that leaves relationships out of its rows is asked for this one.
    ///
    /// A `key` that is not a relationship of the entity traps, as Apple's raises.
    /// Threading: call on the context's queue.
    public func objectIDs(forRelationshipNamed key: String) -> [NSManagedObjectID] {
        let relationship = relationshipForFaultQuery(key, "objectIDs(forRelationshipNamed:)")
        context_checkAccess()
        if !materialisedRelationships.contains(key), let ids = unmaterialisedDestinationIDs(relationship, readingStore: true) {
            return ids
        }
        if relationship.isToMany { return (toManyValues[key] ?? []).map(\.objectID) }
        return toOneValues[key].map { [$0.objectID] } ?? []
    }

    private func relationshipForFaultQuery(_ key: String, _ method: String) -> NSRelationshipDescription {
        guard let relationship = entity.relationshipsByName[key] else {
            preconditionFailure("CoreData: \(method): '\(key)' is not a relationship of entity \(entity.name ?? "?")")
        }
        return relationship
    }

    /// The destination IDs of a relationship not yet turned into objects, from what the object
    /// already holds: the parent context's view, the row a fetch cached for a fault, or the
    /// committed row. `nil` when the object holds none of them (an unsaved object: its current
    /// values are the answer) or, unless `readingStore`, when the row leaves the relationship
    /// out. With `readingStore`, a fault without a cached row is fired and a row without the
    /// relationship is completed from the store, as reading the relationship would.
    private func unmaterialisedDestinationIDs(_ relationship: NSRelationshipDescription, readingStore: Bool) -> [NSManagedObjectID]? {
        let key = relationship.name
        if let fromParent = parentRelationships?[key] { return fromParent }
        var row: StoreRow?
        if isFaultState {
            if let prefetchedRow, managedObjectContext?.prefetchedRowsAreFresh() ?? true {
                row = prefetchedRow
            } else if readingStore {
                fireFaultIfNeeded()
                if materialisedRelationships.contains(key) { return nil }
                if let fromParent = parentRelationships?[key] { return fromParent }
                row = committedRow
            }
        } else {
            row = committedRow
        }
        guard var found = row, let context = managedObjectContext else { return nil }
        if !found.contains(key) {
            guard readingStore, let id = objectID.storeObjectID, let store = objectID.persistentStore else { return nil }
            // As materialise(_:) does: a store that fails reads as no destinations.
            found[key] = (try? context.readEngine(for: store).destinations(of: id, relationship: key)) ?? .null
            if !isFaultState, committedRow != nil { committedRow = found }
        }
        switch found[key] {
        case .reference(let id): return context.managedObjectID(forStoreID: id).map { [$0] } ?? []
        case .references(let ids): return ids.compactMap(context.managedObjectID(forStoreID:))
        default: return []
        }
    }
}

extension NSManagedObjectContext {
    /// The managed object ID of a store row ID, registering nothing; `nil` when the model has no
    /// such entity or no store holds it.
    func managedObjectID(forStoreID id: StoreObjectID) -> NSManagedObjectID? {
        guard let coordinator = persistentStoreCoordinator,
              let entity = coordinator.managedObjectModel.entitiesByName[id.entityName],
              let store = coordinator.store(for: entity)
        else { return nil }
        return NSManagedObjectID(entity: entity, store: store, storeID: id)
    }
}
