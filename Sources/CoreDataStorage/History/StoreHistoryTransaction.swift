import Foundation

/// One save (or batch request) as persistent history keeps it: who saved, when, and what changed.
///
/// Stores hand transactions out in ``number`` order; the object graph wraps each in Apple's
/// `NSPersistentHistoryTransaction`.
public struct StoreHistoryTransaction: Sendable, Equatable {
    /// The transaction's place in the store's history: 1 for the first, +1 for each later one,
    /// never reused, even after the transaction is deleted. A history token holds it.
    public var number: Int64
    /// When the store recorded the save.
    public var timestamp: Date
    /// The saving context's `transactionAuthor`.
    public var author: String?
    /// The saving context's `name`.
    public var contextName: String?
    /// The saving process's ID.
    public var processID: Int32
    /// The saving process's bundle identifier (its executable's name on Linux).
    public var bundleID: String
    /// The changes in the order the store recorded them (empty when a query asked for none).
    public var changes: [StoreHistoryChange]

    public init(
        number: Int64, timestamp: Date, author: String?, contextName: String?, processID: Int32, bundleID: String,
        changes: [StoreHistoryChange]
    ) {
        self.number = number
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.processID = processID
        self.bundleID = bundleID
        self.changes = changes
    }
}

/// One object's change within a ``StoreHistoryTransaction``.
public struct StoreHistoryChange: Sendable, Equatable {
    /// Apple's `NSPersistentHistoryChangeType`, with its raw values.
    public enum Kind: Int, Sendable {
        case insert = 0
        case update = 1
        case delete = 2
    }

    public var kind: Kind
    /// The object inserted, updated or deleted.
    public var objectID: StoreObjectID
    /// For an update, the names of the properties the save changed; empty otherwise.
    public var updatedProperties: [String]
    /// For a delete, the values of the attributes the model marks
    /// `preservesValueInHistoryOnDeletion`, by name; empty otherwise.
    public var tombstone: [String: StoreValue]

    public init(kind: Kind, objectID: StoreObjectID, updatedProperties: [String] = [], tombstone: [String: StoreValue] = [:]) {
        self.kind = kind
        self.objectID = objectID
        self.updatedProperties = updatedProperties
        self.tombstone = tombstone
    }
}
