import CoreDataFileSystem
import CoreDataXMLFormat

/// How an ``XMLStore`` opens.
public struct XMLStoreOptions: Sendable {
    /// The file layer every read, write, rename and sync goes through; tests pass a
    /// fault-injecting one.
    public var fileSystem: any StoreFileSystem = POSIXFileSystem()
    /// Open for reading only: saves and metadata changes throw, nothing is written (not even a
    /// leftover `NAME.new` is removed), and a missing file is an error instead of a new store.
    public var readOnly = false
    /// Record persistent history (`NSPersistentHistoryTrackingKey`), kept in memory while the
    /// store is open: the XML file has no place for it.
    public var recordsHistory = false
    /// How long a save waits for another process's save to finish before failing with a
    /// lock-conflict error, in seconds (`NSPersistentStoreTimeoutOption`; `Formats/xml-store.md` §11).
    public var lockTimeout = XMLStoreLayout.defaultLockTimeout

    public init() {}
}
