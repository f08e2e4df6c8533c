import CoreDataModel
import CoreDataStorage
import Foundation

/// Option key: record persistent history for the store (a `Bool` or `NSNumber`; Apple's key).
///
/// The binary store keeps history in its files, shared by every process, through checkpoints
/// and compaction until deleted (`Formats/binary-store.md` §14). The in-memory and XML stores
/// keep it in memory for as long as the store is open: the XML file has no place for it, and
/// another process cannot see it.
public let NSPersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"

/// Error code: a history fetch asked for transactions after a token whose following
/// transactions were deleted (Apple's `NSPersistentHistoryTokenExpiredError`).
public let NSPersistentHistoryTokenExpiredError = 134301

extension NSPersistentStoreCoordinator {
    /// A token after the latest transaction of each of `stores` (`NSPersistentStore`s; all the
    /// coordinator's stores when `nil`); `nil` when none of them records history.
    ///
    /// Save it, and fetch with ``NSPersistentHistoryChangeRequest/fetchHistory(after:)-(NSPersistentHistoryToken?)``
    /// later to get only what happened since.
    public func currentPersistentHistoryToken(fromStores stores: [Any]?) -> NSPersistentHistoryToken? {
        var numbers: [String: Int64] = [:]
        for (store, engine) in historyStores(stores?.compactMap { $0 as? NSPersistentStore }) {
            guard let page = try? engine.history(StoreHistoryQuery(afterNumber: .max, limit: 0, includesChanges: false)) else { continue }
            numbers[store.identifier] = page.lastNumber
        }
        return numbers.isEmpty ? nil : NSPersistentHistoryToken(numbers: numbers)
    }

    /// The stores among `stores` (all when `nil`) that record history, with their engines.
    func historyStores(_ stores: [NSPersistentStore]?) -> [(NSPersistentStore, any StoreHistoryRecording)] {
        (stores ?? persistentStores).compactMap { store in
            guard let engine = store.engine as? any StoreHistoryRecording, engine.recordsHistory else { return nil }
            return (store, engine)
        }
    }

    /// Whether the options ask for history tracking.
    static func tracksHistory(_ options: [AnyHashable: Any]?) -> Bool {
        (options?[NSPersistentHistoryTrackingKey] as? Bool) ?? (options?[NSPersistentHistoryTrackingKey] as? NSNumber)?.boolValue ?? false
    }
}

extension NSManagedObjectContext {
    /// Who this context's saves are, for persistent history.
    func historyContext(updatedProperties: [StoreObjectID: [String]] = [:]) -> StoreHistoryContext {
        StoreHistoryContext(author: transactionAuthor, contextName: name, updatedProperties: updatedProperties)
    }

    /// Runs a history fetch or delete over the stores that record history.
    func executeHistory(_ request: NSPersistentHistoryChangeRequest, coordinator: NSPersistentStoreCoordinator) throws -> NSPersistentHistoryResult {
        let stores = coordinator.historyStores(request.affectedStores)
        switch request.operation {
        case .deleteBeforeDate, .deleteBeforeToken, .deleteBeforeTransaction:
            var deleted = 0
            for (store, engine) in stores {
                let cutoff: StoreHistoryCutoff
                switch request.operation {
                case .deleteBeforeDate(let date): cutoff = .before(date)
                case .deleteBeforeToken(let token?):
                    guard let number = token.numbers[store.identifier] else { continue }
                    cutoff = .throughNumber(number)
                case .deleteBeforeTransaction(let transaction?):
                    guard transaction.storeID == store.identifier else { continue }
                    cutoff = .throughNumber(transaction.transactionNumber - 1)
                default: cutoff = .throughNumber(.max)
                }
                deleted += try mapStoreError { () throws(StoreError) -> Int in try engine.deleteHistory(cutoff) }
            }
            switch request.resultType {
            case .count: return NSPersistentHistoryResult(result: deleted, resultType: .count)
            default: return NSPersistentHistoryResult(result: true, resultType: request.resultType)
            }
        case .fetchAfterDate, .fetchAfterToken:
            let transactions = try fetchHistory(request, stores: stores, coordinator: coordinator)
            switch request.resultType {
            case .statusOnly: return NSPersistentHistoryResult(result: true, resultType: .statusOnly)
            case .count: return NSPersistentHistoryResult(result: transactions.reduce(0) { $0 + ($1.changes?.count ?? 0) }, resultType: .count)
            case .objectIDs:
                return NSPersistentHistoryResult(result: transactions.flatMap { ($0.changes ?? []).map(\.changedObjectID) }, resultType: .objectIDs)
            case .changesOnly:
                // The changes are all the caller keeps: each holds its transaction (whose own
                // list is let go, so the two do not keep each other alive).
                let changes = transactions.flatMap { transaction in
                    let changes = transaction.changes ?? []
                    transaction.changes = nil
                    for change in changes { change.retainTransaction() }
                    return changes
                }
                return NSPersistentHistoryResult(result: changes, resultType: .changesOnly)
            case .transactionsOnly:
                for transaction in transactions { transaction.changes = nil }
                return NSPersistentHistoryResult(result: transactions, resultType: .transactionsOnly)
            case .transactionsAndChanges: return NSPersistentHistoryResult(result: transactions, resultType: .transactionsAndChanges)
            }
        }
    }

