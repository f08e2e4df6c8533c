/// Everything one save changes in one store, applied all or nothing.
///
/// Each updated or deleted object carries the version the saving context last read. A store
/// whose current version differs rejects the whole save with
/// ``StoreError/optimisticLockingFailure(_:)``, so a save never overwrites a change it did not see.
public struct StoreChangeSet: Sendable {
    /// New objects, each with version 0 (the store makes it 1).
    public var inserted: [StoreRow] = []
    /// Changed objects: the full new values, and in ``StoreRow/version`` the version read.
    public var updated: [StoreRow] = []
    /// Deleted objects with the version read.
    public var deleted: [(objectID: StoreObjectID, version: Int64)] = []
    /// Whether the store checks that every reference names an object that exists after the save
    /// (``StoreError/danglingReference(from:property:to:)`` otherwise). A migration writing a
    /// fresh store in batches turns it off: a batch refers to objects of later batches, and the
    /// migration guarantees each reference names an object it inserts.
    public var checksReferences = true
    /// Who makes the change, for a store that records persistent history
    /// (``StoreHistoryRecording``); `nil` records it with no author or context name.
    public var history: StoreHistoryContext?

    public init(inserted: [StoreRow] = [], updated: [StoreRow] = [], deleted: [(objectID: StoreObjectID, version: Int64)] = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// Whether the change set changes nothing.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// One object whose stored version differs from the version a save expected.
public struct StoreVersionConflict: Sendable, Equatable {
    /// The object in conflict.
    public var objectID: StoreObjectID
    /// The version the saving context read.
    public var expectedVersion: Int64
    /// The row as it is stored now; `nil` when another save deleted the object.
    public var storedRow: StoreRow?

    public init(objectID: StoreObjectID, expectedVersion: Int64, storedRow: StoreRow?) {
        self.objectID = objectID
        self.expectedVersion = expectedVersion
        self.storedRow = storedRow
    }
}

/// Objects whose values for a uniqueness constraint are equal.
public struct StoreConstraintConflict: Sendable, Equatable {
    /// The entity that declares the constraint.
    public var entityName: String
    /// The properties of the constraint.
    public var constraint: [String]
    /// The objects that share the values, the already stored one first when there is one.
    public var objectIDs: [StoreObjectID]

    public init(entityName: String, constraint: [String], objectIDs: [StoreObjectID]) {
        self.entityName = entityName
        self.constraint = constraint
        self.objectIDs = objectIDs
    }
}
