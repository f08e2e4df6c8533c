import Foundation

/// Persistent history held in memory: what the in-memory and XML stores keep for the life of
/// the store (their files have no place for it, so it lasts as long as the process).
///
/// A value: a store applies a save to a copy of its state and keeps the copy only if the save
/// succeeded, history included. Complexity: appending O(1); a query O(log n + answer).
package struct StoreHistoryLog: Sendable {
    private(set) var transactions: [StoreHistoryTransaction] = []
    private(set) var lastNumber: Int64 = 0

    package init() {}

    /// The oldest number kept, ``lastNumber`` + 1 when none is.
    var firstRetained: Int64 { transactions.first?.number ?? lastNumber + 1 }

    /// Records a transaction with the next number.
    package mutating func append(_ context: StoreHistoryContext?, changes: [StoreHistoryChange]) {
        lastNumber += 1
        let context = context ?? StoreHistoryContext()
        transactions.append(StoreHistoryTransaction(
            number: lastNumber, timestamp: Date(), author: context.author, contextName: context.contextName,
            processID: context.processID, bundleID: context.bundleID, changes: changes))
    }

    package func page(_ query: StoreHistoryQuery) -> StoreHistoryPage {
        // Numbers are consecutive from the first kept, so the start is found by subtraction.
        let after = max(query.afterNumber, 0)
        let skip = after < firstRetained ? 0 : min(Int(clamping: after - firstRetained + 1), transactions.count)
        var selected: [StoreHistoryTransaction] = []
        for transaction in transactions[skip...] {
            if let limit = query.limit, selected.count >= limit { break }
            if let after = query.afterDate, transaction.timestamp <= after { continue }
            var copy = transaction
            if !query.includesChanges { copy.changes = [] }
            selected.append(copy)
        }
        return StoreHistoryPage(transactions: selected, firstRetained: firstRetained, lastNumber: lastNumber)
    }

    package mutating func delete(_ cutoff: StoreHistoryCutoff) -> Int {
        let count = StoreHistoryLog.prefixToDelete(transactions.lazy.map { ($0.number, $0.timestamp) }, cutoff)
        transactions.removeFirst(count)
        return count
    }

    /// How many of the oldest transactions (given as number and timestamp, oldest first) a
    /// cutoff deletes: shared by every store, so each deletes the same run.
    package static func prefixToDelete<S: Sequence>(_ transactions: S, _ cutoff: StoreHistoryCutoff) -> Int where S.Element == (Int64, Date) {
        var count = 0
        for (number, timestamp) in transactions {
            switch cutoff {
            case .throughNumber(let last): guard number <= last else { return count }
            case .before(let date): guard timestamp < date else { return count }
            }
            count += 1
        }
        return count
    }
}