    private func fetchHistory(
        _ request: NSPersistentHistoryChangeRequest, stores: [(NSPersistentStore, any StoreHistoryRecording)], coordinator: NSPersistentStoreCoordinator
    ) throws -> [NSPersistentHistoryTransaction] {
        let filter = request.fetchRequest
        let filtersChanges = filter?.entityName == HistoryEntities.changeName || filter?.entity === HistoryEntities.change
        let needsChanges = request.resultType != .transactionsOnly || filtersChanges
        let model = coordinator.managedObjectModel
        var result: [NSPersistentHistoryTransaction] = []
        for (store, engine) in stores {
            var query = StoreHistoryQuery(includesChanges: needsChanges)
            // Only a token that names the store bookmarks it; for the others it asks from the start.
            var bookmarked = false
            switch request.operation {
            case .fetchAfterDate(let date): query.afterDate = date
            case .fetchAfterToken(let given):
                bookmarked = given?.numbers[store.identifier] != nil
                query.afterNumber = given?.number(for: store.identifier) ?? 0
            default: break
            }
            let page = try mapStoreError { () throws(StoreError) -> StoreHistoryPage in try engine.history(query) }
            if bookmarked, query.afterNumber < page.firstRetained - 1 {
                throw coreDataError(
                    NSPersistentHistoryTokenExpiredError,
                    "the history token is at transaction \(query.afterNumber) of store \(store.identifier), but the store deleted its history up to transaction \(page.firstRetained - 1); fetch from a current token",
                    [NSAffectedStoresErrorKey: [store]])
            }
            if bookmarked, query.afterNumber > page.lastNumber {
                // A token past the last transaction: the store's history started over (a store
                // replaced, or migrated by a path that does not carry history). Answering with
                // nothing would hide every transaction until the numbers caught up.
                throw coreDataError(
                    NSPersistentHistoryTokenExpiredError,
                    "the history token is at transaction \(query.afterNumber) of store \(store.identifier), which has recorded only \(page.lastNumber): its history started over; fetch from a current token",
                    [NSAffectedStoresErrorKey: [store]])
            }
            for stored in page.transactions {
                let transaction = NSPersistentHistoryTransaction(stored, storeID: store.identifier)
                if needsChanges { transaction.changes = Self.changes(of: stored, in: transaction, store: store, model: model) }
                result.append(transaction)
            }
        }
        if stores.count > 1 {
            result.sort { ($0.timestamp, $0.storeID, $0.transactionNumber) < ($1.timestamp, $1.storeID, $1.transactionNumber) }
        }
        guard let filter else { return result }
        if filtersChanges {
            if let predicate = filter.predicate {
                for transaction in result { transaction.changes = transaction.changes?.filter { predicate.evaluate(with: $0) } }
                result.removeAll { $0.changes?.isEmpty ?? true }
            }
        } else if let predicate = filter.predicate {
            result = result.filter { predicate.evaluate(with: $0) }
        }
        if filter.fetchOffset > 0 { result = Array(result.dropFirst(filter.fetchOffset)) }
        if filter.fetchLimit > 0 { result = Array(result.prefix(filter.fetchLimit)) }
        return result
    }

    /// The public changes of a stored transaction; changes of entities the model no longer has
    /// are left out (their objects cannot be named).
    private static func changes(
        of stored: StoreHistoryTransaction, in transaction: NSPersistentHistoryTransaction, store: NSPersistentStore, model: NSManagedObjectModel
    ) -> [NSPersistentHistoryChange] {
        var changes: [NSPersistentHistoryChange] = []
        changes.reserveCapacity(stored.changes.count)
        // Apple's change IDs are unique in the store; these are too while a transaction holds
        // fewer than 2^26 changes (the multiplication is checked all the same: numbers come
        // from a file).
        let (base, overflow) = stored.number.multipliedReportingOverflow(by: 1 << 26)
        for (position, change) in stored.changes.enumerated() {
            guard let entity = model.entitiesByName[change.objectID.entityName] else { continue }
            let objectID = NSManagedObjectID(entity: entity, store: store, storeID: change.objectID)
            let (changeID, late) = overflow ? (stored.number, false) : base.addingReportingOverflow(Int64(position))
            var tombstone: [AnyHashable: Any]?
            var updated: Set<NSPropertyDescription>?
            let type: NSPersistentHistoryChangeType
            switch change.kind {
            case .insert: type = .insert
            case .update:
                type = .update
                updated = Set(change.updatedProperties.compactMap { entity.propertiesByName[$0] })
            case .delete:
                type = .delete
                var values: [AnyHashable: Any] = [:]
                for (name, value) in change.tombstone {
                    guard let attribute = entity.attributesByName[name], let converted = value.attributeValue(as: attribute.attributeType) else { continue }
                    values[name] = converted
                }
                tombstone = values
            }
            changes.append(NSPersistentHistoryChange(
                changeID: late ? stored.number : changeID, objectID: objectID, type: type, tombstone: tombstone,
                updatedProperties: updated, transaction: transaction))
        }
        return changes
    }
}
