import CoreDataModel
import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// Persistent history (Formats/binary-store.md §14): each transaction is a record of the reserved
/// entity ``HistoryRecordCodec/entityName`` keyed by its number, written in the same log frames as
/// the save it describes. So history is as durable as the save, survives checkpoints and
/// compaction like any object, and reaches other processes as they tail the log.
extension BinaryStore: StoreHistoryRecording {
    public var recordsHistory: Bool { historyRecorder != nil }

    /// Whether a handle with history tracking ever wrote a transaction (the reserved entity is in
    /// the catalog, which is append-only: deleting every transaction does not change it).
    public var hasRecordedHistory: Bool { rw.withReadLock { catalog.entityID(of: HistoryRecordCodec.entityName) != nil } }

    /// The transaction that records `changes`, numbered after the latest one any process wrote;
    /// `nil` when the store records no history. Caller holds `commitLock` (and, when sharing, the
    /// write lock, taken after tailing), so the number is the store's next.
    func historyTransaction(for changes: StoreChangeSet) throws(StoreError) -> StoreHistoryTransaction? {
        guard let historyRecorder, !changes.isEmpty else { return nil }
        let recorded = try historyRecorder.changes(for: changes) { id throws(StoreError) in try currentRow(id) }
        let name = HistoryRecordCodec.entityName
        let issued = keyLock.withLock { nextKeys[name, default: 1] - 1 }
        let last = max(savedHighWater[name, default: 0], issued)
        guard last < BinaryStoreLayout.largestPrimaryKey else {
            throw .io(detail: "persistent history is full: transaction numbers run to 2^62 (binary-store.md §14)")
        }
        let context = changes.history ?? StoreHistoryContext()
        return StoreHistoryTransaction(
            number: last + 1, timestamp: Date(), author: context.author, contextName: context.contextName,
            processID: context.processID, bundleID: context.bundleID, changes: recorded)
    }

    /// The record row of a transaction, refused when its change list would not fit in one log
    /// entry (wal.md §4): the save fails with an error instead of trapping in the log writer.
    func historyRow(for transaction: StoreHistoryTransaction) throws(StoreError) -> StoreRow {
        let row = HistoryRecordCodec.row(for: transaction)
        // The other values of the row take a few hundred bytes at most.
        let room = LogLayout.maximumEntrySize - 64 * 1024
        if case .data(let list) = row["changes"], list.count > room {
            throw .io(detail: "persistent history cannot record a save of \(transaction.changes.count) changes: its change list takes \(list.count) bytes, more than one log entry holds (\(room), binary-store.md §14); save in smaller batches")
        }
        return row
    }

    /// Complexity: an index search, then one record read per transaction returned (more with a
    /// date, which skips the transactions before it one by one).
    public func history(_ query: StoreHistoryQuery) throws(StoreError) -> StoreHistoryPage {
        try sharedRead { () throws(StoreError) -> StoreHistoryPage in
            let table = try historyTable()
            let last = lastHistoryNumber(table)
            guard let table else { return StoreHistoryPage(transactions: [], firstRetained: last + 1, lastNumber: last) }
            let firstLive = table.locations.firstIndex { $0 != 0 }
            let first = firstLive.map { table.keys[$0] } ?? last + 1
            var transactions: [StoreHistoryTransaction] = []
            var reader = HistoryReader(catalog: catalog, includesChanges: query.includesChanges)
            var position = Self.firstPosition(in: table.keys, after: query.afterNumber)
            while position < table.keys.count {
                if let limit = query.limit, transactions.count >= limit { break }
                let location = table.locations[position]
                position += 1
                guard location != 0 else { continue }
                let transaction = try reader.transaction(at: location, in: self)
                if let after = query.afterDate, transaction.timestamp <= after { continue }
                transactions.append(transaction)
            }
            return StoreHistoryPage(transactions: transactions, firstRetained: first, lastNumber: last)
        }
    }

    /// Deletes the oldest transactions with tombstones, as a save under the write lock (so other
    /// processes see the deletion at their next read); the deletion itself is not recorded.
    public func deleteHistory(_ cutoff: StoreHistoryCutoff) throws(StoreError) -> Int {
        try checkWritable()
        var count = 0
        _ = try write(draining: true, recordingHistory: false) { () throws(StoreError) -> StoreChangeSet? in
            let doomed = try sharedRead { () throws(StoreError) -> [StoreObjectID] in try historyToDelete(cutoff) }
            count = doomed.count
            // A transaction record is written once, so its version is always 1.
            return doomed.isEmpty ? nil : StoreChangeSet(deleted: doomed.map { ($0, 1) })
        }
        return count
    }

