import CoreDataModel
import CoreDataStorage
import Foundation

/// Takes the objects a batch delete removed out of the relationships that still name them.
///
/// Stores that keep both sides of a relationship in their rows (binary, XML, in-memory, atomic
/// and Apple SQLite files as this package holds them) would otherwise still list a deleted book in
/// its author's `books`: a context reading the author would get a fault for a row that is gone. In
/// Apple's SQLite store a to-many relationship is its destinations' foreign keys, so deleted rows
/// leave it by themselves; here the holders' rows are rewritten instead. A to-one relationship
/// that named a deleted object becomes nil. No other delete rule runs (no cascade, no deny), as in
/// Apple's batch delete.
///
/// Usage: ``holders(of:)`` before the delete (the deleted rows name their holders), then
/// ``forget(_:in:)`` after it with the IDs the store deleted.
///
/// Threading: used on the calling thread only, inside the batch request that made it.
/// Memory: one chunk of ``chunkSize`` objects at a time.
struct BatchDeleteBackReferences {
    static let chunkSize = 1_000

    private let context: NSManagedObjectContext
    private let history: StoreHistoryContext?

    init(coordinator: NSPersistentStoreCoordinator, history: StoreHistoryContext?) {
        self.history = history
        context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.name = "batch delete"
        context.undoManager = nil
    }

    /// Whether deleting objects of `entity` (or of its subentities) can leave names of them in
    /// other objects' rows: some relationship of theirs has an inverse.
    static func applies(to entity: NSEntityDescription) -> Bool {
        func hasInverse(_ entity: NSEntityDescription) -> Bool {
            entity.relationshipsByName.values.contains { $0.inverseRelationship != nil }
                || entity.subentities.contains(where: hasInverse)
        }
        return hasInverse(entity)
    }

    /// The objects whose rows name one of `ids` through the inverse of one of their relationships,
    /// read from the store as it is now (before the delete).
    func holders(of ids: [NSManagedObjectID]) -> [NSManagedObjectID] {
        var result: [NSManagedObjectID] = []
        var seen = Set<NSManagedObjectID>(ids)
        var start = 0
        while start < ids.count {
            for object in load(Array(ids[start..<min(ids.count, start + Self.chunkSize)])) {
                for relationship in object.entity.relationshipsByName.values where relationship.inverseRelationship != nil {
                    for holder in object.objectIDs(forRelationshipNamed: relationship.name) where seen.insert(holder).inserted {
                        result.append(holder)
                    }
                }
            }
            context.reset()
            start += Self.chunkSize
        }
        return result
    }

    /// Rewrites the rows of `holders` that still name one of `deleted`, without them.
    ///
    /// - Throws: store errors as `NSError`s (an optimistic locking failure when another writer
    ///   changed a holder between the read and the write).
    func forget(_ deleted: Set<NSManagedObjectID>, in holders: [NSManagedObjectID]) throws {
        guard !deleted.isEmpty else { return }
        var start = 0
        while start < holders.count {
            var changed: [NSManagedObject] = []
            for object in load(Array(holders[start..<min(holders.count, start + Self.chunkSize)])) where forget(deleted, in: object) {
                changed.append(object)
            }
            try write(changed)
            context.reset()
            start += Self.chunkSize
        }
    }

    /// Takes `deleted` out of `object`'s relationships; whether anything changed.
    private func forget(_ deleted: Set<NSManagedObjectID>, in object: NSManagedObject) -> Bool {
        var changed = false
        for relationship in object.entity.relationshipsByName.values where relationship.inverseRelationship != nil {
            object.materialise(relationship)
            let name = relationship.name
            if relationship.isToMany {
                if let members = object.toManyValues[name], members.contains(where: { deleted.contains($0.objectID) }) {
                    object.toManyValues[name] = members.filter { !deleted.contains($0.objectID) }
                    changed = true
                }
            } else if let destination = object.toOneValues[name], deleted.contains(destination.objectID) {
                object.toOneValues[name] = nil
                changed = true
            }
        }
        return changed
    }

    /// The objects with `ids`, filled from their stores in one read per store; objects whose rows
    /// are gone are left out.
    private func load(_ ids: [NSManagedObjectID]) -> [NSManagedObject] {
        let objects = ids.map { context.object(with: $0) }
        context.fillFaults(objects)
        return objects.filter { !$0.isFaultState }
    }

    /// Writes the rows of `objects`, one save per store.
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
        }
        for entry in byStore.values.sorted(by: { $0.store.identifier < $1.store.identifier }) {
            _ = try mapStoreError { () throws(StoreError) -> [StoreObjectID: Int64] in try entry.store.engine.save(entry.changes) }
        }
    }
}
