import CoreDataModel
import Foundation

/// The seam every store plugs into: the in-memory store, the binary and XML stores, and a
/// user's own store. The object graph talks to stores only through this protocol.
///
/// Stores exchange ``StoreRow``s keyed by ``StoreObjectID`` and never see managed objects. A
/// row carries its values by slot of the entity's `PropertyLayout`; a store that keeps rows as
/// it receives them and hands them back in the same layout lets values pass from object to disk
/// and back without a property name hashed per value.
///
/// Threading: a store is shared by every context of a coordinator and called from their queues
/// at once; each method must be safe to call concurrently. A fetch sees one committed state: all
/// of a save or none of it.
///
/// Errors: methods throw ``StoreError``; the coordinator turns them into Apple's `NSError`s.
public protocol PersistentStoreEngine: AnyObject, Sendable {
    /// The store's metadata: `NSStoreUUIDKey`, `NSStoreTypeKey`, the model's version hashes
    /// (`NSStoreModelVersionHashes`) and anything the app added.
    func metadata() throws(StoreError) -> StoreMetadata

    /// Replaces the store's metadata; durable with the next save (or at once for file stores).
    func setMetadata(_ metadata: StoreMetadata) throws(StoreError)

    /// Runs a fetch.
    func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult

    /// Runs a fetch whose rows the caller turns into objects a run at a time. A store that
    /// builds many rows may answer ``StoreFetchRuns/rows(_:)`` in runs, so that the caller frees
    /// each run as it goes instead of holding every row beside every object made from them (at
    /// a million rows, 40 MB less at the fetch's peak). The rows, runs joined, are the ones
    /// ``execute(_:)`` returns, in the same order.
    ///
    /// A default implementation answers ``execute(_:)``'s rows as one run.
    func executeInRuns(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchRuns

    /// Applies a change set atomically: all of it or, on any error, none of it.
    ///
    /// - Returns: the new version of every updated object (it may also list inserted objects,
    ///   whose version is always 1).
    /// - Throws: ``StoreError/optimisticLockingFailure(_:)`` when an object's stored version is
    ///   not the one in the change set; ``StoreError/constraintConflict(_:)`` when a uniqueness
    ///   constraint would be broken.
    func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64]

    /// The stored row of one object (fault fulfilment), or `nil` when there is none.
    func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow?

    /// Gives the stored values of one object to `visit` by slot, without building a
    /// ``StoreRow``: a point read whose caller takes the values where it keeps them (a struct of
    /// its own, an object's slots). `visit` gets each stored value once; a property the store
    /// leaves out gets no call.
    ///
    /// A default implementation reads ``row(for:)`` and visits its slots; the binary store
    /// decodes the record where it lies and hands each value over owned, which spares the
    /// row's slot array, its teardown and a copy of each String.
    ///
    /// - Returns: the object's version and the layout whose slots `visit` was given, or `nil`
    ///   when the store has no such object (then `visit` was not called).
    /// - Throws: ``StoreError``, as ``row(for:)`` does; `visit` may have seen some values before.
    /// - Note: `visit` runs while the store holds its read lock: it must not call the store.
    func visitValues(of objectID: StoreObjectID, _ visit: (_ slot: Int, _ value: consuming StoreValue) -> Void) throws(StoreError) -> (version: Int64, layout: PropertyLayout)?

    /// The stored rows of several objects at once, for batch faulting (`fetchBatchSize`) and
    /// relationship prefetching; objects without a row are left out. Order is not significant.
    ///
    /// A default implementation calls ``row(for:)`` once per ID; a store that can read many rows
    /// in one pass (one lock, one page walk) should provide its own.
    func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow]

    /// Hands out `count` new primary keys for an entity; they are never handed out again.
    func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64]

    /// Hands out primary keys for new objects of an entity, given each object's attribute values
    /// at the time (`attributeValues(i)` for the i-th object, transient attributes left out).
    ///
    /// A store whose keys derive from the objects (a user's `NSIncrementalStore` or
    /// `NSAtomicStore`) reads the values; the default ignores them and calls
    /// ``newPrimaryKeys(entityName:count:)``, so the closure costs nothing for other stores.
    func newPrimaryKeys(
        entityName: String, count: Int, attributeValues: (Int) -> [String: StoreValue]
    ) throws(StoreError) -> [Int64]

    /// The destinations of one relationship of a stored object, for a row that left the
    /// relationship out (its slot in the row is `nil`, ``StoreRow/contains(_:)`` is false): a store that loads
    /// relationships lazily answers here. ``StoreValue/reference(_:)`` or ``StoreValue/null``
    /// for a to-one relationship, ``StoreValue/references(_:)`` for a to-many one.
    ///
    /// The default answers ``StoreValue/null``: a row without the relationship has no destinations.
    func destinations(of objectID: StoreObjectID, relationship: String) throws(StoreError) -> StoreValue

    /// Deletes the rows a fetch matches without loading objects; returns their IDs.
    func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID]

    /// Sets properties of the rows a fetch matches without loading objects; returns their IDs.
    func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID]

    /// Flushes and releases the store's resources. Later calls throw ``StoreError/closed``.
    func close() throws(StoreError)

    /// Whether every save rewrites the whole store (an XML or atomic store), so that one large
    /// save costs less than many small ones; a store that appends saves (the binary and
    /// in-memory stores) answers `false`, the default. Bulk writers such as a migration batch
    /// their saves only for the latter.
    var savesWholeStore: Bool { get }
}

extension PersistentStoreEngine {
    public func newPrimaryKeys(
        entityName: String, count: Int, attributeValues: (Int) -> [String: StoreValue]
    ) throws(StoreError) -> [Int64] {
        try newPrimaryKeys(entityName: entityName, count: count)
    }

    public func destinations(of objectID: StoreObjectID, relationship: String) throws(StoreError) -> StoreValue { .null }

    public var savesWholeStore: Bool { false }

    /// Answers ``execute(_:)``'s rows as one run.
    public func executeInRuns(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchRuns {
        switch try execute(request) {
        case .rows(let rows): return .rows([rows])
        case let other: return .other(other)
        }
    }

    /// Reads the row with ``row(for:)`` and visits its slots.
    public func visitValues(of objectID: StoreObjectID, _ visit: (_ slot: Int, _ value: consuming StoreValue) -> Void) throws(StoreError) -> (version: Int64, layout: PropertyLayout)? {
        guard let row = try row(for: objectID) else { return nil }
        for (slot, value) in row.slots.enumerated() {
            if let value { visit(slot, value) }
        }
        return (row.version, row.layout)
    }

    /// Reads each row with ``row(for:)``.
    ///
    /// Complexity: one ``row(for:)`` call per ID.
    public func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        var rows: [StoreRow] = []
        rows.reserveCapacity(objectIDs.count)
        for id in objectIDs {
            if let row = try row(for: id) { rows.append(row) }
        }
        return rows
    }
}

/// A store's metadata: property-list values by key, as Apple's `[String: Any]`.
public struct StoreMetadata: @unchecked Sendable {
    /// The values; property-list types only (String, numbers, Bool, Date, Data, arrays, dictionaries).
    public var values: [String: Any]

    public init(_ values: [String: Any] = [:]) { self.values = values }

    public subscript(key: String) -> Any? {
        get { values[key] }
        set { values[key] = newValue }
    }
}
