import CoreDataModel
import CoreDataPredicate

/// A fetch as a store receives it: which entities, which rows, in which order, how many.
///
/// The predicate is the tree the caller wrote, with managed objects and object IDs among its
/// constants already replaced by ``StoreObjectID``s, so a store can answer it from its own
/// indexes or hand each row to the reference evaluator.
public struct StoreFetchRequest: @unchecked Sendable {
    /// What the caller wants back.
    public enum ResultType: Sendable, Equatable {
        /// Full rows (object IDs with their values). A store may answer with
        /// ``StoreFetchResult/objectIDs(_:)`` instead: the values are then read on first use,
        /// through ``PersistentStoreEngine/row(for:)`` (a store that fulfils faults lazily).
        case rows
        /// Object IDs only.
        case objectIDs
        /// The number of matching rows.
        case count
    }

    /// The entity fetched. Frozen, so safe to read from the store's thread.
    public var entity: NSEntityDescription
    /// Whether rows of the entity's subentities match too.
    public var includesSubentities: Bool
    /// Which rows match; `nil` matches all.
    public var predicate: CoreDataPredicate.NSPredicate?
    /// The order of the results; empty means the store's order (by object ID).
    public var sortDescriptors: [CoreDataPredicate.NSSortDescriptor]
    /// How many matching rows to skip.
    public var offset: Int
    /// The most rows to return; 0 for no limit.
    public var limit: Int
    /// What to return.
    public var resultType: ResultType
    /// For a batch delete or update: who makes the change, for a store that records persistent
    /// history (``StoreHistoryRecording``). Fetches ignore it.
    public var history: StoreHistoryContext?

    public init(
        entity: NSEntityDescription, includesSubentities: Bool = true, predicate: CoreDataPredicate.NSPredicate? = nil,
        sortDescriptors: [CoreDataPredicate.NSSortDescriptor] = [], offset: Int = 0, limit: Int = 0, resultType: ResultType = .rows
    ) {
        self.entity = entity
        self.includesSubentities = includesSubentities
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.offset = offset
        self.limit = limit
        self.resultType = resultType
    }

    /// The names of the concrete entities whose rows can match: the entity and, when
    /// ``includesSubentities``, all its descendants; abstract entities have no rows of their own.
    public var entityNames: [String] {
        var names: [String] = []
        var pending = [entity]
        while let next = pending.popLast() {
            if let name = next.name, !next.isAbstract { names.append(name) }
            if includesSubentities { pending.append(contentsOf: next.subentities) }
        }
        return names
    }
}

/// What a store returns for a ``StoreFetchRequest``.
public enum StoreFetchResult: Sendable {
    case rows([StoreRow])
    case objectIDs([StoreObjectID])
    case count(Int)
}

/// A fetch's answer with its rows in runs (``PersistentStoreEngine/executeInRuns(_:)``).
public enum StoreFetchRuns: Sendable {
    /// The rows in runs, in the order one array would hold them.
    case rows([[StoreRow]])
    /// Any other answer, as ``PersistentStoreEngine/execute(_:)`` gives it.
    case other(StoreFetchResult)
}
