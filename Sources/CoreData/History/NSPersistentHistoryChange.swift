import CoreDataModel
import CoreDataPredicate
import Foundation

/// What a history change did to its object (Apple's `NSPersistentHistoryChangeType`).
public enum NSPersistentHistoryChangeType: Int, Sendable {
    case insert = 0
    case update = 1
    case delete = 2
}

/// One object's change within an ``NSPersistentHistoryTransaction``.
///
/// Matches Apple's `NSPersistentHistoryChange`. Predicates of a request's
/// ``NSPersistentHistoryChangeRequest/fetchRequest`` on ``fetchRequest`` read its keys:
/// `changeID`, `changeType` (the raw value), `changedObjectID`, `changedEntity` (compares with an
/// entity or its name), `tombstone`.
///
/// Threading: immutable once fetched; safe to read from any thread.
open class NSPersistentHistoryChange: NSObject, KeyValueReadable, @unchecked Sendable {
    /// The change's identifier in its store: the transaction number × 2^26 plus the change's
    /// position in the transaction (unique while a transaction holds fewer than 2^26 changes).
    open private(set) var changeID: Int64
    /// The object inserted, updated or deleted.
    open private(set) var changedObjectID: NSManagedObjectID
    /// Insert, update or delete.
    open private(set) var changeType: NSPersistentHistoryChangeType
    /// For a delete, the values of the attributes the model marks
    /// `preservesValueInHistoryOnDeletion`, by name (as the attributes' types: `String`, `Int64`,
    /// `Date`, …); `nil` for other changes.
    open private(set) var tombstone: [AnyHashable: Any]?
    /// For an update, the properties the save changed; `nil` for other changes.
    open private(set) var updatedProperties: Set<NSPropertyDescription>?
    /// The transaction the change belongs to. In a `.changesOnly` result the change holds it
    /// (and the transaction's ``NSPersistentHistoryTransaction/changes`` is `nil`); otherwise
    /// the transaction holds its changes and this reference is weak, so the two never keep each
    /// other alive.
    open var transaction: NSPersistentHistoryTransaction? { heldTransaction ?? weakTransaction }
    private weak var weakTransaction: NSPersistentHistoryTransaction?
    private var heldTransaction: NSPersistentHistoryTransaction?

    /// Makes the change hold its transaction (a `.changesOnly` result).
    func retainTransaction() { heldTransaction = weakTransaction }

    init(
        changeID: Int64, objectID: NSManagedObjectID, type: NSPersistentHistoryChangeType, tombstone: [AnyHashable: Any]?,
        updatedProperties: Set<NSPropertyDescription>?, transaction: NSPersistentHistoryTransaction
    ) {
        self.changeID = changeID
        self.changedObjectID = objectID
        self.changeType = type
        self.tombstone = tombstone?.mapValues { FoundationBridge.object($0) }
        self.updatedProperties = updatedProperties
        self.weakTransaction = transaction
        super.init()
    }

    /// The entity that a fetch request for changes names.
    open class var entityDescription: NSEntityDescription? { HistoryEntities.change }

    /// The same as ``entityDescription``; Apple asks for a context.
    open class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? { entityDescription }

    /// A fetch request for changes, to filter a history request's changes by a predicate.
    open class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? { HistoryEntities.fetchRequest(for: HistoryEntities.change) }

    public func value(forKey key: String) -> Any? {
        switch key {
        case "changeID": return changeID
        case "changedObjectID": return changedObjectID
        case "changeType": return changeType.rawValue
        case "changedEntity": return changedObjectID.entity.name
        case "tombstone": return tombstone
        case "transaction": return transaction
        case "updatedProperties": return updatedProperties.map { Set($0.map(\.name)) }
        default: return nil
        }
    }

    open override var description: String {
        "<NSPersistentHistoryChange \(changeID) \(changeType) \(changedObjectID)>"
    }
}

/// The entities Apple gives history's fetch requests. They belong to no model: a request
/// names them only so that ``NSPersistentHistoryChangeRequest`` knows what its predicate filters.
enum HistoryEntities {
    static let transactionName = "NSPersistentHistoryTransaction"
    static let changeName = "NSPersistentHistoryChange"

    static let transaction: NSEntityDescription = entity(transactionName, [
        ("author", .stringAttributeType), ("bundleID", .stringAttributeType), ("contextName", .stringAttributeType),
        ("processID", .stringAttributeType), ("storeID", .stringAttributeType), ("timestamp", .dateAttributeType),
        ("transactionNumber", .integer64AttributeType),
    ])
    static let change: NSEntityDescription = entity(changeName, [
        ("changeID", .integer64AttributeType), ("changeType", .integer64AttributeType), ("changedEntity", .stringAttributeType),
        ("changedObjectID", .objectIDAttributeType),
    ])

    /// A new fetch request for one of these entities.
    static func fetchRequest(for entity: NSEntityDescription) -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: entity.name ?? "")
        request.entity = entity
        return request
    }

    private static func entity(_ name: String, _ attributes: [(String, NSAttributeType)]) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.properties = attributes.map { name, type in
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            return attribute
        }
        return entity
    }
}
