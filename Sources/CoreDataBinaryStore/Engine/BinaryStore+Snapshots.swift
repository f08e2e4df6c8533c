import CoreDataBinaryFormat
import CoreDataFileSystem
import CoreDataModel
import CoreDataStorage
import Foundation

/// Snapshots for query generations (Formats/wal.md §9, "Snapshots"). A snapshot is a copy of the
/// object-ID index as of one published state: data pages never change, and while any snapshot
/// is alive no handle restarts the log or replaces the data file, so every location the copy
/// holds stays readable. A shared lock on `NAME-shm` tells every handle, in every process, that
/// a snapshot is alive; a checkpoint or compaction first tries to take it exclusively.
extension BinaryStore: StoreSnapshotting {
    /// Complexity: the first snapshot loads the whole object-ID index if it is not loaded yet;
    /// each saves after it copies an entity's index table once (copy on write).
    public func snapshot() throws(StoreError) -> any StoreGenerationView {
        try checkUsable()
        // Pinned before the state is read: a checkpoint that began earlier holds the lock
        // exclusively until its new root is published, and the read below sees that root.
        pin()
        do {
            let (index, metadata, generation) = try sharedRead { () throws(StoreError) -> (ObjectIndex, StoreMetadata, String) in
                (try loadedIndex(), metadataValue, "\(root.generation).\(publishedLogEnd)")
            }
            return BinaryStoreSnapshot(store: self, index: index, metadata: metadata, generation: generation)
        } catch {
            unpin()
            throw error
        }
    }

    var snapshotLockPath: String { path + "-shm" }

    /// Takes this handle's shared snapshot lock with its first snapshot. A handle that cannot
    /// (a read-only handle where no writer made `NAME-shm` yet) goes on without it: then no
    /// writer can have the store open either.
    func pin() {
        pinLock.lock()
        defer { pinLock.unlock() }
        pinCount += 1
        guard pinCount == 1, pinFile == nil else { return }
        guard let file = try? fileSystem.open(snapshotLockPath, create: !options.readOnly, readOnly: options.readOnly) else { return }
        if (try? file.lock(exclusive: false, wait: true)) == true {
            pinFile = file
        } else {
            file.close()
        }
    }

    /// Called when a snapshot is released.
    func unpin() {
        pinLock.lock()
        defer { pinLock.unlock() }
        pinCount = max(0, pinCount - 1)
        if pinCount == 0, let file = pinFile {
            file.unlock()
            file.close()
            pinFile = nil
        }
    }

    /// Drops the snapshot lock whatever the count (close: this handle's snapshots end with it).
    func releasePin() {
        pinLock.lock()
        defer { pinLock.unlock() }
        if let file = pinFile {
            file.unlock()
            file.close()
            pinFile = nil
        }
    }

    /// The exclusive snapshot lock, held by a checkpoint or compaction until its new root is
    /// published; `nil` when a snapshot is alive in some handle (this one included: its snapshot
    /// lock is another open file).
    ///
    /// - Throws: the file layer's error when the lock file cannot be opened or locked: the
    ///   maintenance fails rather than restart a log that a snapshot may still read.
    func snapshotProbe() throws(StoreError) -> SnapshotProbe? {
        let file: any StoreFile
        do { file = try fileSystem.open(snapshotLockPath, create: true, readOnly: false) } catch { throw Self.ioError(error) }
        let locked: Bool
        do { locked = try file.lock(exclusive: true, wait: false) } catch {
            file.close()
            throw Self.ioError(error)
        }
        guard locked else {
            file.close()
            return nil
        }
        return SnapshotProbe(file: file)
    }

    /// A live row of the snapshot's index, read through the store's files and page cache.
    func snapshotRow(_ id: StoreObjectID, index: ObjectIndex) throws(StoreError) -> StoreRow? {
        try rw.withReadLock { () throws(StoreError) -> StoreRow? in
            guard !isClosed else { throw .closed }
            guard let entityID = catalog.entityID(of: id.entityName), let location = index.location(entityID: entityID, key: id.primaryKey) else { return nil }
            return try readRow(at: location)
        }
    }

    /// Every live row of `entityNames` in the snapshot's index, in file order per entity.
    func snapshotRows(of entityNames: [String], index: ObjectIndex) throws(StoreError) -> [StoreRow] {
        try rw.withReadLock { () throws(StoreError) -> [StoreRow] in
            guard !isClosed else { throw .closed }
            var rows: [StoreRow] = []
            for name in entityNames {
                guard let entityID = catalog.entityID(of: name), entityID < index.tables.count else { continue }
                let table = index.tables[entityID]
                rows.reserveCapacity(rows.count + table.liveCount)
                var located: [UInt64] = []
                located.reserveCapacity(table.liveCount)
                table.forEachLive { _, location in located.append(location) }
                located.sort()
                for location in located { if let row = try readRow(at: location) { rows.append(row) } }
            }
            return rows
        }
    }
}

/// The exclusive snapshot lock a checkpoint or compaction holds.
struct SnapshotProbe {
    let file: (any StoreFile)?

    func release() {
        file?.unlock()
        file?.close()
    }
}

/// A binary store as it was at one published state. Reads go through the store's files and
/// page cache with the index the snapshot copied; the store keeps the locations valid while the
/// snapshot lives (see ``BinaryStore/snapshot()``).
///
/// Complexity: a fetch reads every row of the fetched entities and evaluates the predicate on
/// them (the store's secondary indexes describe its latest state, not the snapshot's).
final class BinaryStoreSnapshot: StoreGenerationView, @unchecked Sendable {
    let store: BinaryStore
    let index: ObjectIndex
    let storedMetadata: StoreMetadata
    let generation: String

    init(store: BinaryStore, index: ObjectIndex, metadata: StoreMetadata, generation: String) {
        self.store = store
        self.index = index
        self.storedMetadata = metadata
        self.generation = generation
    }

    deinit { store.unpin() }

    func metadata() throws(StoreError) -> StoreMetadata { storedMetadata }

    func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? { try store.snapshotRow(objectID, index: index) }

    func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        var rows: [StoreRow] = []
        rows.reserveCapacity(objectIDs.count)
        for id in objectIDs { if let row = try store.snapshotRow(id, index: index) { rows.append(row) } }
        return rows
    }

    func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        let candidates = try store.snapshotRows(of: request.entityNames, index: index)
        let matches = StoreQuery.run(request, candidates: candidates, resolve: { [self] id in try? row(for: id) }, entities: store.entities)
        switch request.resultType {
        case .count: return .count(matches.count)
        case .objectIDs: return .objectIDs(matches.map(\.objectID))
        case .rows: return .rows(matches)
        }
    }
}
