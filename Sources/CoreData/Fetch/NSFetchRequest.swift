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
    /// How many objects' values are read from the store at a time; 0 (the default) reads them
    /// all with the fetch.
    ///
    /// With a batch size the fetch finds the IDs of every matching object and returns them all as
    /// faults, with no values read. Using any object of the array (reading a property) reads the
    /// rows of its whole batch — the `fetchBatchSize` objects around it in the result order — in
    /// one store call, and those objects stop being faults together.
    ///
    /// Difference from Apple: Apple returns an `NSArray` proxy that creates the objects of a batch
    /// when it is first indexed. Swift on Linux returns a plain `[T]` holding every object (as a
    /// fault) from the start, so the type is the same as without a batch size; the batching
    /// happens when the faults are fired. Each fault costs a small object; the values, which are
    /// what batching saves, arrive batch by batch. Ignored in child contexts (their objects
    /// come from the parent one at a time) and for non-object result types.
    public var fetchBatchSize: Int = 0
    /// What to return: managed objects (the default), object IDs, dictionaries or a count.
    public var resultType: NSFetchRequestResultType = .managedObjectResultType
    /// Whether objects of subentities match too (`true` by default).
    public var includesSubentities = true
    /// Whether the context's unsaved inserts, updates and deletes are taken into account
    /// (`true` by default): inserted objects that match are returned, deleted ones are not, and
    /// changed objects match by their unsaved values.
    ///
    /// As on Apple platforms, dictionary results (`dictionaryResultType`, including aggregates)
    /// always reflect the store and ignore this setting.
    public var includesPendingChanges = true
    /// Whether returned objects are faults (`true` by default). The values of fetched faults
    /// arrive with the fetch, so firing them needs no further store read; `false` returns the
    /// objects with their values already set.
    public var returnsObjectsAsFaults = true
    /// Whether property values are read with the objects (`true` by default). With `false` the
    /// fetch reads only object IDs: objects are returned as faults with no values cached, and
    /// firing one reads its row from the store then (so it sees saves made after the fetch).
    public var includesPropertyValues = true
    /// Whether objects the context already holds get the store's current values from the fetch
    /// (`false` by default).
    ///
    /// Matches Apple's `shouldRefreshRefetchedObjects`. By default a fetch returns an object the
    /// context already holds as it is, with the values it had, even when the store's have
    /// changed since. With `true`, each such object the fetch returns is refreshed as
    /// `refresh(_:mergeChanges: true)` would: its saved values become the store's current ones
    /// and its unsaved changes are applied over them, so nothing pending is lost. Objects
    /// inserted and not yet saved, and objects deleted in the context, are left alone.
    /// `awakeFromFetch()` runs on each refreshed object.
    public var shouldRefreshRefetchedObjects = false
    /// Whether dictionary results drop duplicate dictionaries (`false` by default; dictionary
    /// results only).
    public var returnsDistinctResults = false
    /// The columns of dictionary results: property names or key paths (`"author.name"`),
    /// `NSPropertyDescription`s, and ``NSExpressionDescription``s (whose `NSExpressionDescription.name`
    /// becomes the key). `nil` fetches every attribute. A to-one relationship's value is the
    /// destination's `NSManagedObjectID`. A nil value leaves its key out of the dictionary.
    public var propertiesToFetch: [Any]?
    /// How dictionary results are grouped: property names or key paths, or `NSPropertyDescription`s.
    ///
    /// Each group gives one dictionary. Every column of ``propertiesToFetch`` must then be either
    /// grouped by or an aggregate expression (`sum:`, `average:`, `min:`, `max:`, `count:`, …),
    /// which is computed over the objects of the group. Requires `dictionaryResultType`.
    public var propertiesToGroupBy: [Any]?
    /// Which groups are kept, tested on each result dictionary after grouping (SQL's `HAVING`).
    ///
    /// Key paths and `$variables` of the predicate read the dictionary's columns by name, so an
    /// expression description named `"count"` is `count` or `$count`. Requires
    /// ``propertiesToGroupBy``.
    public var havingPredicate: CoreDataPredicate.NSPredicate?
    /// Relationship key paths (`"books"`, `"books.tags"`) whose destination objects are read with
    /// the fetch: they are registered in the context with their values, not as faults, so using
    /// the relationships needs no further store reads.
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
