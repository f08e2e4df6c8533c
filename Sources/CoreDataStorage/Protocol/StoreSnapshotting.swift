/// A store that can hand out a snapshot of itself: the engine behind query generations
/// (`NSQueryGenerationToken`, `setQueryGenerationFrom(_:)`).
///
/// Threading: as ``PersistentStoreEngine``; a snapshot is safe to read from any thread.
public protocol StoreSnapshotting: PersistentStoreEngine {
    /// A read-only view of the store as it is now. Every read of it answers from that state while
    /// this and other handles (other processes too, for a store shared between them) go on
    /// saving. Its writes throw.
    ///
    /// A snapshot holds resources until it is released (the binary store puts off checkpoints
    /// and compaction while one is alive, as SQLite's readers hold back its checkpoints).
    func snapshot() throws(StoreError) -> any StoreGenerationView
}

/// A read-only view of a store at one generation.
public protocol StoreGenerationView: PersistentStoreEngine {
    /// Names the generation: equal for two snapshots of the same committed state of the store.
    var generation: String { get }
}

extension StoreGenerationView {
    private var readOnly: StoreError { .io(detail: "a query generation's snapshot is read-only") }

    public func setMetadata(_ metadata: StoreMetadata) throws(StoreError) { throw readOnly }
    public func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] { throw readOnly }
    public func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] { throw readOnly }
    public func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] { throw readOnly }
    public func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] { throw readOnly }
    /// Snapshots are released by dropping them; closing one does nothing.
    public func close() throws(StoreError) {}
}
