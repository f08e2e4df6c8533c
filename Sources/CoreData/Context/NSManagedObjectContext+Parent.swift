import CoreDataModel
import Foundation

/// What a parent context hands a child about one object: its values, with relationships as IDs
/// (which may be temporary: the parent's own unsaved objects are visible to its children).
struct ParentSnapshot {
    var attributes: [String: Any]
    var relationships: [String: [NSManagedObjectID]]
}

extension NSManagedObjectContext {
    /// The parent's view of an object, read on the parent's queue; `nil` when the parent does not
    /// have it (deleted there, or in no store).
    func snapshotFromParent(_ objectID: NSManagedObjectID) -> ParentSnapshot? {
        guard let parent else { return nil }
        return parent.performAndWait { () -> ParentSnapshot? in
            let object: NSManagedObject
            if let registered = parent.registered[objectID] {
                object = registered
            } else if let fetched = try? parent.existingObject(with: objectID) {
                object = fetched
            } else {
                return nil
            }
            guard !object.isDeleted else { return nil }
            object.fireFaultIfNeeded()
            var attributes: [String: Any] = [:]
            var relationships: [String: [NSManagedObjectID]] = [:]
            for (name, property) in object.entity.propertiesByName {
                switch property {
                case let relationship as NSRelationshipDescription:
                    relationships[name] = object.liveDestinationIDs(relationship)
                case is NSAttributeDescription:
                    if let value = object.attributeValues[name] { attributes[name] = value }
                default:
                    continue
                }
            }
            return ParentSnapshot(attributes: attributes, relationships: relationships)
        }
    }

    /// The object IDs the parent's fetch returns for `request` (the parent's unsaved changes included).
    func objectIDsFromParent<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription, paged: Bool) throws -> [NSManagedObjectID] {
        guard let parent else { return [] }
        let idRequest = NSFetchRequest<NSManagedObjectID>()
        idRequest.entity = entity
        idRequest.entityName = entity.name
        idRequest.predicate = request.predicate
        idRequest.sortDescriptors = request.sortDescriptors
        idRequest.includesSubentities = request.includesSubentities
        idRequest.resultType = .managedObjectIDResultType
        if paged {
            idRequest.fetchOffset = request.fetchOffset
            idRequest.fetchLimit = request.fetchLimit
        }
        return try parent.performAndWait { try parent.fetch(idRequest) }
    }

    /// Pushes this child's changes into its parent, as Apple's save of a child context does: the
    /// parent gets the inserts (with the same temporary IDs), the changed values and the deletes,
    /// as its own unsaved changes.
    func pushChangesToParent(_ parent: NSManagedObjectContext, inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) throws {
        struct Change {
            var objectID: NSManagedObjectID
            var entity: NSEntityDescription
            var attributes: [String: Any?]
            var relationships: [String: [NSManagedObjectID]]
        }
        func change(_ object: NSManagedObject, keys: Set<String>?) -> Change {
            var attributes: [String: Any?] = [:]
            var relationships: [String: [NSManagedObjectID]] = [:]
            for (name, property) in object.entity.propertiesByName where keys?.contains(name) ?? true {
                if let relationship = property as? NSRelationshipDescription {
                    relationships[name] = object.liveDestinationIDs(relationship)
                } else if property is NSAttributeDescription {
                    attributes[name] = .some(object.attributeValues[name])
                }
            }
            return Change(objectID: object.objectID, entity: object.entity, attributes: attributes, relationships: relationships)
        }
        let insertedChanges = inserted.map { change($0, keys: nil) }
        let updatedChanges = updated.map { change($0, keys: $0.changedKeys) }
        let deletedIDs = deleted.map(\.objectID)

        parent.performAndWait {
            for item in insertedChanges where parent.registered[item.objectID] == nil {
                let type = EntityClassRegistry.objectClass(for: item.entity)
                let object = type.init(entity: item.entity, insertInto: nil)
                object.objectID = item.objectID
                // The child's save is an edit in the parent, undoable there like any other.
                parent.recordUndoExistence(of: object)
                object.managedObjectContext = parent
                object.attributeValues.removeAll()
                object.lifecycle.isInserted = true
                object.materialisedRelationships = Set(item.entity.relationshipsByName.keys)
                parent.registered[item.objectID] = object
                parent.pendingInserted[ObjectIdentifier(object)] = object
            }
            for item in insertedChanges + updatedChanges {
                let object = parent.object(with: item.objectID)
                for (name, value) in item.attributes {
                    object.kvcSetPrimitiveValue(value, forKey: name)
                }
                for (name, ids) in item.relationships {
                    let destinations = ids.map { parent.object(with: $0) }
                    let isToMany = item.entity.relationshipsByName[name]?.isToMany ?? true
                    object.kvcSetPrimitiveValue(isToMany ? destinations as Any : destinations.first as Any?, forKey: name)
                }
            }
            for id in deletedIDs {
                if let object = parent.registered[id] ?? (try? parent.existingObject(with: id)) {
                    parent.delete(object)
                }
            }
        }
    }

    /// Clears this child's pending changes after a push into its parent.
    func finishPushToParent(inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) {
        for object in inserted + updated {
            object.changedKeys = []
            object.lifecycle.isInserted = false
        }
        for object in deleted { registered[object.objectID] = nil }
        noteUnregistered(deleted.map(\.objectID))
        for object in pendingUpdated.values { object.changedKeys = [] }
        pendingInserted = [:]
        pendingUpdated = [:]
        pendingDeleted = [:]
        for object in inserted + updated + deleted { object.didSave() }
        NotificationCenter.default.post(
            name: .NSManagedObjectContextDidSave, object: self,
            userInfo: [NSInsertedObjectsKey: Set(sparselyFrom: inserted), NSUpdatedObjectsKey: Set(sparselyFrom: updated), NSDeletedObjectsKey: Set(sparselyFrom: deleted)])
        for object in deleted { object.managedObjectContext = nil }
    }
}

extension NSManagedObject {
    /// The IDs of a relationship's destinations that are not deleted, in order.
    func liveDestinationIDs(_ relationship: NSRelationshipDescription) -> [NSManagedObjectID] {
        materialise(relationship)
        let destinations = relationship.isToMany
            ? toManyValues[relationship.name] ?? []
            : [toOneValues[relationship.name]].compactMap { $0 }
        // A discarded destination never reaches the parent: it would be a fault with no row.
        return destinations.filter { !$0.lifecycle.isDeletedOrDiscarded }.map(\.objectID)
    }

    /// Fills the object from its parent context's view of it.
    func fill(fromParent snapshot: ParentSnapshot) {
        isFaultState = false
        changedKeys = []
        attributeValues.removeAll()
        for (name, value) in snapshot.attributes { attributeValues[name] = value }
        toOneValues = [:]
        toManyValues = [:]
        materialisedRelationships = []
        parentRelationships = snapshot.relationships
    }
}
