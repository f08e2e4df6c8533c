import CoreDataStorage
import Foundation

/// One optimistic-locking conflict found at save: the object, its versions and snapshots.
///
/// Matches Apple's `NSMergeConflict`; found under `conflictList` in an `NSManagedObjectMergeError`.
open class NSMergeConflict: NSObject, @unchecked Sendable {
    /// The object whose save conflicted; `nil` when the context no longer has it.
    public let sourceObject: NSManagedObject?
    /// The version the store has now (0 when the object was deleted there).
    public let newVersionNumber: Int
    /// The version the context read.
    public let oldVersionNumber: Int
    /// The object's values as the context last read them.
    public let cachedSnapshot: [String: Any]?
    /// The object's values in the store now; `nil` when the object was deleted there.
    public let persistedSnapshot: [String: Any]?
    /// Apple's snapshot of the object's values in the parent context; always `nil` here.
    public let objectSnapshot: [String: Any]? = nil

    init(source: NSManagedObject?, newVersion: Int, oldVersion: Int, cachedSnapshot: [String: Any]?, persistedSnapshot: [String: Any]?) {
        self.sourceObject = source
        self.newVersionNumber = newVersion
        self.oldVersionNumber = oldVersion
        self.cachedSnapshot = cachedSnapshot
        self.persistedSnapshot = persistedSnapshot
        super.init()
    }

    open override var description: String {
        "<NSMergeConflict \(sourceObject?.objectID.description ?? "?") old version \(oldVersionNumber) new version \(newVersionNumber)>"
    }
}

/// A uniqueness-constraint conflict found at save.
///
/// Matches Apple's `NSConstraintConflict`; found under `conflictList` in an
/// `NSManagedObjectConstraintMergeError`.
open class NSConstraintConflict: NSObject, @unchecked Sendable {
    /// The properties of the constraint.
    public let constraint: [String]
    /// The objects of this context that share the values.
    public let conflictingObjects: [NSManagedObject]
    /// The already saved object that holds the values, if it is registered in the context.
    public let databaseObject: NSManagedObject?
    /// The shared values by property name.
    public let constraintValues: [String: Any]

    init(_ conflict: StoreConstraintConflict, context: NSManagedObjectContext) {
        self.constraint = conflict.constraint
        let objects = conflict.objectIDs.compactMap { context.registeredObject(forStoreID: $0) }
        self.conflictingObjects = objects.filter { $0.isInserted || $0.hasChanges }
        self.databaseObject = objects.first { !$0.isInserted && !$0.hasChanges }
        var values: [String: Any] = [:]
        if let sample = objects.first {
            for key in conflict.constraint { values[key] = sample.primitiveValue(forKey: key) ?? NSNull() }
        }
        self.constraintValues = values
        super.init()
    }
}
