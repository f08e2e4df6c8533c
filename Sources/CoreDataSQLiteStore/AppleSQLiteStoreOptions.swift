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
    /// Translate fetch predicates to SQL to pick candidate rows (`Formats/apple-sqlite-store.md`
    /// §10); `false` evaluates every predicate over the loaded rows (the differential tests
    /// compare the two).
    public var translatesFetchesToSQL = true

    public init() {}
}
