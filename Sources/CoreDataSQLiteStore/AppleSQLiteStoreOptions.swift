/// How an ``AppleSQLiteStore`` opens.
public struct AppleSQLiteStoreOptions: Sendable {
    /// Open for reading only: saves and metadata changes throw, and a missing file is an error
    /// instead of a new store.
    public var readOnly = false
    /// Create the store when the file is missing (`false`: a missing file is an error).
    public var createsStore = true
    /// How long a statement waits for another connection's lock before failing, in seconds
    /// (`NSPersistentStoreTimeoutOption`; `Formats/apple-sqlite-store.md` §1, §8).
    public var lockTimeout = AppleSQLiteStore.defaultLockTimeout

    public init() {}
}
