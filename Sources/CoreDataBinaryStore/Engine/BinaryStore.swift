import CoreDataBinaryFormat
import CoreDataModel
import CoreDataStorage
import Foundation
import Synchronization

/// The binary store (`NSBinaryStoreType`): an append-only data file of LZ4-compressed,
/// XXH3-checksummed pages, a write-ahead log with group commit, a page cache and an object-ID
/// index. The formats are in `Formats/binary-store.md` and `Formats/wal.md`.
///
/// Durability: `save(_:)` returns after its log frames are synced (or only written, with
/// ``BinaryStoreOptions/Durability/normal``). A failed write or sync poisons the handle: that
/// save and every later call throw, and reopening recovers what is on disk.
///
/// Threading: every method is safe from any thread. Saves validate one at a time and share
/// syncs (group commit); fetches run concurrently and see only published saves; a checkpoint
/// pauses saves, not fetches, until it repoints the index.
///
/// Memory: 16 bytes per object for the index plus the page cache bound; rows are read from the
/// files when fetched.
public final class BinaryStore: PersistentStoreEngine, @unchecked Sendable {
    /// What opening found.
    public struct OpenReport: Sendable, Equatable {
        /// Why the persisted index could not be used, when open rebuilt it from the data pages.
        public var rebuiltIndex: String?
        /// Why the persisted secondary indexes (Formats/binary-store.md §7.2) could not be used:
        /// their directory is damaged. Fetches build them from the records, and the next
        /// checkpoint writes them anew; no data is affected.
        public var droppedSecondaryIndexes: String?
        /// Saves read back from the log.
        public var replayedSaves = 0
        /// Log bytes after the last complete save: a torn tail, or frames of an earlier checkpoint.
        public var droppedLogBytes: UInt64 = 0
        /// With ``BinaryStoreOptions/salvagesDamagedLog``: the damaged log frame open stopped
        /// before (its offset and what is wrong); the saves from it on are not in this handle.
        public var logDamage: BinaryFormatError?

        public init() {}
    }

    /// The data file's path; the log is `path + "-wal"`.
    public let path: String
    /// What opening the store found.
    public let openReport: OpenReport
    let options: BinaryStoreOptions
    let fileSystem: any StoreFileSystem
    let entities: [String: NSEntityDescription]
    let hasUniquenessConstraints: Bool
    /// Per entity name, the attributes whose large values go to the external-data folder
    /// (Formats/binary-store.md §15); empty for most models.
    let externalAttributes: [String: Set<String>]
    /// Reads external values for the record decoders, which do no I/O of their own.
    let externalLoader: ExternalDataLoader
    /// Builds history transactions when the store records them.
    let historyRecorder: StoreHistoryRecorder?
    let cache: PageCache
    /// What top-k scans learned about the data pages' sort values (``PageSortBounds``).
    let pageSortBounds = PageSortBoundsTable()
    /// Per entity name, the attributes with a secondary index (the model's fetch indexes and
    /// single-attribute uniqueness constraints) and the kind each orders.
    let indexedAttributes: [String: [String: SecondaryIndex.Kind]]
    /// Built secondary indexes by entity ID and attribute; guarded by `secondaryLock`. This
    /// handle's saves keep them current; another process's save drops those of the entities it
    /// changes (Formats/binary-store.md §7.1).
    var secondaryIndexes: [Int: [String: SecondaryIndex]] = [:]
    /// The secondary indexes the current root's file holds (§7.2); guarded by `secondaryLock`.
    var persistedSecondary: [SecondaryIndexID: SecondaryIndexListing] = [:]
    /// How many secondary indexes fetches read from the file and built from the records since
    /// open; guarded by `secondaryLock` (tests and `statistics()` tell the two apart).
    var secondaryIndexesRead = 0
    var secondaryIndexesBuilt = 0
    let secondaryLock = NSLock()

