import Foundation

/// The changes of one save, as a user's ``NSIncrementalStore`` receives them in
/// `execute(_:with:)`.
///
/// Matches Apple's `NSSaveChangesRequest`. The objects are the store's working copies of the
/// saving context's objects (see ``NSIncrementalStore``): they carry the saved values, their
/// permanent IDs, `isInserted`/`isDeleted`, and `changedValues()` for updated objects.
/// Threading: read it inside `execute(_:with:)` only.
open class NSSaveChangesRequest: NSPersistentStoreRequest, @unchecked Sendable {
    /// The objects inserted in the saving context.
    public let insertedObjects: Set<NSManagedObject>?
    /// The objects changed in the saving context.
    public let updatedObjects: Set<NSManagedObject>?
    /// The objects deleted in the saving context.
    public let deletedObjects: Set<NSManagedObject>?
    /// The objects flagged for optimistic locking without changes (Apple's
    /// `detectConflicts(for:)`); contexts here flag none, so this is empty.
    public let lockedObjects: Set<NSManagedObject>?

    /// Creates a request with the given changes.
    public init(
        inserted insertedObjects: Set<NSManagedObject>?, updated updatedObjects: Set<NSManagedObject>?,
        deleted deletedObjects: Set<NSManagedObject>?, locked lockedObjects: Set<NSManagedObject>?
    ) {
        self.insertedObjects = insertedObjects
        self.updatedObjects = updatedObjects
        self.deletedObjects = deletedObjects
        self.lockedObjects = lockedObjects
        super.init()
    }

    open override var requestType: RequestType { .saveRequestType }
}
