import CoreDataModel
import CoreDataPredicate
import Foundation

/// What a fetch may return: managed objects, object IDs, dictionaries or a count.
///
/// Apple's `NSFetchRequestResult` is an Objective-C protocol adopted by those four classes.
/// Without Objective-C a Swift protocol existential cannot stand for itself as a generic
/// argument, so on Linux it is `AnyObject`: `NSFetchRequest<NSFetchRequestResult>` works as in
/// Apple's code.
public typealias NSFetchRequestResult = AnyObject

/// The base of requests a context executes (Apple's `NSPersistentStoreRequest`).
open class NSPersistentStoreRequest: NSObject, @unchecked Sendable {
    /// The kinds of request.
    public enum RequestType: UInt, Sendable {
        case fetchRequestType = 1
        case saveRequestType = 2
        case batchInsertRequestType = 5
        case batchUpdateRequestType = 6
        case batchDeleteRequestType = 7
    }

    /// The stores to search; `nil` for all.
    public var affectedStores: [NSPersistentStore]?

    /// The request's kind.
    open var requestType: RequestType { .fetchRequestType }
}

/// A description of objects to fetch: an entity, a predicate, an order and limits.
///
/// Matches Apple's `NSFetchRequest`. Threading: build it anywhere, execute it on a context's queue.
open class NSFetchRequest<ResultType: NSFetchRequestResult>: NSPersistentStoreRequest, @unchecked Sendable {
    /// What a fetch returns (Apple's `NSFetchRequestResultType` values).
    public typealias ResultKind = NSFetchRequestResultType

    /// The name of the entity to fetch.
    public var entityName: String?
    /// The entity to fetch; resolved from ``entityName`` against the context's model when `nil`.
    public var entity: NSEntityDescription?
    /// Which objects match; `nil` matches all.
    public var predicate: CoreDataPredicate.NSPredicate?
    /// The order of the results.
    public var sortDescriptors: [CoreDataPredicate.NSSortDescriptor]?
    /// The most objects to return; 0 for no limit.
    public var fetchLimit: Int = 0
    /// How many matching objects to skip.
    public var fetchOffset: Int = 0
    /// How many objects to fill at a time; 0 for all.
    public var fetchBatchSize: Int = 0
    /// What to return.
    public var resultType: NSFetchRequestResultType = .managedObjectResultType
    /// Whether objects of subentities match.
    public var includesSubentities = true
    /// Whether the context's unsaved changes are taken into account.
    public var includesPendingChanges = true
    /// Whether returned objects are faults until used.
    public var returnsObjectsAsFaults = true
    /// Whether property values are fetched with the objects.
    public var includesPropertyValues = true
    /// Whether dictionary results drop duplicates.
    public var returnsDistinctResults = false
    /// The properties (names or descriptions) of dictionary results.
    public var propertiesToFetch: [Any]?
    /// Relationship key paths whose destinations are fetched with the objects.
    public var relationshipKeyPathsForPrefetching: [String]?

    /// Creates a request with no entity; set ``entityName`` or ``entity`` before use.
    public override init() { super.init() }

    /// Creates a request for the named entity.
    public init(entityName: String) {
        self.entityName = entityName
        super.init()
    }

    open override var description: String {
        "<NSFetchRequest entity \(entityName ?? entity?.name ?? "?") predicate \(predicate?.predicateFormat ?? "nil") limit \(fetchLimit)>"
    }
}

/// What a fetch returns (Apple's raw values).
public struct NSFetchRequestResultType: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Managed objects.
    public static let managedObjectResultType = NSFetchRequestResultType([])
    /// Object IDs.
    public static let managedObjectIDResultType = NSFetchRequestResultType(rawValue: 1 << 0)
    /// Dictionaries of property values.
    public static let dictionaryResultType = NSFetchRequestResultType(rawValue: 1 << 1)
    /// The number of matching objects, as one `NSNumber`.
    public static let countResultType = NSFetchRequestResultType(rawValue: 1 << 2)
}
