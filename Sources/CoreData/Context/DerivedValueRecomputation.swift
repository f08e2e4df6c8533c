import CoreDataModel
import CoreDataStorage
import Foundation

/// Recomputes the derived attributes of objects already in a store, for the writes that do not go
/// through a context's save: migration and batch requests (on Apple, SQLite triggers do it).
///
/// The objects are read into a private context of their own and computed by the code a save runs
/// (`computeDerivedValues(saveTime:)`), so the values are the ones a save would give. Only objects
/// whose derived values change are written back, as updated rows in one store save per store and
/// chunk: no validation, merge policy, change notification or undo, as Apple's triggers have none.
/// Each written object's version goes up, as after any store write.
///
/// Threading: used on the calling thread only, inside the batch request or migration that made it.
/// Memory: one chunk of ``chunkSize`` objects (and what their derivations read) at a time.
struct DerivedValueRecomputation {
    /// Objects read, computed and written at a time.
    static let chunkSize = 1_000

    private let derivations: DerivationIndex
    private let context: NSManagedObjectContext
    private let history: StoreHistoryContext?
    /// What `now()` gives: one time for every object of the request or migration.
    private let time = Date()

    /// A recomputation over `coordinator`'s stores; `nil` when its model has no derived attribute
    /// (then nothing needs it). `history` names who writes, for stores that record history.
    init?(coordinator: NSPersistentStoreCoordinator, history: StoreHistoryContext?) {
        guard let derivations = coordinator.managedObjectModel.derivationIndex else { return nil }
        self.derivations = derivations
        self.history = history
        context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.name = "derived attributes"
        // Nothing here is undone; an undo manager would only hold the objects alive.
        context.undoManager = nil
    }

    /// Whether a change of objects of `entity` can make any derived value stale: the entity has
    /// derived attributes, or a derivation reads through a relationship to it.
    func isAffected(by entity: NSEntityDescription) -> Bool {
        derivations.derives(entity) || hasDependents(entity)
    }

    /// Whether a derivation of another object reads through a relationship to objects of
    /// `entity` (or of its subentities): what deleting them can make stale.
    func hasDependents(_ entity: NSEntityDescription) -> Bool {
        derivations.dependencies.contains { entity.isKindOf(entity: $0.source) || $0.source.isKindOf(entity: entity) }
    }

    /// The objects one relationship away whose derivations read through that relationship to one
    /// of `ids`, as they are in the store now (the rule a save follows). Objects that no longer
    /// exist are left out.
    func dependents(of ids: [NSManagedObjectID]) -> [NSManagedObjectID] {
        guard !derivations.dependencies.isEmpty else { return [] }
        var result: [NSManagedObjectID] = []
        var seen = Set<NSManagedObjectID>()
        var start = 0
        while start < ids.count {
            let objects = load(Array(ids[start..<min(ids.count, start + Self.chunkSize)]))
            for object in objects {
                for dependent in object.derivationDependents(in: derivations) where seen.insert(dependent.objectID).inserted {
                    result.append(dependent.objectID)
                }
            }
            context.reset()
            start += Self.chunkSize
        }
        return result
    }

    /// Recomputes the objects with `ids` whose entities have derived attributes, and writes those
    /// whose values change. `deleted` are objects a batch delete just removed: stores that keep
    /// both sides of a relationship may still list them, so they are taken out of the
    /// relationships derivations read (and out of the rows written) before computing.
    ///
    /// - Throws: store errors as `NSError`s (an optimistic locking failure when another writer
    ///   changed one of the objects between the read and the write).
    func recompute(_ ids: [NSManagedObjectID], deleted: Set<NSManagedObjectID> = [], chunkSize: Int = Self.chunkSize) throws {
        let derivedIDs = ids.filter { !$0.isTemporaryID && derivations.derives($0.entity) && !deleted.contains($0) }
        var start = 0
        while start < derivedIDs.count {
            let objects = load(Array(derivedIDs[start..<min(derivedIDs.count, start + chunkSize)]))
            if !deleted.isEmpty { for object in objects { forget(deleted, in: object) } }
            for object in objects { object.computeDerivedValues(saveTime: time) }
            try write(objects.filter { context.pendingUpdated[ObjectIdentifier($0)] != nil })
            context.reset()
            start += chunkSize
        }
    }

    /// Recomputes every object of `store` whose entity has derived attributes: after a migration,
    /// whose rows were written without a context.
    func recomputeAll(in store: NSPersistentStore) throws {
        for entity in context.persistentStoreCoordinator?.managedObjectModel.entities ?? []
        where derivations.derives(entity) && !entity.isAbstract {
            let request = NSFetchRequest<NSManagedObjectID>(entityName: entity.name ?? "")
            request.resultType = .managedObjectIDResultType
            request.includesSubentities = false
            request.affectedStores = [store]
            // A store whose saves rewrite it whole takes every object in one save.
            try recompute(try context.fetch(request), chunkSize: store.engine.savesWholeStore ? Int.max : Self.chunkSize)
        }
    }

    /// The objects with `ids`, filled from their stores in one read per store; objects whose rows
    /// are gone are left out.
    private func load(_ ids: [NSManagedObjectID]) -> [NSManagedObject] {
        let objects = ids.map { context.object(with: $0) }
        context.fillFaults(objects)
        return objects.filter { !$0.isFaultState }
    }

    /// Takes `deleted` out of the relationships of `object` that derivations read.
    private func forget(_ deleted: Set<NSManagedObjectID>, in object: NSManagedObject) {
        for dependency in derivations.dependencies where object.entity.isKindOf(entity: dependency.dependent) {
            guard let relationship = dependency.inverse.inverseRelationship else { continue }
            object.materialise(relationship)
            let name = relationship.name
            if relationship.isToMany {
                if let members = object.toManyValues[name], members.contains(where: { deleted.contains($0.objectID) }) {
                    object.toManyValues[name] = members.filter { !deleted.contains($0.objectID) }
                }
            } else if let destination = object.toOneValues[name], deleted.contains(destination.objectID) {
                object.toOneValues[name] = nil
            }
        }
    }

    /// Writes the rows of `objects`, one save per store. Persistent history names the derived
    /// attributes that changed as each object's updated properties.
    private func write(_ objects: [NSManagedObject]) throws {
        var byStore: [ObjectIdentifier: (store: NSPersistentStore, changes: StoreChangeSet)] = [:]
        for object in objects {
            guard let store = object.objectID.persistentStore else { continue }
            let row = try object.storeRow(version: object.committedRow?.version ?? 0)
            let key = ObjectIdentifier(store)
            if byStore[key] == nil {
                var changes = StoreChangeSet()
                changes.history = history ?? StoreHistoryContext()
                byStore[key] = (store, changes)
            }
            byStore[key]?.changes.updated.append(row)
            byStore[key]?.changes.history?.updatedProperties[row.objectID] = object.storedChangedValues().keys.sorted()
        }
        for entry in byStore.values.sorted(by: { $0.store.identifier < $1.store.identifier }) {
            _ = try mapStoreError { () throws(StoreError) -> [StoreObjectID: Int64] in try entry.store.engine.save(entry.changes) }
        }
    }
}