    /// The oldest live transactions up to `cutoff`, the same run ``StoreHistoryLog`` deletes.
    /// Caller is inside ``sharedRead(_:)``.
    private func historyToDelete(_ cutoff: StoreHistoryCutoff) throws(StoreError) -> [StoreObjectID] {
        guard let table = try historyTable() else { return [] }
        var reader = HistoryReader(catalog: catalog, includesChanges: false)
        var doomed: [StoreObjectID] = []
        let entity = EntityNumber(HistoryRecordCodec.entityName)
        for position in table.keys.indices where table.locations[position] != 0 {
            let key = table.keys[position]
            switch cutoff {
            case .throughNumber(let last):
                guard key <= last else { return doomed }
            case .before(let date):
                guard try reader.transaction(at: table.locations[position], in: self).timestamp < date else { return doomed }
            }
            doomed.append(StoreObjectID(entity: entity, primaryKey: key))
        }
        return doomed
    }

    /// The index table of the history entity, `nil` before the first transaction. Caller is
    /// inside ``sharedRead(_:)``.
    private func historyTable() throws(StoreError) -> ObjectIndex.Table? {
        guard let entityID = catalog.entityID(of: HistoryRecordCodec.entityName) else { return nil }
        let index = try loadedIndex()
        return entityID < index.tables.count ? index.tables[entityID] : nil
    }

    /// The latest number published, deleted transactions included: the index holds the keys
    /// since the last checkpoint (deleted ones marked), the catalog those before it (§6). A
    /// number a queued save took is not counted until that save is published, so no token names
    /// a transaction nobody can fetch yet.
    private func lastHistoryNumber(_ table: ObjectIndex.Table?) -> Int64 {
        let checkpointed = catalog.entityID(of: HistoryRecordCodec.entityName).map { catalog.entities[$0].nextPrimaryKey - 1 } ?? 0
        return max(table?.keys.last ?? 0, checkpointed)
    }


    /// The position of the first key above `number` in increasing `keys`.
    private static func firstPosition(in keys: [Int64], after number: Int64) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] <= number { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// Reads transaction records in index order: each record's values go by slot straight into the
/// transaction (no row built, no property name hashed), and records of one page share one read
/// of it. Caller is inside ``BinaryStore/sharedRead(_:)``.
struct HistoryReader {
    private let catalog: Catalog
    private let includesChanges: Bool
    private let slots: [Int]
    /// The catalog column of the change list, decoded in place from the record's bytes.
    private let changesColumn: Int?
    private var values = [StoreValue](repeating: .null, count: HistoryRecordCodec.layout.count)
    private var run = BinaryStore.PageRun()

    init(catalog: Catalog, includesChanges: Bool) {
        self.catalog = catalog
        self.includesChanges = includesChanges
        let properties = catalog.entityID(of: HistoryRecordCodec.entityName).map { catalog.entities[$0].properties } ?? []
        // The scalar fields go through the in-place decoder; the change list is read apart.
        self.slots = HistoryRecordCodec.slots(for: properties, includesChanges: false)
        self.changesColumn = properties.firstIndex(of: "changes")
    }

    mutating func transaction(at location: UInt64, in store: BinaryStore) throws(StoreError) -> StoreHistoryTransaction {
        let (bytes, range) = try store.recordBytes(at: location, run: &run)
        do throws(BinaryFormatError) {
            let head = try RecordCodec.decodeFields(bytes, from: range.lowerBound, to: range.upperBound, catalog: catalog, slots: slots, into: &values)
            guard head.kind == .row, catalog.entities[head.entityID].name == HistoryRecordCodec.entityName else {
                throw BinaryFormatError("", "the index names a history transaction here, but the record is \(head.kind == .row ? "of \(catalog.entities[head.entityID].name)" : "a tombstone")")
            }
            var changes: [StoreHistoryChange] = []
            if includesChanges {
                guard let column = changesColumn,
                      let list = try HistoryRecordCodec.changeListRange(in: bytes, from: range.lowerBound, to: range.upperBound, column: column)
                else { throw BinaryFormatError("", "history transaction \(head.primaryKey) has no change list") }
                changes = try HistoryRecordCodec.decodeChanges(bytes, in: list)
            }
            return try HistoryRecordCodec.transaction(number: head.primaryKey, values: values, changes: changes)
        } catch {
            throw .corrupt(detail: error.within(BinaryStore.describe(location)).description)
        }
    }
}
