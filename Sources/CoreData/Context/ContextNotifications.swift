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
    /// Posted (on the context's queue) after a context merged changes in, from another context's
    /// save, a parent's, or a remote one; userInfo holds the merged IDs under
    /// ``NSInsertedObjectIDsKey``, ``NSUpdatedObjectIDsKey``, ``NSDeletedObjectIDsKey`` and
    /// ``NSRefreshedObjectIDsKey``.
    public static let NSManagedObjectContextDidMergeChangesObjectIDs = NSNotification.Name("NSManagedObjectContextDidMergeChangesObjectIDsNotification")
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
/// userInfo key: IDs of refreshed objects.
public let NSRefreshedObjectIDsKey = "refreshed_objectIDs"
/// userInfo key: IDs of invalidated objects.
public let NSInvalidatedObjectIDsKey = "invalidated_objectIDs"
/// userInfo key of `NSManagedObjectContextObjectsDidChange`: every object of the context was
/// invalidated (``NSManagedObjectContext/reset()``); the value is an array of them.
public let NSInvalidatedAllObjectsKey = "invalidatedAll"

/// The changes a context has made since it last posted `NSManagedObjectContextObjectsDidChange`,
/// coalesced as Apple's `processPendingChanges()` coalesces them: one notification per event,
/// not one per change.
struct PendingChangeNotice {
    var inserted: [ObjectIdentifier: NSManagedObject] = [:]
    var updated: [ObjectIdentifier: NSManagedObject] = [:]
    var deleted: [ObjectIdentifier: NSManagedObject] = [:]

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

extension NSManagedObjectContext {
    /// ``noteObjectsChanged(inserted:updated:deleted:)`` for one inserted object, without the
    /// one-element array, which its first set in the same event then does not make either
    /// (``NSManagedObject/startInsertEvent(in:)``). An insert is per object, often in a loop of
    /// thousands: the array was a third of its cost.
    func noteInserted(_ object: NSManagedObject) {
        changeNotice.inserted[ObjectIdentifier(object)] = object
        object.startInsertEvent(in: self)
        scheduleChangeNotice()
    }

    /// Records changes for the next `NSManagedObjectContextObjectsDidChange`.
    ///
    /// An object inserted and deleted before the notice goes out is in neither set (nobody heard
    /// of it); an updated object that is then deleted is reported deleted only.
    func noteObjectsChanged(inserted: [NSManagedObject] = [], updated: [NSManagedObject] = [], deleted: [NSManagedObject] = []) {
        for object in inserted { changeNotice.inserted[ObjectIdentifier(object)] = object }
        for object in updated where changeNotice.inserted[ObjectIdentifier(object)] == nil {
            changeNotice.updated[ObjectIdentifier(object)] = object
        }
        for object in deleted {
            let key = ObjectIdentifier(object)
            if changeNotice.inserted.removeValue(forKey: key) != nil { continue }
            changeNotice.updated[key] = nil
            changeNotice.deleted[key] = object
        }
        scheduleChangeNotice()
    }

    /// A main-queue context posts at the end of the current main-queue event, as Apple's does at
    /// the end of a run-loop event; other contexts post at the end of each `perform(_:)` block,
    /// before a save, or when `processPendingChanges()` is called.
    private func scheduleChangeNotice() {
        guard concurrencyType == .mainQueueConcurrencyType, !changeNoticeScheduled else { return }
        changeNoticeScheduled = true
        DispatchQueue.main.async { self.processPendingChanges() }
    }

    /// Posts `NSManagedObjectContextObjectsDidChange` for the inserts, updates and deletes made
    /// since the last one, in one notification whose `userInfo` holds them under
    /// ``NSInsertedObjectsKey``, ``NSUpdatedObjectsKey`` and ``NSDeletedObjectsKey``.
    ///
    /// The context calls it itself: at the end of each block given to `perform(_:)`, before
    /// `save()`, and for a main-queue context at the end of the main-queue event in which the
    /// changes were made. Call it to hear of changes at once. Does nothing when nothing changed.
    ///
    /// With an ``undoManager``, it first registers the changes made since the last call as one
    /// undo operation, and ends the manager's event group (see ``UndoManager/groupsByEvent``):
    /// on Linux the calls to this method mark where one undoable event ends and the next begins.
    ///
    /// Threading: call it on the context's queue.
    public func processPendingChanges() {
        assertOnQueue()
        registerPendingUndo()
        changeNoticeScheduled = false
        guard !changeNotice.isEmpty else { return }
        let notice = changeNotice
        changeNotice = PendingChangeNotice()
        changeNoticeGeneration &+= 1
        // Built with the key type `userInfo` has, so posting does not convert the dictionary.
        var info: [AnyHashable: Any] = [:]
        if !notice.inserted.isEmpty { info[NSInsertedObjectsKey] = Set(sparselyFrom: notice.inserted.values) }
        if !notice.updated.isEmpty { info[NSUpdatedObjectsKey] = Set(sparselyFrom: notice.updated.values) }
        if !notice.deleted.isEmpty { info[NSDeletedObjectsKey] = Set(sparselyFrom: notice.deleted.values) }
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info)
    }
}
