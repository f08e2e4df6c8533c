import CoreDataStorage
import Foundation

/// Reads objects already in a store into a private context and writes chosen ones back as
/// updated rows: what the writes that bypass a context's save (migration, batch requests) use to
/// fix up objects after them (``DerivedValueRecomputation``, ``BatchDeleteBackReferences``).
///
/// The writes run no validation, merge policy, change notification or undo. Each written
/// object's version goes up, as after any store write.
///
/// Threading: used on the calling thread only, inside the batch request or migration that made it.
struct StoreRowRewriter {
    /// Objects read and written at a time.
    static let chunkSize = 1_000

    let context: NSManagedObjectContext
    private let history: StoreHistoryContext?

    /// A rewriter over `coordinator`'s stores; `history` names who writes, for stores that
    /// record history.
    init(coordinator: NSPersistentStoreCoordinator, history: StoreHistoryContext?, name: String) {
        self.history = history
        context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.name = name
        // Nothing here is undone; an undo manager would only hold the objects alive.
        context.undoManager = nil
    }

    /// The objects with `ids`, filled from their stores in one read per store; objects whose rows
    /// are gone are left out.
    func load(_ ids: [NSManagedObjectID]) -> [NSManagedObject] {
        let objects = ids.map { context.object(with: $0) }
        context.fillFaults(objects)
        return objects.filter { !$0.isFaultState }
    }

    /// Writes the rows of `objects`, one save per store; with `namingChanges`, persistent history
    /// names each object's changed attributes as its updated properties.
    func write(_ objects: [NSManagedObject], namingChanges: Bool) throws {
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
            if namingChanges { byStore[key]?.changes.history?.updatedProperties[row.objectID] = object.storedChangedValues().keys.sorted() }
        }
        for entry in byStore.values.sorted(by: { $0.store.identifier < $1.store.identifier }) {
            _ = try mapStoreError { () throws(StoreError) -> [StoreObjectID: Int64] in try entry.store.engine.save(entry.changes) }
        }
    }

    /// Runs `body` over `ids` in chunks of `chunkSize`, forgetting each chunk's objects after it.
    func inChunks(_ ids: [NSManagedObjectID], of chunkSize: Int = Self.chunkSize, _ body: ([NSManagedObjectID]) throws -> Void) rethrows {
        var start = 0
        while start < ids.count {
            try body(Array(ids[start..<min(ids.count, start + chunkSize)]))
            context.reset()
            start += chunkSize
        }
    }
}
