import CoreDataModel
import CoreDataStorage
import Foundation

extension NSManagedObjectContext {
    /// `relationshipKeyPathsForPrefetching`: registers the destinations of each key path
    /// (`books`, `books.tags`) with their values, reading the rows of each step in one store
    /// call per store.
    ///
    /// Each source's prefetched relationships are filled (its fault, when it is one, fired from
    /// the row the fetch read, or for objects fetched without values from one batched read), as
    /// Apple's prefetched relationships are no faults: the destinations then live as long as the
    /// objects that point at them, also in a context that does not retain its objects.
    ///
    /// - Throws: `NSPersistentStoreOperationError` when a key of a path is not a relationship of
    ///   the entity it is read from (the message names both).
    /// Complexity: one batched row read per step and store, plus O(number of destinations).
    func prefetch(_ keyPaths: [String], of objects: [NSManagedObject], entity: NSEntityDescription) throws {
        for keyPath in keyPaths {
            var sources = objects
            var current = entity
            for key in keyPath.split(separator: ".").map(String.init) {
                guard let relationship = current.relationshipsByName[key], let destination = relationship.destinationEntity else {
                    throw coreDataError(
                        NSPersistentStoreOperationError,
                        "relationshipKeyPathsForPrefetching: '\(key)' of '\(keyPath)' is not a relationship of \(current.name ?? "?")",
                        [NSValidationKeyErrorKey: keyPath])
                }
                if parent == nil {
                    // Sources fetched without values are read in one batch, not one by one;
                    // so are those whose rows the staleness interval expires.
                    _ = prefetchedRowsAreFresh()
                    fillFaults(sources.filter { $0.isFaultState && !$0.hasPrefetchedRow })
                }
                var seen = Set<ObjectIdentifier>()
                var destinations: [NSManagedObject] = []
                for source in sources where source.entity.isKindOf(entity: current) {
                    for object in destinationObjects(of: source, through: relationship) where seen.insert(ObjectIdentifier(object)).inserted {
                        destinations.append(object)
                    }
                }
                if parent == nil {
                    fillFaults(destinations)
                } else {
                    for object in destinations { object.fireFaultIfNeeded() }
                }
                sources = destinations
                current = destination
            }
        }
    }

    /// The objects `source` points at through `relationship`, from its current values (which
    /// read the relationship from the store when its row leaves it out); a fault fires first,
    /// from the row the fetch cached for it when there is one.
    private func destinationObjects(of source: NSManagedObject, through relationship: NSRelationshipDescription) -> [NSManagedObject] {
        source.fireFaultIfNeeded()
        return source.liveDestinationIDs(relationship).map { object(with: $0) }
    }
}
