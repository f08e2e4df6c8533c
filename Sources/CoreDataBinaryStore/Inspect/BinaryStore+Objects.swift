import CoreDataBinaryFormat
import CoreDataStorage

extension BinaryStore {
    /// The entity and property names the store's records use (Formats/binary-store.md §6),
    /// including names the log added since the last checkpoint: what `dump` shows without a model.
    public func storedCatalog() throws(StoreError) -> Catalog {
        try rw.withReadLock { () throws(StoreError) -> Catalog in
            guard !isClosed else { throw .closed }
            return catalog
        }
    }

    /// The IDs of the live objects of one entity (not its subentities), in primary-key order;
    /// empty for an entity the store does not name.
    ///
    /// Complexity: O(n) for the entity's n objects; reads no file.
    public func objectIDs(ofEntity name: String) throws(StoreError) -> [StoreObjectID] {
        try rw.withReadLock { () throws(StoreError) -> [StoreObjectID] in
            guard !isClosed else { throw .closed }
            let index = try loadedIndex()
            guard let entityID = catalog.entityID(of: name), entityID < index.tables.count else { return [] }
            var ids: [StoreObjectID] = []
            ids.reserveCapacity(index.tables[entityID].liveCount)
            let entity = catalog.entities[entityID].number
            index.tables[entityID].forEachLive { key, _ in ids.append(StoreObjectID(entity: entity, primaryKey: key)) }
            return ids
        }
    }
}
