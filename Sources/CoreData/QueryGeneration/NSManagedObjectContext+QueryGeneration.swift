import CoreDataStorage
import Foundation

/// A context's pin to a query generation.
final class QueryGenerationPin {
    /// The generation read, once taken; `nil` until the next read takes the current one.
    var token: NSQueryGenerationToken?

    init(token: NSQueryGenerationToken?) { self.token = token }
}

extension NSManagedObjectContext {
    /// The generation the context reads: `nil` when it reads the latest data (the default).
    ///
    /// Pinned to ``NSQueryGenerationToken/current``, the context takes the generation at this
    /// call or its next read, whichever comes first. Call it on the context's queue.
    public var queryGenerationToken: NSQueryGenerationToken? {
        guard let pin = queryGeneration else { return nil }
        return resolvedGeneration(pin)
    }

    /// Pins the context to a generation of the stores' data, or unpins it with `nil`.
    ///
    /// A pinned context's fetches and faults read that generation while other contexts and
    /// processes save; it moves to the latest generation when it saves, merges changes
    /// (`mergeChanges(fromContextDidSave:)`, automatic merges) or is reset. Pass
    /// ``NSQueryGenerationToken/current`` for the latest, or another context's
    /// ``queryGenerationToken`` to read what that context reads.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) for a token no live token of this
    ///   coordinator holds a snapshot for (one decoded from an archive, or of another coordinator).
    /// Call it on the context's queue; a child context reads through its parent and cannot be pinned.
    public func setQueryGenerationFrom(_ generation: NSQueryGenerationToken?) throws {
        assertOnQueue()
        guard let generation else {
            queryGeneration = nil
            return
        }
        guard parent == nil else {
            throw coreDataError(NSPersistentStoreOperationError, "a child context reads through its parent; pin the parent to a query generation instead")
        }
        if generation.isCurrent {
            queryGeneration = QueryGenerationPin(token: nil)
            return
        }
        let stores = persistentStoreCoordinator?.persistentStores ?? []
        for store in stores where store.engine is any StoreSnapshotting {
            guard generation.views[store.identifier] != nil else {
                throw coreDataError(
                    NSPersistentStoreOperationError,
                    "the query generation \(generation) holds no snapshot of store \(store.identifier): it was decoded from an archive, belongs to another coordinator, or the store was added after it")
            }
        }
        queryGeneration = QueryGenerationPin(token: generation)
    }

    /// The engine reads go to: the pinned generation's snapshot of `store`, or the store itself.
    func readEngine(for store: NSPersistentStore) -> any PersistentStoreEngine {
        guard let pin = queryGeneration, let token = resolvedGeneration(pin) else { return store.engine }
        return token.views[store.identifier] ?? store.engine
    }

    /// Takes the current generation for a pin that waits for it.
    private func resolvedGeneration(_ pin: QueryGenerationPin) -> NSQueryGenerationToken? {
        if let token = pin.token { return token }
        var views: [String: any StoreGenerationView] = [:]
        for store in persistentStoreCoordinator?.persistentStores ?? [] {
            // A store that cannot take a snapshot now is read at its latest state.
            if let snapshotting = store.engine as? any StoreSnapshotting, let view = try? snapshotting.snapshot() {
                views[store.identifier] = view
            }
        }
        let token = NSQueryGenerationToken(views: views)
        pin.token = token
        return token
    }

    /// After a save, a merge or a reset a pinned context reads the latest generation, taken at
    /// its next read (Apple's rule). The old snapshots are let go now.
    func advanceQueryGeneration() {
        guard let pin = queryGeneration else { return }
        pin.token = nil
    }
}
