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
    /// each save after it copies an entity's index table once (copy on write).
    ///
    /// - Throws: ``StoreError/closed`` after close; ``StoreError/io(detail:)`` when the snapshot
    ///   lock (`NAME-shm`) cannot be opened, as for a read-only handle on a store no writer has
    ///   opened since it was made: without the lock another process could restart the log under
    ///   the snapshot.
    public func snapshot() throws(StoreError) -> any StoreGenerationView {
        try checkUsable()
        // Pinned before the state is read: a checkpoint that began earlier holds the lock
        // exclusively until its new root is published, and the read below sees that root.
        try pin()
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

    /// Whether snapshots coordinate through the lock file: any handle that may share the store.
    /// A handle with exclusive access is alone, so counting its own snapshots is enough.
    var snapshotsUseLockFile: Bool { !options.exclusiveAccess }

    /// Counts a snapshot; the first takes this handle's shared snapshot lock (blocking while a
    /// checkpoint holds it exclusively, outside `pinLock` so releases never wait for that).
    func pin() throws(StoreError) {
        pinOpenLock.lock()
        defer { pinOpenLock.unlock() }
        if rw.withReadLock({ snapshotsEnded || isClosed }) { throw .closed }
        let held = pinLock.withLock { () -> Bool in
            pinCount += 1
            return pinFile != nil || !snapshotsUseLockFile
        }
        if held { return }
        let file: any StoreFile
        do {
            file = try fileSystem.openOwnFile(snapshotLockPath, creation: options.readOnly ? .never : .ifMissing, readOnly: options.readOnly, permissionsOf: path)
        } catch {
            unpin()
            throw .io(detail: "cannot take a snapshot of \(path): the snapshot lock \(snapshotLockPath) cannot be opened (\(error)); without it another process could start the log over under the snapshot (wal.md §9)")
        }
        do {
            _ = try file.lock(exclusive: false, wait: true)
        } catch {
            file.close()
            unpin()
            throw Self.ioError(error)
        }
        pinLock.withLock {
            // This snapshot is counted, so the count is not 0: the lock is kept.
            pinFile = file
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
        guard snapshotsUseLockFile else {
            // Alone: no snapshot may start until the maintenance is done.
            pinOpenLock.lock()
            guard pinLock.withLock({ pinCount == 0 }) else {
                pinOpenLock.unlock()
                return nil
            }
            return SnapshotProbe(file: nil, heldLock: pinOpenLock)
        }
        let file: any StoreFile
        do { file = try fileSystem.openOwnFile(snapshotLockPath, creation: .ifMissing, readOnly: false, permissionsOf: path) } catch { throw Self.ioError(error) }
        let locked: Bool
        do { locked = try file.lock(exclusive: true, wait: false) } catch {
            file.close()
            throw Self.ioError(error)
        }
        guard locked else {
            file.close()
            return nil
        }
        return SnapshotProbe(file: file, heldLock: nil)
    }

    /// A live row of the snapshot's index, read through the store's files and page cache.
    func snapshotRow(_ id: StoreObjectID, index: ObjectIndex) throws(StoreError) -> StoreRow? {
        try rw.withReadLock { () throws(StoreError) -> StoreRow? in
            guard !isClosed, !snapshotsEnded else { throw .closed }
            guard let entityID = catalog.entityID(of: id.entity), let location = index.location(entityID: entityID, key: id.primaryKey) else { return nil }
            let row = try readRow(at: location)
            // The snapshot lock keeps its locations in place; this check makes any slip an
            // error, never another object's values.
            guard row == nil || row?.objectID == id else {
                throw .corrupt(detail: "\(Self.describe(location)): a snapshot read \(row.map { "\($0.objectID)" } ?? "nothing") where \(id) was")
            }
            return row
        }
    }

    /// Every live row of `entityNames` in the snapshot's index, in file order per entity.
    func snapshotRows(of entityNames: [String], index: ObjectIndex) throws(StoreError) -> [StoreRow] {
        try rw.withReadLock { () throws(StoreError) -> [StoreRow] in
            guard !isClosed, !snapshotsEnded else { throw .closed }
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

/// The exclusive snapshot lock a checkpoint or compaction holds: the lock file, or for a
/// handle with exclusive access its own pin lock. Released on the thread that took it.
struct SnapshotProbe {
    let file: (any StoreFile)?
    let heldLock: NSLock?

    func release() {
        file?.unlock()
        file?.close()
        heldLock?.unlock()
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
