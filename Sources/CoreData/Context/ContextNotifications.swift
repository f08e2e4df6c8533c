import Foundation

extension NSNotification.Name {
    /// Posted (on the context's queue) when objects of a context are inserted, updated or deleted.
    public static let NSManagedObjectContextObjectsDidChange = NSNotification.Name("NSManagedObjectContextObjectsDidChangeNotification")
    /// Posted before a context saves.
    public static let NSManagedObjectContextWillSave = NSNotification.Name("NSManagedObjectContextWillSaveNotification")
    /// Posted after a context saved; userInfo holds the saved objects under `inserted`, `updated`, `deleted`.
    public static let NSManagedObjectContextDidSave = NSNotification.Name("NSManagedObjectContextDidSaveNotification")
    /// Posted after a context saved; userInfo holds object IDs under `inserted_objectIDs`, ….
    public static let NSManagedObjectContextDidSaveObjectIDs = NSNotification.Name("NSManagedObjectContextDidSaveObjectIDsNotification")
}

/// userInfo key: inserted objects.
public let NSInsertedObjectsKey = "inserted"
/// userInfo key: updated objects.
public let NSUpdatedObjectsKey = "updated"
/// userInfo key: deleted objects.
public let NSDeletedObjectsKey = "deleted"
/// userInfo key: refreshed objects.
public let NSRefreshedObjectsKey = "refreshed"
/// userInfo key: invalidated objects.
public let NSInvalidatedObjectsKey = "invalidated"
/// userInfo key: IDs of inserted objects.
public let NSInsertedObjectIDsKey = "inserted_objectIDs"
/// userInfo key: IDs of updated objects.
public let NSUpdatedObjectIDsKey = "updated_objectIDs"
/// userInfo key: IDs of deleted objects.
public let NSDeletedObjectIDsKey = "deleted_objectIDs"

extension NSManagedObjectContext {
    func noteObjectsChanged(inserted: [NSManagedObject] = [], updated: [NSManagedObject] = [], deleted: [NSManagedObject] = []) {
        // Built with the key type `userInfo` has, so posting does not convert the dictionary.
        var info: [AnyHashable: Any] = [:]
        if !inserted.isEmpty { info[NSInsertedObjectsKey] = Set(inserted) }
        if !updated.isEmpty { info[NSUpdatedObjectsKey] = Set(updated) }
        if !deleted.isEmpty { info[NSDeletedObjectsKey] = Set(deleted) }
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info)
    }
}
