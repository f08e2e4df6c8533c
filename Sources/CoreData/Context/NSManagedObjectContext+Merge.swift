import CoreDataModel
import Foundation

extension NSNotification.Name {
    /// Posted by a context after a save to its coordinator, so that contexts with
    /// `automaticallyMergesChangesFromParent` merge it. userInfo holds the ID sets.
    static let coordinatorDidSaveObjectIDs = NSNotification.Name("CoreDataLinux.CoordinatorDidSaveObjectIDs")
}

extension NSManagedObjectContext {
    /// Brings another context's saved changes into this one, as Apple's does: inserted objects
    /// are registered here (as faults), updated objects are refreshed (keeping this context's
    /// own unsaved changes on top), deleted objects leave the context, and
    /// `NSManagedObjectContextObjectsDidChange` is posted with them under ``NSInsertedObjectsKey``,
    /// ``NSRefreshedObjectsKey`` and ``NSDeletedObjectsKey`` (so a fetched-results controller on
    /// this context shows another context's inserts). Call it on this context's queue.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        let info = notification.userInfo ?? [:]
        func ids(_ objectsKey: String, _ idsKey: String) -> [NSManagedObjectID] {
            if let ids = info[idsKey] as? Set<NSManagedObjectID> { return Array(ids) }
            return ((info[objectsKey] as? Set<NSManagedObject>) ?? []).map(\.objectID)
        }
        applyMerge(
            inserted: ids(NSInsertedObjectsKey, NSInsertedObjectIDsKey),
            updated: ids(NSUpdatedObjectsKey, NSUpdatedObjectIDsKey),
            deleted: ids(NSDeletedObjectsKey, NSDeletedObjectIDsKey))
    }

    /// Merges changes described by object IDs (or their URIs) into each context, on its queue:
    /// what a batch delete or update, or another process, changed.
    public class func mergeChanges(fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [NSManagedObjectContext]) {
        for context in contexts {
            context.performAndWait {
                func ids(_ keys: [String]) -> [NSManagedObjectID] {
                    keys.flatMap { key -> [NSManagedObjectID] in
                        let value = changeNotificationData[key]
                        if let ids = value as? [NSManagedObjectID] { return ids }
                        if let ids = value as? Set<NSManagedObjectID> { return Array(ids) }
                        if let uris = value as? [URL] {
                            return uris.compactMap { context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: $0) }
                        }
                        return []
                    }
                }
                context.applyMerge(
                    inserted: ids([NSInsertedObjectsKey, NSInsertedObjectIDsKey]),
                    updated: ids([NSUpdatedObjectsKey, NSUpdatedObjectIDsKey]),
                    deleted: ids([NSDeletedObjectsKey, NSDeletedObjectIDsKey]))
            }
        }
    }

    func applyMerge(inserted: [NSManagedObjectID] = [], updated: [NSManagedObjectID], deleted: [NSManagedObjectID]) {
        // A merge moves a pinned context to the latest generation: it refreshes objects from it.
        advanceQueryGeneration()
        var refreshed: [NSManagedObject] = []
        var removed: [NSManagedObject] = []
        // Another context's new objects, registered here as faults (a temporary ID cannot be
        // read from a store: those are skipped).
        var added: [NSManagedObject] = []
        // A child reads a sibling's new objects from the parent, temporary IDs and all.
        for id in inserted where !id.isTemporaryID || parent != nil {
            if registered[id] != nil { continue }
            added.append(object(with: id))
        }
        var releasedDeletes: [NSManagedObjectID] = []
        for id in deleted {
            guard let object = registered[id] else {
                // A released object's entry goes now, so that its store hears of it at once.
                if registered.holdsReleased(id) {
                    registered[id] = nil
                    releasedDeletes.append(id)
                }
                continue
            }
            registered[id] = nil
            pendingUpdated[ObjectIdentifier(object)] = nil
            pendingDeleted[ObjectIdentifier(object)] = nil
            object.lifecycle.isDeleted = true
            object.managedObjectContext = nil
            removed.append(object)
        }
        noteUnregistered(releasedDeletes + removed.map(\.objectID))
        let gone = Set(removed.map(ObjectIdentifier.init))
        if !gone.isEmpty {
            // Objects that point at a removed object read their relationships again.
            for object in registered.values where !object.hasChanges && !object.isFault {
                let refersToGone = object.toOneValues.values.contains { gone.contains(ObjectIdentifier($0)) }
                    || object.toManyValues.values.contains { $0.contains { gone.contains(ObjectIdentifier($0)) } }
                if refersToGone {
                    object.withObservedChanges { object.turnIntoFault() }
                    refreshed.append(object)
                }
            }
        }
        for id in updated {
            guard let object = registered[id], !object.isInserted else { continue }
            refresh(object, mergeChanges: object.hasChanges)
            refreshed.append(object)
        }
        guard !refreshed.isEmpty || !removed.isEmpty || !added.isEmpty else { return }
        var info: [String: Any] = [:]
        if !added.isEmpty { info[NSInsertedObjectsKey] = Set(added) }
        if !refreshed.isEmpty { info[NSRefreshedObjectsKey] = Set(refreshed) }
        if !removed.isEmpty { info[NSDeletedObjectsKey] = Set(removed) }
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info)
        var merged: [String: Any] = [:]
        if !added.isEmpty { merged[NSInsertedObjectIDsKey] = Set(added.map(\.objectID)) }
        if !refreshed.isEmpty { merged[NSRefreshedObjectIDsKey] = Set(refreshed.map(\.objectID)) }
        if !removed.isEmpty { merged[NSDeletedObjectIDsKey] = Set(removed.map(\.objectID)) }
        let updatedIDs = Set(updated).intersection(refreshed.map(\.objectID))
        if !updatedIDs.isEmpty { merged[NSUpdatedObjectIDsKey] = updatedIDs }
        NotificationCenter.default.post(name: .NSManagedObjectContextDidMergeChangesObjectIDs, object: self, userInfo: merged)
    }

    /// Starts or stops merging what is saved into this context's parent: other contexts' saves
    /// to the same coordinator, or, for a child context, its siblings' saves into the parent
    /// context (Apple: "changes saved to its persistent store coordinator or parent context").
    func updateAutomaticMerging() {
        if let token = mergeObserver {
            NotificationCenter.default.removeObserver(token)
            mergeObserver = nil
        }
        guard automaticallyMergesChangesFromParent else { return }
        if let parentContext = parent {
            mergeObserver = NotificationCenter.default.addObserver(
                forName: .NSManagedObjectContextDidSave, object: nil, queue: nil
            ) { [weak self, weak parentContext] note in
                guard let self, let sibling = note.object as? NSManagedObjectContext, sibling !== self,
                      let parentContext, sibling.parent === parentContext else { return }
                func ids(_ key: String) -> [NSManagedObjectID] {
                    ((note.userInfo?[key] as? Set<NSManagedObject>) ?? []).map(\.objectID)
                }
                let (inserted, updated, deleted) = (ids(NSInsertedObjectsKey), ids(NSUpdatedObjectsKey), ids(NSDeletedObjectsKey))
                self.perform { self.applyMerge(inserted: inserted, updated: updated, deleted: deleted) }
            }
            return
        }
        guard let coordinator = persistentStoreCoordinator else { return }
        mergeObserver = NotificationCenter.default.addObserver(
            forName: .coordinatorDidSaveObjectIDs, object: coordinator, queue: nil
        ) { [weak self] note in
            guard let self, (note.userInfo?["context"] as AnyObject?) !== self else { return }
            let inserted = Array((note.userInfo?[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID>) ?? [])
            let updated = Array((note.userInfo?[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID>) ?? [])
            let deleted = Array((note.userInfo?[NSDeletedObjectIDsKey] as? Set<NSManagedObjectID>) ?? [])
            self.perform { self.applyMerge(inserted: inserted, updated: updated, deleted: deleted) }
        }
    }
}
