import CoreDataBinaryFormat

/// How a binary store is opened.
public struct BinaryStoreOptions: Sendable {
    /// When a save is durable (Formats/wal.md §5).
    public enum Durability: String, Sendable {
        /// Every save is synced before `save()` returns (SQLite's `synchronous=FULL`).
        case full
        /// Saves are written but synced only at checkpoint and close: never corrupt, but power
        /// loss may lose the last saves (SQLite's `synchronous=NORMAL`).
        case normal
    }

    public var durability: Durability = .full
    /// The most bytes of decoded pages kept in memory.
    public var pageCacheBytes = 64 << 20
    /// A background checkpoint starts when the log grows past this many bytes.
    public var checkpointThreshold = LogLayout.defaultCheckpointThreshold
    /// Open for reading only: never writes, takes a shared lock.
    public var readOnly = false
    /// With ``readOnly``: open despite a synced log frame damaged in place instead of failing
    /// (Formats/wal.md §7 step 5). The store holds the saves before the damaged frame only;
    /// ``BinaryStore/OpenReport/logDamage`` names the frame. For getting data out of a damaged
    /// store; the saves after the damage stay in the log, untouched, for other tools.
    public var salvagesDamagedLog = false
    /// Hold the store alone for as long as it is open (one writer, no other process; readers
    /// only while no writer has it), as every binary store did before format sharing
    /// (Formats/wal.md §9). Without it, any number of processes open the store read-write and a
    /// save takes the write lock only for its commit.
    public var exclusiveAccess = false
    /// With ``exclusiveAccess``: wait for another process's lock instead of failing at once.
    public var waitForLock = false
    /// Without ``exclusiveAccess``: how long a save, checkpoint or open waits for the write lock
    /// that another process holds before it fails with a lock-conflict error.
    public var lockTimeout = LogLayout.defaultLockTimeout
    /// Record every save and batch request as a persistent-history transaction
    /// (`NSPersistentHistoryTrackingKey`; Formats/binary-store.md §14).
    public var recordsHistory = false
    /// Checkpoint in the background when the log passes the threshold.
    public var backgroundCheckpoints = true
    /// The file layer; tests replace it to inject crashes and I/O errors. A layer without
    /// shared memory (``StoreFileSystem/sharedCounters(at:writable:permissionsOf:)`` returns
    /// `nil`) still shares the store safely: a writable handle marks `NAME-shm`, and from then on
    /// every handle on the store reads the files before each read and write instead of trusting
    /// the counters, a few system calls more each (Formats/wal.md §9).
    public var fileSystem: any StoreFileSystem = POSIXFileSystem()

    public init() {}
}
