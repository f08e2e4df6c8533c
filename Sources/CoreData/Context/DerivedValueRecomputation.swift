import CoreDataModel
import CoreDataStorage
import Foundation

/// Recomputes the derived attributes of objects already in a store, for the writes that do not go
/// through a context's save: migration and batch requests (on Apple, SQLite triggers do it).
///
/// The objects are read into a private context of their own (``StoreRowRewriter``) and computed by
/// the code a save runs (`computeDerivedValues(saveTime:)`), so the values are the ones a save
/// would give. Only objects whose derived values change are written back, as updated rows in one
/// store save per store and chunk: no validation, merge policy, change notification or undo, as
/// Apple's triggers have none.
///
/// Threading: used on the calling thread only, inside the batch request or migration that made it.
/// Memory: one chunk of `StoreRowRewriter.chunkSize` objects (and what their derivations read) at a time.
struct DerivedValueRecomputation {
    private let derivations: DerivationIndex
    private let rewriter: StoreRowRewriter
    /// What `now()` gives: one time for every object of the request or migration.
    private let time = Date()

    /// A recomputation over `coordinator`'s stores; `nil` when its model has no derived attribute
    /// (then nothing needs it). `history` names who writes, for stores that record history.
    init?(coordinator: NSPersistentStoreCoordinator, history: StoreHistoryContext?) {
        guard let derivations = coordinator.managedObjectModel.derivationIndex else { return nil }
        self.derivations = derivations
        rewriter = StoreRowRewriter(coordinator: coordinator, history: history, name: "derived attributes")
    }

    /// Whether a change of objects of `entity` can make any derived value stale: the entity has
    /// derived attributes, or a derivation reads through a relationship to it.
    func isAffected(by entity: NSEntityDescription) -> Bool {
        derivations.derives(entity) || derivations.dependencies.contains { entity.isKindOf(entity: $0.source) || $0.source.isKindOf(entity: entity) }
    }

    /// The objects one relationship away whose derivations read through that relationship to one
    /// of `ids`, as they are in the store now (the rule a save follows). Objects that no longer
    /// exist are left out.
    func dependents(of ids: [NSManagedObjectID]) -> [NSManagedObjectID] {
        guard !derivations.dependencies.isEmpty else { return [] }
        var result: [NSManagedObjectID] = []
        var seen = Set<NSManagedObjectID>()
        rewriter.inChunks(ids) { chunk in
            for object in rewriter.load(chunk) {
                for dependent in object.derivationDependents(in: derivations) where seen.insert(dependent.objectID).inserted {
                    result.append(dependent.objectID)
                }
            }
        }
        return result
    }

    /// Recomputes the objects with `ids` whose entities have derived attributes, and writes those
    /// whose values change; objects whose rows are gone are skipped.
    ///
    /// - Throws: store errors as `NSError`s (an optimistic locking failure when another writer
    ///   changed one of the objects between the read and the write).
    func recompute(_ ids: [NSManagedObjectID], chunkSize: Int = StoreRowRewriter.chunkSize) throws {
        let derivedIDs = ids.filter { !$0.isTemporaryID && derivations.derives($0.entity) }
        try rewriter.inChunks(derivedIDs, of: chunkSize) { chunk in
            let objects = rewriter.load(chunk)
            for object in objects { object.computeDerivedValues(saveTime: time) }
            try rewriter.write(objects.filter { rewriter.context.pendingUpdated[ObjectIdentifier($0)] != nil }, namingChanges: true)
        }
    }

    /// Recomputes every object of `store` whose entity has derived attributes: after a migration,
    /// whose rows were written without a context.
    func recomputeAll(in store: NSPersistentStore) throws {
        for entity in rewriter.context.persistentStoreCoordinator?.managedObjectModel.entities ?? []
        where derivations.derives(entity) && !entity.isAbstract {
            let request = NSFetchRequest<NSManagedObjectID>(entityName: entity.name ?? "")
            request.resultType = .managedObjectIDResultType
            request.includesSubentities = false
            request.affectedStores = [store]
            // A store whose saves rewrite it whole takes every object in one save.
            try recompute(try rewriter.context.fetch(request), chunkSize: store.engine.savesWholeStore ? Int.max : StoreRowRewriter.chunkSize)
        }
    }
}