    // Published state, read under `rw` (shared) or by the writer holding `commitLock`; changed
    // under `rw` (exclusive) with `commitLock` or `tailLock` held. The properties every point
    // read touches skip the runtime's exclusivity check, which costs about 75 instructions per
    // access and only catches overlapping accesses on one thread; none of their accesses calls
    // out while it lasts.
    let rw = ReadWriteLock()
    @exclusivity(unchecked) var dataFile: any StoreFile
    let logFile: (any StoreFile)?
    var header: FileHeader
    @exclusivity(unchecked) var root: RootSlot
    var activeSlot: Int
    /// The catalog with its slot tables; assigning ``catalog`` rebuilds the tables.
    var layouts: RecordLayouts
    var catalog: Catalog {
        // Yielded, not returned: a returned copy retains and releases each of the catalog's
        // arrays, and a point lookup reads the catalog twice.
        _read { yield layouts.catalog }
        set { layouts = RecordLayouts(catalog: newValue, models: modelLayouts) }
    }
    /// The model's property layouts by entity name: rows decode into them.
    let modelLayouts: [String: PropertyLayout]

    // The object-ID index (Formats/binary-store.md §7): read under `rw`, guarded by `indexLock`
    // too, because a reader may load it. Until something needs all of it, point lookups search
    // the persisted pages and saves go to the overlay (BinaryStore+PersistedIndex.swift).
    let indexLock = NSLock()
    /// The whole index, once `indexLoaded`; guarded by `indexLock`. No runtime exclusivity
    /// check, as for the published state above.
    @exclusivity(unchecked) var memoryIndex: ObjectIndex
    var indexLoaded: Bool
    /// The pages the store opened with, while the index is not loaded.
    var persistedIndex: PersistedIndex?
    /// Changes published since open, while the index is not loaded; location 0 is a delete.
    var indexOverlay = ObjectIndex()
    var persistedLookups = 0
    /// Entities whose next key was checked against the persisted index.
    var keysChecked: Set<Int> = []
    /// Why the index was rebuilt from the data pages after open (damage found in an index page).
    var lateIndexRebuild: String?

    /// Why the index was rebuilt from the data pages after open, when an index page turned out
    /// to be damaged the first time it was read (Formats/binary-store.md §7); `nil` otherwise.
    /// Damage to the index directory is found at open instead (``OpenReport/rebuiltIndex``).
    public var indexRebuiltAfterOpen: String? { indexLock.withLock { lateIndexRebuild } }

    var metadataValue: StoreMetadata
    var isClosed = false

    // Snapshots (query generations), guarded by `pinLock`: while any is alive this handle holds
    // a shared lock on `NAME-shm`, which puts off every handle's log restart (wal.md §9).
    let pinLock = NSLock()
    var pinCount = 0
    var pinFile: (any StoreFile)?
    /// Serializes taking the snapshot lock (and, with exclusive access, is the lock itself).
    let pinOpenLock = NSLock()
    /// Set (under `rw`) when the handle closes: its snapshots read nothing more.
    var snapshotsEnded = false
    /// The last batch whose changes readers see.
    var publishedBatchID = 0
    /// The end of the published log frames. Log bytes past it may be stale frames of an earlier
    /// checkpoint or a torn tail that the next save overwrites, so they are never cached.
    var publishedLogEnd: UInt64

    // Writer state, guarded by `commitLock`.
    let commitLock = NSLock()
    var logEnd: UInt64
    var logSequence: UInt64
    var logChain: UInt64
    /// Saves queued but not yet published: what validation must see beyond the index.
    var pendingBatches: [CommitBatch] = []
    /// The slots of the last row layout a save checked for references, and of which entity.
    /// Caller holds `commitLock`.
    var referenceSlots: (layout: PropertyLayout, entity: EntityNumber, slots: [Int])?
    /// Per entity, the largest primary key saved or queued, deleted ones included.
    var savedHighWater: [String: Int64] = [:]
    /// Log locations of tombstones since the last checkpoint (they go into the next data pages).
    var logTombstones: [(entityID: Int, key: Int64, location: UInt64)] = []
    var unique: UniquenessIndex?
    var checkpointRunning = false
    var nextBatchID = 0

