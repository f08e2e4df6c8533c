import Foundation

/// What an ``NSPersistentHistoryChangeRequest`` returns (Apple's `NSPersistentHistoryResultType`,
/// with its raw values).
public enum NSPersistentHistoryResultType: Int, Sendable {
    /// `true` when the request ran.
    case statusOnly = 0
    /// The changed objects' IDs, in history order (an object changed twice appears twice).
    case objectIDs = 1
    /// For a fetch, the number of changes; for a delete, the number of transactions deleted.
    case count = 2
    /// Transactions whose ``NSPersistentHistoryTransaction/changes`` is `nil`.
    case transactionsOnly = 3
    /// The changes of every transaction, in order.
    case changesOnly = 4
    /// Transactions with their changes.
    case transactionsAndChanges = 5
}

/// A request to fetch or delete persistent history, run with `NSManagedObjectContext.execute(_:)`.
///
/// Matches Apple's `NSPersistentHistoryChangeRequest`. History exists only in stores added with
/// `NSPersistentHistoryTrackingKey`; other stores contribute nothing. Fetching after a token
/// whose transactions were deleted since throws `NSPersistentHistoryTokenExpiredError` (134301):
/// start over from ``NSPersistentStoreCoordinator/currentPersistentHistoryToken(fromStores:)``.
///
/// Threading: build it anywhere, execute it on a context's queue.
open class NSPersistentHistoryChangeRequest: NSPersistentStoreRequest, @unchecked Sendable {
    enum Operation {
        case fetchAfterDate(Date)
        case fetchAfterToken(NSPersistentHistoryToken?)
        case deleteBeforeDate(Date)
        case deleteBeforeToken(NSPersistentHistoryToken?)
        case deleteBeforeTransaction(NSPersistentHistoryTransaction?)
    }

    var operation: Operation = .fetchAfterToken(nil)

    /// What the request returns; transactions with their changes by default.
    open var resultType: NSPersistentHistoryResultType = .transactionsAndChanges
    /// The token the request fetches after or deletes up to, if it was made with one.
    open private(set) var token: NSPersistentHistoryToken?
    /// Filters what a fetch returns: a request for ``NSPersistentHistoryTransaction/fetchRequest``
    /// filters transactions (and its `fetchOffset` and `fetchLimit` page them), one for
    /// ``NSPersistentHistoryChange/fetchRequest`` filters changes (transactions left with no
    /// change are dropped).
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>?

    public required override init() { super.init() }

    private static func make(_ operation: Operation, token: NSPersistentHistoryToken? = nil) -> Self {
        let request = Self()
        request.operation = operation
        request.token = token
        return request
    }

    /// Transactions recorded after `date`.
    open class func fetchHistory(after date: Date) -> Self { make(.fetchAfterDate(date)) }

    /// Transactions after `token`; all history when `token` is `nil`.
    open class func fetchHistory(after token: NSPersistentHistoryToken?) -> Self {
        make(.fetchAfterToken(token), token: token)
    }

    /// Transactions after `transaction`; all history when it is `nil`.
    open class func fetchHistory(after transaction: NSPersistentHistoryTransaction?) -> Self {
        make(.fetchAfterToken(transaction?.token), token: transaction?.token)
    }

    /// All history, filtered by `fetchRequest` (see ``fetchRequest``).
    open class func fetchHistory(withFetchRequest fetchRequest: NSFetchRequest<NSFetchRequestResult>) -> Self {
        let request = make(.fetchAfterToken(nil))
        request.fetchRequest = fetchRequest
        return request
    }

    /// Deletes the transactions recorded before `date`, oldest first, up to the first recorded
    /// at or after it.
    open class func deleteHistory(before date: Date) -> Self { make(.deleteBeforeDate(date)) }

    /// Deletes the transactions up to and including `token`'s, in the stores it names; all
    /// history when `token` is `nil`.
    open class func deleteHistory(before token: NSPersistentHistoryToken?) -> Self {
        make(.deleteBeforeToken(token), token: token)
    }

    /// Deletes the transactions older than `transaction` in its store; all history when it is `nil`.
    open class func deleteHistory(before transaction: NSPersistentHistoryTransaction?) -> Self {
        make(.deleteBeforeTransaction(transaction))
    }
}

/// The result of an ``NSPersistentHistoryChangeRequest`` (Apple's `NSPersistentHistoryResult`).
open class NSPersistentHistoryResult: NSPersistentStoreResult, @unchecked Sendable {
    /// What ``resultType`` asked for: `[NSPersistentHistoryTransaction]`,
    /// `[NSPersistentHistoryChange]`, `[NSManagedObjectID]`, an `Int` count or `true`.
    public let result: Any?
    /// The request's result type.
    public let resultType: NSPersistentHistoryResultType

    init(result: Any?, resultType: NSPersistentHistoryResultType) {
        self.result = result
        self.resultType = resultType
    }
}
