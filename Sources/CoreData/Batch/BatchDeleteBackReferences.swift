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
/// ``forget(_:in:)`` after it with the IDs the store deleted. The holders include every object
/// whose derived attributes read through a relationship to a deleted one, so they are also what
/// ``DerivedValueRecomputation`` recomputes afterwards.
///
/// Threading: used on the calling thread only, inside the batch request that made it.
/// Memory: one chunk of `StoreRowRewriter.chunkSize` objects at a time.
struct BatchDeleteBackReferences {
    private let rewriter: StoreRowRewriter

    init(coordinator: NSPersistentStoreCoordinator, history: StoreHistoryContext?) {
        rewriter = StoreRowRewriter(coordinator: coordinator, history: history, name: "batch delete")
    }

    /// Whether deleting objects of `entity` (or of its subentities) can leave names of them in
    /// other objects' rows: some relationship of theirs has an inverse.
    static func applies(to entity: NSEntityDescription) -> Bool {
        entity.relationshipsByName.values.contains { $0.inverseRelationship != nil } || entity.subentities.contains(where: applies)
    }

    /// The objects whose rows name one of `ids` through the inverse of one of their relationships,
    /// read from the store as it is now (before the delete).
    func holders(of ids: [NSManagedObjectID]) -> [NSManagedObjectID] {
        var result: [NSManagedObjectID] = []
        var seen = Set<NSManagedObjectID>(ids)
        rewriter.inChunks(ids) { chunk in
            for object in rewriter.load(chunk) {
                for relationship in object.entity.relationshipsByName.values where relationship.inverseRelationship != nil {
                    for holder in object.objectIDs(forRelationshipNamed: relationship.name) where seen.insert(holder).inserted {
                        result.append(holder)
                    }
                }
            }
        }
        return result
    }

    /// Rewrites the rows of `holders` that still name one of `deleted`, without them.
    ///
    /// - Throws: store errors as `NSError`s (an optimistic locking failure when another writer
    ///   changed a holder between the read and the write).
    func forget(_ deleted: Set<NSManagedObjectID>, in holders: [NSManagedObjectID]) throws {
        guard !deleted.isEmpty else { return }
        try rewriter.inChunks(holders) { chunk in
            try rewriter.write(rewriter.load(chunk).filter { forget(deleted, in: $0) }, namingChanges: false)
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
}
