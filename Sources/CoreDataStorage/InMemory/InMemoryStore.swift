import CoreDataModel
import Foundation

/// The in-memory store (`NSInMemoryStoreType`): rows live in a ``RowTable`` and vanish with the
/// store. Fetches evaluate predicates with the reference evaluator over one snapshot.
///
/// Threading: every method takes the store's lock for as long as it reads or swaps the state;
/// predicates and sorts run outside it on a copy-on-write snapshot, so a long fetch never blocks
/// a save. Complexity: a fetch is O(rows of the fetched entities); a save O(changed rows).
public final class InMemoryStore: PersistentStoreEngine, StoreHistoryRecording, StoreSnapshotting, @unchecked Sendable {
    private struct State {
        var table: RowTable
        var metadata: StoreMetadata
        var isClosed = false
    }

    private let lock = NSLock()
    private var state: State

    /// Whether every change is recorded as persistent history (kept while the store is open).
    public let recordsHistory: Bool

    /// Creates an empty store for the entities of `model` (which must be frozen).
    ///
    /// - Parameter recordsHistory: record persistent history (`NSPersistentHistoryTrackingKey`).
    public init(model: NSManagedObjectModel, metadata: StoreMetadata, recordsHistory: Bool = false) {
        self.recordsHistory = recordsHistory
        state = State(table: RowTable(entities: model.entitiesByName, keyScope: .perEntity, recordsHistory: recordsHistory), metadata: metadata)
    }

    private func withState<T>(_ body: (inout State) throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !state.isClosed else { throw .closed }
        return try body(&state)
    }

    public func metadata() throws(StoreError) -> StoreMetadata {
        try withState { $0.metadata }
    }

    public func setMetadata(_ metadata: StoreMetadata) throws(StoreError) {
        try withState { $0.metadata = metadata }
    }

    public func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? {
        try withState { $0.table.rows[objectID] }
    }

    /// The rows of `objectIDs` under one lock.
    public func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        try withState { state in objectIDs.compactMap { state.table.rows[$0] } }
    }

    public func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] {
        try withState { $0.table.reserveKeys(entityName: entityName, count: count) }
    }

    public func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        // The predicate runs outside the lock, on a copy-on-write snapshot of the table.
        let snapshot = try withState { $0.table }
        let matches = snapshot.matching(request)
        switch request.resultType {
        case .count: return .count(matches.count)
        case .objectIDs: return .objectIDs(matches.map(\.objectID))
        case .rows: return .rows(matches)
        }
    }

    public func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        try withState { state throws(StoreError) in try state.table.apply(changes) }
    }

    public func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] {
        try withState { state throws(StoreError) in try state.table.batchDelete(request) }
    }

    public func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] {
        try withState { state throws(StoreError) in try state.table.batchUpdate(request, values: values) }
    }

    /// The table as it is: a copy-on-write reference, O(1).
    public func snapshot() throws(StoreError) -> any StoreGenerationView {
        try withState { state in
            RowTableSnapshot(table: state.table, metadata: state.metadata, generation: "\(ObjectIdentifier(self).hashValue).\(state.table.generation)")
        }
    }

    public func history(_ query: StoreHistoryQuery) throws(StoreError) -> StoreHistoryPage {
        try withState { $0.table.history?.page(query) } ?? StoreHistoryPage(transactions: [], firstRetained: 1, lastNumber: 0)
    }

    public func deleteHistory(_ cutoff: StoreHistoryCutoff) throws(StoreError) -> Int {
        try withState { $0.table.deleteHistory(cutoff) }
    }

    public func close() throws(StoreError) {
        try withState { $0.isClosed = true }
    }
}