    // Primary keys, guarded by `keyLock`.
    let keyLock = NSLock()
    var nextKeys: [String: Int64] = [:]

    // Group commit, guarded by `group`.
    let group = NSCondition()
    var queue: [CommitBatch] = []
    var leaderActive = false
    var poisoned: StoreError? {
        didSet { isPoisoned.store(poisoned != nil, ordering: .releasing) }
    }
    /// Mirrors `poisoned != nil` so a read checks it with one load instead of taking `group`.
    let isPoisoned = Atomic<Bool>(false)
    /// The log end as of this handle's last successful sync (full durability): when it is the
    /// log end, the next save starts with a sync marker (Formats/wal.md §3). Frames this handle
    /// found at open are not known to be synced.
    var syncedLogEnd = UInt64(LogLayout.firstFrameOffset)
    /// The log file's size as this handle last wrote or truncated it: writes that end inside it
    /// overwrite allocated bytes (Formats/wal.md §5, preallocation). Touched by the group-commit
    /// leader, and by checkpoints, which run with no leader active.
    var logAllocatedEnd: UInt64 = 0

    // Sharing the store with other processes (Formats/wal.md §9), guarded by `tailLock`.
    let tailLock = NSLock()
    /// Whether this handle holds the log's write lock: from a save's validation (or a
    /// checkpoint's start) until no save of this handle is queued or being written.
    var writeLockHeld = false
    /// The sequence number and checksum of the last frame read or written, at `publishedLogEnd`.
    var tailSequence: UInt64
    var tailChain: UInt64
    /// Per entity name, the largest primary key in other processes' saves read from the log.
    var tailHighWater: [String: Int64] = [:]
    /// The root slots' bytes as `tailLocked` last read them, and the newest generation in them;
    /// guarded by `tailLock`. Every save of a shared store reads the slots under the write lock,
    /// and comparing bytes is cheaper than checking two slots' checksums again.
    var rootSlotsSeen: (bytes: [UInt8], generation: UInt64?)?
    /// Counts what was read from other processes (saves, checkpoints): the writer rebuilds what
    /// it caches from the stored rows (the uniqueness index) when this moved.
    var foreignChanges = 0
    /// `foreignChanges` when the writer last caught up; guarded by `commitLock`.
    var foreignChangesSeen = 0
    /// Per entity name, the end of the keys this handle reserved, or of the reservations it read
    /// (Formats/wal.md §9, key reservations); keys below it and at or above `nextKeys` are this
    /// handle's alone. Guarded by `keyLock`.
    var reservedKeys: [String: Int64] = [:]
    /// A wait for the log's write lock that timed out and is still blocked in the kernel; the
    /// next wait takes it over (LockAttempt). Guarded by `commitLock`.
    var pendingLock: LockAttempt?
    /// The store's `NAME-shm` counters (Formats/wal.md §9): commits and new roots, bumped by
    /// every writer; `nil` with exclusive access or when the file layer has no shared memory.
    /// Trusted only through ``trustedCounters``.
    let counters: (any StoreSharedCounters)?
    /// The counters as of the last time this handle read the files; guarded by `tailLock`, and
    /// mirrored in `seenCommits` and `seenRoots` for reads that take no lock.
    var seenCounters: (commits: UInt64, roots: UInt64)?
    let seenCommits = Atomic<UInt64>(0)
    let seenRoots = Atomic<UInt64>(0)

    /// The remote-change observation, if one runs; guarded by `observerLock`.
    var changeObserver: ChangeObserver?
    let observerLock = NSLock()

