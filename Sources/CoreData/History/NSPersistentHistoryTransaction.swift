import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

/// One save or batch request as persistent history recorded it.
///
/// Matches Apple's `NSPersistentHistoryTransaction`. Fetched with an
/// ``NSPersistentHistoryChangeRequest``; ``changes`` is `nil` when the request's result type
/// asked for transactions only. Predicates of a request's ``fetchRequest`` read its keys:
/// `author`, `bundleID`, `contextName`, `processID`, `storeID`, `timestamp`, `transactionNumber`.
///
/// Threading: immutable once fetched; safe to read from any thread.
open class NSPersistentHistoryTransaction: NSObject, KeyValueReadable, @unchecked Sendable {
    /// When the store recorded the save.
    open private(set) var timestamp: Date
    /// The changes, in the order recorded; `nil` when not fetched.
    open internal(set) var changes: [NSPersistentHistoryChange]?
    /// The transaction's number in its store: 1 for the first, increasing, never reused.
    open private(set) var transactionNumber: Int64
    /// The identifier (`NSStoreUUIDKey`) of the store the transaction changed.
    open private(set) var storeID: String
    /// The saving process's bundle identifier; on Linux the executable's name.
    open private(set) var bundleID: String
    /// The saving process's ID, as a string (Apple's type).
    open private(set) var processID: String
    /// The saving context's `name`.
    open private(set) var contextName: String?
    /// The saving context's `transactionAuthor`.
    open private(set) var author: String?
    /// The token that marks the end of this transaction: fetching after it returns later ones.
    open var token: NSPersistentHistoryToken { NSPersistentHistoryToken(numbers: [storeID: transactionNumber]) }

    init(_ stored: StoreHistoryTransaction, storeID: String) {
        timestamp = stored.timestamp
        transactionNumber = stored.number
        self.storeID = storeID
        bundleID = stored.bundleID
        processID = String(stored.processID)
        contextName = stored.contextName
        author = stored.author
        super.init()
    }

    /// Apple's initializer; a transaction made this way is empty. Transactions come from
    /// ``NSPersistentHistoryChangeRequest``.
    public override init() {
        timestamp = Date(timeIntervalSinceReferenceDate: 0)
        transactionNumber = 0
        storeID = ""
        bundleID = ""
        processID = ""
        super.init()
    }

    /// A did-save notification of the transaction's object IDs (`NSInsertedObjectIDsKey`,
    /// `NSUpdatedObjectIDsKey`, `NSDeletedObjectIDsKey`) for
    /// `mergeChanges(fromContextDidSave:)`: how a context takes in another process's save.
    open func objectIDNotification() -> Notification {
        var inserted = Set<NSManagedObjectID>()
        var updated = Set<NSManagedObjectID>()
        var deleted = Set<NSManagedObjectID>()
        for change in changes ?? [] {
            switch change.changeType {
            case .insert: inserted.insert(change.changedObjectID)
            case .update: updated.insert(change.changedObjectID)
            case .delete: deleted.insert(change.changedObjectID)
            }
        }
        return Notification(name: .NSManagedObjectContextDidSave, object: nil, userInfo: [
            NSInsertedObjectIDsKey: inserted, NSUpdatedObjectIDsKey: updated, NSDeletedObjectIDsKey: deleted,
        ])
    }

    /// The entity that a fetch request for transactions names (for
    /// ``NSPersistentHistoryChangeRequest/fetchRequest``).
    open class var entityDescription: NSEntityDescription? { HistoryEntities.transaction }

    /// The same as ``entityDescription``; Apple asks for a context.
    open class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? { entityDescription }

    /// A fetch request for transactions, to filter a history request by a predicate on the keys above.
    open class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? { HistoryEntities.fetchRequest(for: HistoryEntities.transaction) }

    public func value(forKey key: String) -> Any? {
        switch key {
        case "timestamp": return timestamp
        case "changes": return changes
        case "transactionNumber": return transactionNumber
        case "storeID": return storeID
        case "bundleID": return bundleID
        case "processID": return processID
        case "contextName": return contextName
        case "author": return author
        case "token": return token
        default: return nil
        }
    }

    open override var description: String {
        "<NSPersistentHistoryTransaction \(transactionNumber) at \(timestamp) author \(author ?? "nil") context \(contextName ?? "nil"), \(changes.map { "\($0.count) changes" } ?? "changes not fetched")>"
    }
}
