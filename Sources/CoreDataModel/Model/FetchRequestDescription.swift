import Foundation

/// A stored fetch request as a model file describes it: a fetch request template of the model, or
/// the request behind a fetched property.
///
/// The model layer keeps the request as data (the predicate as its format string) so that it needs
/// neither a store nor a context; the `CoreData` module turns it into an `NSFetchRequest`.
public struct FetchRequestDescription: Sendable, Equatable {
    /// The name of the entity the request fetches.
    public var entityName: String
    /// The predicate in Apple's format syntax, exactly as written in the model; `nil` for none.
    public var predicateFormat: String?
    /// The most objects to return; `0` for no limit.
    public var fetchLimit: Int
    /// How many objects to fault in at a time; `0` for all at once.
    public var fetchBatchSize: Int
    /// Whether objects of subentities are included.
    public var includesSubentities: Bool
    /// Whether unsaved changes in the context are included.
    public var includesPendingChanges: Bool
    /// Whether returned objects start as faults.
    public var returnsObjectsAsFaults: Bool
    /// Whether duplicate results are dropped (dictionary results only).
    public var returnsDistinctResults: Bool
    /// Relationship key paths whose destinations are fetched with the objects.
    public var relationshipKeyPathsForPrefetching: [String]

    public init(
        entityName: String, predicateFormat: String? = nil, fetchLimit: Int = 0, fetchBatchSize: Int = 0,
        includesSubentities: Bool = true, includesPendingChanges: Bool = true, returnsObjectsAsFaults: Bool = true,
        returnsDistinctResults: Bool = false, relationshipKeyPathsForPrefetching: [String] = []
    ) {
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.fetchLimit = fetchLimit
        self.fetchBatchSize = fetchBatchSize
        self.includesSubentities = includesSubentities
        self.includesPendingChanges = includesPendingChanges
        self.returnsObjectsAsFaults = returnsObjectsAsFaults
        self.returnsDistinctResults = returnsDistinctResults
        self.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
    }
}