    /// Opens the store at `path`, creating it when missing (unless read-only).
    ///
    /// - Parameters:
    ///   - model: the frozen model; its entities name the catalog of a new store.
    ///   - metadata: the metadata of a new store (ignored when the store exists).
    /// - Throws: ``StoreError/corrupt(detail:)`` naming the damaged location,
    ///   ``StoreError/io(detail:)`` when a file cannot be read, written or locked.
    public init(path: String, model: NSManagedObjectModel, metadata: StoreMetadata, options: BinaryStoreOptions = BinaryStoreOptions()) throws(StoreError) {
        precondition(options.readOnly || !options.salvagesDamagedLog, "BinaryStoreOptions.salvagesDamagedLog needs readOnly: a salvaged store holds only the saves before the damage and must not be written")
        self.path = path
        self.logPath = path + "-wal"
        self.options = options
        self.fileSystem = options.fileSystem
        // Rows carry the entity's layout object; a frozen model hands out the same one every time.
        try? model.freeze()
        self.entities = model.entitiesByName
        self.historyRecorder = options.recordsHistory ? StoreHistoryRecorder(entities: model.entitiesByName) : nil
        self.modelLayouts = model.entitiesByName.mapValues(\.propertyLayout)
        self.hasUniquenessConstraints = model.entities.contains { !$0.uniquenessConstraints.isEmpty }
        self.externalAttributes = Self.externalAttributes(of: model)
        self.externalLoader = Self.externalLoader(store: path, fileSystem: options.fileSystem)
        self.cache = PageCache(capacity: options.pageCacheBytes)
        self.indexedAttributes = Self.indexedAttributes(of: model)
        let counters: (any StoreSharedCounters)?
        do {
            counters = options.exclusiveAccess ? nil : try options.fileSystem.sharedCounters(at: path + "-shm", writable: !options.readOnly, permissionsOf: path)
        } catch {
            // A writer the others cannot hear would have its saves overwritten by writers that
            // trust the counters (Formats/wal.md §9); a reader without them asks the files.
            guard options.readOnly else {
                throw .io(detail: "\(path): the shared counters file cannot be used, so other processes could not see this one's saves (use NSBinaryStoreExclusiveAccessOption to open it alone): \(error)")
            }
            counters = nil
        }
        self.counters = counters
        // Read before the files: a save after this is seen at the first read.
        seenCounters = counters.map { ($0.load(0), $0.load(1)) }
        if let seen = seenCounters {
            seenCommits.store(seen.commits, ordering: .releasing)
            seenRoots.store(seen.roots, ordering: .releasing)
        }
        let opened = try Self.open(path: path, model: model, metadata: metadata, options: options, unheard: counters == nil)
        dataFile = opened.dataFile
        logFile = opened.logFile
        header = opened.header
        root = opened.root
        activeSlot = opened.activeSlot
        layouts = RecordLayouts(catalog: opened.catalog, models: modelLayouts)
        persistedIndex = opened.persisted
        persistedSecondary = opened.secondary
        indexLoaded = opened.persisted == nil
        if indexLoaded { memoryIndex = opened.index } else { memoryIndex = ObjectIndex(); indexOverlay = opened.index }
        metadataValue = opened.metadata
        logEnd = opened.logEnd
        publishedLogEnd = opened.logEnd
        logSequence = opened.logSequence
        logChain = opened.logChain
        tailSequence = opened.logSequence
        tailChain = opened.logChain
        logTombstones = opened.logTombstones
        nextKeys = opened.nextKeys
        reservedKeys = opened.nextKeys
        savedHighWater = opened.nextKeys.mapValues { $0 - 1 }
        openReport = opened.report
        logAllocatedEnd = (try? opened.logFile?.size()) ?? 0
    }

    // Stored, not computed: every save of a shared store hands it to the lock wait.
    let logPath: String

