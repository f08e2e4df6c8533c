import CoreDataBinaryFormat
import CoreDataStorage

/// The saves in a binary store's write-ahead log since the last checkpoint, as the CLI's `log`
/// shows them (Formats/wal.md §3–§7).
public struct BinaryStoreLogHistory: Sendable, Equatable {
    /// One valid frame (wal.md §3).
    public struct Frame: Sendable, Equatable {
        /// The frame's log offset.
        public var offset: UInt64
        /// One more than the frame before it; 1 for the first after a checkpoint.
        public var sequence: UInt64
        /// The entries' bytes (0 for a sync marker).
        public var payloadBytes: Int
        /// The last frame of a save.
        public var isCommit: Bool
        /// An empty frame saying every frame before it was synced.
        public var isSyncMarker: Bool
    }

    /// One committed save: its frames and what it did to which objects.
    public struct Commit: Sendable, Equatable {
        /// The log offset of the save's first frame.
        public var offset: UInt64
        /// The save's frames, the commit frame last.
        public var frames: [Frame]
        /// Objects the save wrote that no earlier save (or the last checkpoint) held.
        public var inserted: [StoreObjectID]
        /// Objects the save wrote a new version of.
        public var updated: [StoreObjectID]
        /// Objects the save deleted (tombstones).
        public var deleted: [StoreObjectID]
        /// Whether the save added entity or property names (a catalog entry, binary-store.md §6).
        public var changedCatalog: Bool
        /// Whether the save replaced the store's metadata.
        public var changedMetadata: Bool
    }

    /// The log file's size; 0 when there is none.
    public var logFileBytes: UInt64
    /// The salt of the current frames: frames carrying another belong to an earlier checkpoint.
    public var salt: UInt64
    /// The committed saves, oldest first.
    public var commits: [Commit]
    /// Bytes after the last committed save: a torn tail or frames of an earlier checkpoint,
    /// which the next save overwrites.
    public var droppedBytes: UInt64
}

extension BinaryStore {
    /// Reads the log again and tells, per committed save, its frames and which objects it
    /// inserted, updated and deleted, judged against the index of the last checkpoint.
    ///
    /// Reads the whole log and the checkpoint's index (O(log size + objects)).
    /// - Throws: ``StoreError/corrupt(detail:)`` naming the damaged place,
    ///   ``StoreError/io(detail:)`` when a file cannot be read.
    public func logHistory() throws(StoreError) -> BinaryStoreLogHistory {
        try rw.withReadLock { () throws(StoreError) -> BinaryStoreLogHistory in
            guard !isClosed else { throw .closed }
            let log = try replayLog()
            guard let replay = log.replay else {
                return BinaryStoreLogHistory(logFileBytes: log.size, salt: root.logSalt, commits: [], droppedBytes: 0)
            }
            var known: Set<ObjectKey> = []
            let checkpointIndex: ObjectIndex
            do {
                checkpointIndex = try Self.loadIndex(dataFile, root: root, catalog: log.checkpointCatalog)
            } catch {
                // Open rebuilt the index the same way when the persisted one was damaged.
                checkpointIndex = try Self.rebuildIndex(dataFile, root: root, catalog: log.checkpointCatalog)
            }
            for (entityID, table) in checkpointIndex.tables.enumerated() {
                table.forEachLive { key, _ in known.insert(ObjectKey(entityID: entityID, key: key)) }
            }
            var commits: [BinaryStoreLogHistory.Commit] = []
            for transaction in replay.transactions {
                var commit = BinaryStoreLogHistory.Commit(
                    offset: transaction.offset,
                    frames: transaction.frameHeaders.map {
                        .init(offset: $0.offset, sequence: $0.header.sequence, payloadBytes: $0.header.payloadLength,
                              isCommit: $0.header.isCommit, isSyncMarker: $0.header.isSyncMarker)
                    },
                    inserted: [], updated: [], deleted: [],
                    changedCatalog: transaction.catalog != nil, changedMetadata: transaction.metadata != nil)
                for record in transaction.records {
                    // Catalog numbers only grow (§6), so the latest catalog names every record.
                    guard record.entityID < catalog.entities.count else { continue }
                    let id = StoreObjectID(entity: catalog.entities[record.entityID].number, primaryKey: record.key)
                    let key = ObjectKey(entityID: record.entityID, key: record.key)
                    if record.tombstone {
                        commit.deleted.append(id)
                        known.remove(key)
                    } else if known.insert(key).inserted {
                        commit.inserted.append(id)
                    } else {
                        commit.updated.append(id)
                    }
                }
                commits.append(commit)
            }
            return BinaryStoreLogHistory(logFileBytes: log.size, salt: root.logSalt, commits: commits, droppedBytes: replay.droppedBytes)
        }
    }
}
