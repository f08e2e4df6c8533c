import Foundation

/// A store that keeps persistent history (`NSPersistentHistoryTrackingKey`): every save and batch
/// request it applies is recorded as a ``StoreHistoryTransaction`` together with the change
/// itself, all or nothing.
///
/// Threading: as ``PersistentStoreEngine``, every method is safe to call concurrently.
public protocol StoreHistoryRecording: PersistentStoreEngine {
    /// Whether the store was opened with history tracking; a store that does not record answers
    /// queries with no transactions.
    var recordsHistory: Bool { get }

    /// Whether the store holds history that handles with tracking recorded, so that a handle
    /// without it must not save (the coordinator then opens the store read-only, as Apple does).
    /// Stores whose history lasts only as long as the handle answer `false`.
    var hasRecordedHistory: Bool { get }

    /// The transactions a query selects, in number order, with the store's history bounds read
    /// in the same snapshot.
    func history(_ query: StoreHistoryQuery) throws(StoreError) -> StoreHistoryPage

    /// Deletes the oldest transactions up to `cutoff`; returns how many it deleted. Transactions
    /// are always deleted from the oldest on, so the history kept is one unbroken run.
    func deleteHistory(_ cutoff: StoreHistoryCutoff) throws(StoreError) -> Int
}

extension StoreHistoryRecording {
    public var hasRecordedHistory: Bool { false }
}

/// Which transactions a history query returns.
public struct StoreHistoryQuery: Sendable, Equatable {
    /// Only transactions with a larger number (0: from the first).
    public var afterNumber: Int64
    /// Only transactions recorded later than this.
    public var afterDate: Date?
    /// At most this many; `nil` for all.
    public var limit: Int?
    /// Whether the transactions carry their changes.
    public var includesChanges: Bool

    public init(afterNumber: Int64 = 0, afterDate: Date? = nil, limit: Int? = nil, includesChanges: Bool = true) {
        self.afterNumber = afterNumber
        self.afterDate = afterDate
        self.limit = limit
        self.includesChanges = includesChanges
    }
}

/// A history query's answer.
public struct StoreHistoryPage: Sendable, Equatable {
    public var transactions: [StoreHistoryTransaction]
    /// The number of the oldest transaction the store still holds; ``lastNumber`` + 1 when it
    /// holds none. A token older than this minus one has lost transactions: it has expired.
    public var firstRetained: Int64
    /// The number of the latest transaction ever recorded (0 before the first).
    public var lastNumber: Int64

    public init(transactions: [StoreHistoryTransaction], firstRetained: Int64, lastNumber: Int64) {
        self.transactions = transactions
        self.firstRetained = firstRetained
        self.lastNumber = lastNumber
    }
}

/// Up to where ``StoreHistoryRecording/deleteHistory(_:)`` deletes.
public enum StoreHistoryCutoff: Sendable, Equatable {
    /// Every transaction whose number is at most this.
    case throughNumber(Int64)
    /// The oldest transactions recorded before this date, up to the first recorded at or after
    /// it (so a clock set back never leaves a gap in the history kept).
    case before(Date)
}