    /// The attributes each entity indexes: first elements of its own and inherited fetch indexes,
    /// and single-attribute uniqueness constraints, where the attribute's type has an order.
    static func indexedAttributes(of model: NSManagedObjectModel) -> [String: [String: SecondaryIndex.Kind]] {
        var result: [String: [String: SecondaryIndex.Kind]] = [:]
        for entity in model.entities {
            guard let name = entity.name else { continue }
            var names: [String] = []
            var current: NSEntityDescription? = entity
            while let next = current {
                names += next.indexes.compactMap { $0.elements.first?.propertyName }
                names += next.uniquenessConstraints.compactMap { $0.count == 1 ? $0.first as? String : nil }
                current = next.superentity
            }
            for attribute in names {
                if let type = entity.slotAttributesByName[attribute]?.attributeType, let kind = SecondaryIndex.kind(of: type) {
                    result[name, default: [:]][attribute] = kind
                }
            }
        }
        return result
    }

    // MARK: Errors

    func checkUsable() throws(StoreError) {
        group.lock()
        let failure = poisoned
        group.unlock()
        if let failure { throw failure }
        if rw.withReadLock({ isClosed }) { throw .closed }
    }

    static func ioError(_ error: StoreIOError) -> StoreError { .io(detail: error.description) }
    static func corrupt(_ error: BinaryFormatError) -> StoreError { .corrupt(detail: error.description) }

