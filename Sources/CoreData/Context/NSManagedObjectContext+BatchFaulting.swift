import CoreDataModel
import CoreDataStorage
import Foundation

/// The objects of one batch of a `fetchBatchSize` fetch, by ID (IDs, not objects, so that a
/// batch and its members do not keep each other alive).
final class FaultBatch {
    let objectIDs: [NSManagedObjectID]

    init(objectIDs: [NSManagedObjectID]) {
        self.objectIDs = objectIDs
    }
}

extension NSManagedObjectContext {
    /// Splits fetched objects into batches of `size` in result order; each fault remembers its
    /// batch, so that firing it reads the rows of the whole batch in one store call.
    func assignFaultBatches(_ objects: [NSManagedObject], size: Int) {
        var start = 0
        while start < objects.count {
            let slice = objects[start..<min(objects.count, start + size)]
            let members = slice.filter { $0.isFaultState && !$0.hasPrefetchedRow && $0.objectID.storeObjectID != nil }
            if members.count > 1 {
                let batch = FaultBatch(objectIDs: members.map(\.objectID))
                for member in members { member.faultBatch = batch }
            }
            start += size
        }
    }

    /// Reads the rows of every member of `batch` that is still a fault and fills them, one
    /// store call per store. Members whose rows are gone stay faults and are handled one by
    /// one when fired (`shouldDeleteInaccessibleFaults`).
    func fulfillBatch(_ batch: FaultBatch) {
        let members = batch.objectIDs.compactMap { registered[$0] }.filter { $0.faultBatch === batch }
        for member in members { member.faultBatch = nil }
        fillFaults(members.filter { $0.isFaultState })
    }

    /// Fills faults from their stores, grouped by store: from rows a fetch already read when
    /// there are any, the others with ``PersistentStoreEngine/rows(for:)``. Store errors leave
    /// the objects as faults, to be fired (and reported) one by one.
    func fillFaults(_ faults: [NSManagedObject]) {
        var byStore: [ObjectIdentifier: (store: NSPersistentStore, objects: [StoreObjectID: NSManagedObject])] = [:]
        for object in faults where object.isFaultState {
            if fillFromFreshPrefetchedRow(object) {
                object.awakeFromFetch()
                continue
            }
            guard let (store, id) = object.storeLocation else { continue }
            byStore[ObjectIdentifier(store), default: (store, [:])].objects[id] = object
        }
        for (_, group) in byStore {
            guard let rows = try? readEngine(for: group.store).rows(for: Array(group.objects.keys)) else { continue }
            for row in rows {
                guard let object = group.objects[row.objectID], object.isFaultState else { continue }
                object.fill(from: row)
                object.awakeFromFetch()
            }
        }
    }
}