    /// Any error of the file layer or the format decoders as the store reports it.
    static func storeError(_ error: any Error) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as StoreIOError: ioError(error)
        case let error as BinaryFormatError: corrupt(error)
        default: .io(detail: "\(error)")
        }
    }

    /// What a checkpoint or compaction does when a snapshot holds the log in place.
    enum SnapshotPolicy {
        /// Do nothing this time (a checkpoint: the log keeps growing until the snapshot goes).
        case skip
        /// Fail with an error that names the snapshot (a compaction asked for by the user).
        case fail(String)
    }

    /// Runs a checkpoint or compaction: every save of this handle finished, the write lock held
    /// (so other processes' saves wait, and their last ones are read first), then the snapshot
    /// probe (wal.md §9) held for all of `body`. A failure of `body` poisons the handle; failing
    /// to get the write lock or the probe does not. Probes are taken only under the write lock,
    /// so two handles' maintenance never mistake each other's probe for a snapshot.
    func maintaining(whenSnapshotted policy: SnapshotPolicy, _ body: () throws(StoreError) -> Void) throws(StoreError) {
        commitLock.lock()
        defer { commitLock.unlock() }
        drainGroupCommits()
        try beginWrite()
        defer { releaseWriteLockIfIdle() }
        guard let probe = try snapshotProbe() else {
            switch policy {
            case .skip: return
            case .fail(let what): throw .io(detail: "cannot \(what) \(path) now: a query generation (a context's setQueryGenerationFrom) holds a snapshot of it in this or another process; try again once it is let go")
            }
        }
        defer { probe.release() }
        do {
            try body()
        } catch {
            group.lock()
            if poisoned == nil { poisoned = error }
            group.unlock()
            throw error
        }
    }

    // MARK: PersistentStoreEngine

    public func metadata() throws(StoreError) -> StoreMetadata {
        try sharedRead { () throws(StoreError) -> StoreMetadata in metadataValue }
    }

    public func setMetadata(_ metadata: StoreMetadata) throws(StoreError) {
        try checkWritable()
        let body = try Self.encodeMetadata(metadata)
        guard body.count <= LogLayout.maximumEntrySize else {
            throw .io(detail: "the metadata needs \(body.count) bytes, more than the \(LogLayout.maximumEntrySize) bytes a log entry may hold (Formats/wal.md §4); nothing was written")
        }
        commitLock.lock()
        do { try beginWrite() } catch {
            commitLock.unlock()
            throw error
        }
        var frames = frameWriter(capacity: body.count + 64)
        frames.appendEntry(kind: .metadata, sizeHint: body.count) { $0.append(body) }
        frames.finish()
        let batch = appendBatch(frames, publish: PublishSet(metadata: metadata))
        enqueue(batch)
        commitLock.unlock()
        try waitAndEndWrite(batch)
    }

    static func encodeMetadata(_ metadata: StoreMetadata) throws(StoreError) -> [UInt8] {
        do { return try MetadataCodec.encode(metadata) } catch { throw .io(detail: "cannot store metadata: \(error.problem)") }
    }

    public func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] {
        try checkUsable()
        try checkNextKey(of: entityName)
        if sharesWrites { return try sharedPrimaryKeys(entityName: entityName, count: count) }
        keyLock.lock()
        defer { keyLock.unlock() }
        let first = nextKeys[entityName, default: 1]
        precondition(count >= 0, "newPrimaryKeys(entityName:count:) was asked for \(count) keys")
        try checkKeyRange(entityName, first: first, count: count)
        nextKeys[entityName] = first + Int64(count)
        return (0..<Int64(count)).map { first + $0 }
    }

    /// Keys `first..<first + count` stay within 1...2^62 (binary-store.md §5), or the entity has
    /// run out: compaction does not reuse keys.
    func checkKeyRange(_ entityName: String, first: Int64, count: Int) throws(StoreError) {
        guard Int64(count) <= BinaryStoreLayout.largestPrimaryKey + 1 - first else {
            throw .io(detail: "\(path): \(entityName) has used every primary key up to 2^62 (binary-store.md §5); compacting does not reuse keys")
        }
    }

    func checkWritable() throws(StoreError) {
        try checkUsable()
        guard !options.readOnly else { throw .io(detail: "the store at \(path) was opened read-only") }
    }

    /// Checkpoints, truncates the log and releases the files. Later calls throw ``StoreError/closed``.
    ///
    /// - Throws: the error of the checkpoint, or the error that poisoned the handle (a failed
    ///   write or sync, perhaps of a background checkpoint no save has reported yet): the files are
    ///   released all the same, but what the last saves wrote may not be durable until the store
    ///   is reopened.
    public func close() throws(StoreError) {
        if rw.withReadLock({ isClosed }) { throw .closed }
        stopObservingChanges()
        // This handle's snapshots end with it: they must not hold back its closing checkpoint,
        // nor read while it restarts the log.
        rw.withWriteLock { snapshotsEnded = true }
        releasePin()
        var failure = poisonedError
        if !options.readOnly, failure == nil {
            do {
                if sharesWrites { try checkpointOnSharedClose() } else { try checkpoint(truncatingLog: true) }
            } catch {
                failure = error
            }
        }
        rw.withWriteLock { isClosed = true }
        releasePin()
        dataFile.close()
        logFile?.close()
        if let failure { throw failure }
    }

    var poisonedError: StoreError? {
        guard isPoisoned.load(ordering: .acquiring) else { return nil }
        group.lock()
        defer { group.unlock() }
        return poisoned
    }

    /// Live objects per entity name (for `info` and tests).
    public func objectCounts() throws(StoreError) -> [String: Int] {
        try sharedRead { () throws(StoreError) -> [String: Int] in
            var counts: [String: Int] = [:]
            let index = try loadedIndex()
            for (id, entity) in catalog.entities.enumerated() where index.liveCount(entityID: id) > 0 {
                counts[entity.name] = index.liveCount(entityID: id)
            }
            return counts
        }
    }
}

/// Entity IDs by object-ID entity for a run of rows, remembering the last one (rows of a save
/// usually share an entity).
struct EntityIDCache {
    let catalog: Catalog
    private var last: EntityNumber?
    private var lastID = 0

    init(catalog: Catalog) { self.catalog = catalog }

    mutating func id(of entity: EntityNumber) -> Int {
        if entity == last { return lastID }
        guard let id = catalog.entityID(of: entity) else { preconditionFailure("entity \(entity) is not in the store's catalog") }
        last = entity
        lastID = id
        return id
    }
}

/// An object by catalog entity ID and primary key.
struct ObjectKey: Hashable, Sendable {
    var entityID: Int
    var key: Int64
}

/// An object changed by a queued save: its new version and location (`nil` when deleted).
struct PendingObject: Sendable {
    var location: UInt64?
    var version: Int64
    var batch: Int
}
