import CoreDataModel
import CoreDataStorage
import Foundation

extension NSManagedObjectContext {
    /// Saves every insert, update and delete to the stores (or, for a child context, into its parent).
    ///
    /// Steps: `willSave()` on each changed object; validation (deny rules for deletes, required
    /// values, the model's rules and relationship counts for inserts and updates); permanent IDs
    /// for inserted objects; one change set per store; conflicts resolved by ``mergePolicy``; then
    /// the objects take their saved state, `didSave()` runs and `NSManagedObjectContextDidSave` is posted.
    ///
    /// - Throws: `NSError`s in `NSCocoaErrorDomain`: validation codes 1550–1680 (several at once
    ///   as 1560 with `NSDetailedErrorsKey`), `NSManagedObjectMergeError` (133020) with a
    ///   `conflictList` of ``NSMergeConflict``s, `NSManagedObjectConstraintMergeError` (133021),
    ///   store errors 134xxx. A failed save changes nothing in the store and leaves the context's
    ///   changes in place.
    public func save() throws {
        assertOnQueue()
        // Apple's save begins by announcing the changes it is about to save.
        processPendingChanges()
        guard hasChanges else { return }
        if let parent {
            try saveIntoParent(parent)
            return
        }
        guard let coordinator = persistentStoreCoordinator else {
            preconditionFailure("CoreData: save() on a context with no persistentStoreCoordinator and no parent")
        }
        let (inserted, updated, deleted) = try prepareSave()
        try obtainPermanentIDs(for: inserted)

        var changesByStore: [ObjectIdentifier: (store: NSPersistentStore, changes: StoreChangeSet)] = [:]
        func add(_ object: NSManagedObject, _ edit: (inout StoreChangeSet) -> Void) throws {
            guard let store = object.objectID.persistentStore ?? coordinator.store(for: object.entity) else {
                throw coreDataError(
                    NSPersistentStoreIncompatibleSchemaError,
                    "no store of the coordinator holds entity '\(object.entity.name ?? "?")' (object \(object.objectID))")
            }
            guard !store.isReadOnly else {
                throw coreDataError(NSPersistentStoreSaveError, "the store \(store.identifier) is read-only; \(object.objectID) can't be saved")
            }
            // Edited in place: a copy taken out of the dictionary and stored back would copy the
            // change set's arrays on every append (quadratic in the objects saved).
            edit(&changesByStore[ObjectIdentifier(store), default: (store, StoreChangeSet())].changes)
        }
        // The rows saved, inserts then updates: what the objects' committed state becomes.
        var savedRows: [StoreRow] = []
        savedRows.reserveCapacity(inserted.count + updated.count)
        for object in inserted {
            let row = try object.storeRow(version: 0)
            savedRows.append(row)
            try add(object) { $0.inserted.append(row) }
        }
        for object in updated {
            let row = try object.storeRow(version: object.committedRow?.version ?? 0)
            savedRows.append(row)
            try add(object) { $0.updated.append(row) }
        }
        for object in deleted {
            guard let id = object.objectID.storeObjectID else { continue }
            try add(object) { $0.deleted.append((id, object.committedRow?.version ?? 0)) }
        }

        if changesByStore.values.contains(where: { ($0.store.engine as? any StoreHistoryRecording)?.recordsHistory == true }) {
            // Persistent history names the properties each update changed (Apple's
            // `updatedProperties`); only a store that records history pays for them.
            var changedNames: [StoreObjectID: [String]] = [:]
            for object in updated {
                if let id = object.objectID.storeObjectID { changedNames[id] = Array(object.changedValues().keys).sorted() }
            }
            let context = historyContext(updatedProperties: changedNames)
            for key in Array(changesByStore.keys) { changesByStore[key]?.changes.history = context }
        }

        var versions: [StoreObjectID: Int64] = [:]
        var resolvedConflicts = false
        for (_, entry) in changesByStore.sorted(by: { $0.value.store.identifier < $1.value.store.identifier }) {
            let saved = try saveResolvingConflicts(entry.changes, to: entry.store, resolved: &resolvedConflicts)
            versions.merge(saved) { _, new in new }
        }

        // A resolved conflict may have given objects other IDs or values: then their rows are built afresh.
        finishSave(inserted: inserted, updated: updated, deleted: deleted, versions: versions, rows: resolvedConflicts ? nil : savedRows)
    }

    /// The steps every save starts with, whether it goes to stores or into a parent: the
    /// will-save notification and hooks, then validation. Returns what the save writes.
    private func prepareSave() throws -> (inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) {
        NotificationCenter.default.post(name: .NSManagedObjectContextWillSave, object: self)
        for object in pendingInserted.values { object.willSave() }
        for object in pendingUpdated.values { object.willSave() }
        for object in pendingDeleted.values { object.willSave() }
        try validatePendingChanges()
        return (
            Array(pendingInserted.values),
            Array(pendingUpdated.values).filter { $0.hasChanges && !$0.isDeleted },
            Array(pendingDeleted.values))
    }

    private func saveIntoParent(_ parent: NSManagedObjectContext) throws {
        let (inserted, updated, deleted) = try prepareSave()
        try pushChangesToParent(parent, inserted: inserted, updated: updated, deleted: deleted)
        finishPushToParent(inserted: inserted, updated: updated, deleted: deleted)
    }

    /// Gives objects permanent IDs now instead of at save, e.g. to pass their IDs to another context.
    public func obtainPermanentIDs(for objects: [NSManagedObject]) throws {
        guard let coordinator = persistentStoreCoordinator else { return }
        // Grouped by entity (which decides the store): one store lookup per entity, not per object.
        var byEntity: [ObjectIdentifier: (NSPersistentStore, [NSManagedObject])] = [:]
        for object in objects where object.objectID.isTemporaryID {
            let entityKey = ObjectIdentifier(object.entity)
            if byEntity[entityKey] == nil {
                guard let store = coordinator.store(for: object.entity), object.entity.name != nil else {
                    throw coreDataError(
                        NSPersistentStoreIncompatibleSchemaError,
                        "no store of the coordinator holds entity '\(object.entity.name ?? "?")'")
                }
                byEntity[entityKey] = (store, [])
            }
            byEntity[entityKey]?.1.append(object)
        }
        for (_, (store, group)) in byEntity {
            let name = group[0].entity.name ?? ""
            let keys = try mapStoreError { () throws(StoreError) -> [Int64] in
                try store.engine.newPrimaryKeys(entityName: name, count: group.count) { group[$0].storeAttributeValues() }
            }
            guard keys.count == group.count else {
                throw coreDataError(
                    NSPersistentStoreOperationError,
                    "the store \(store.identifier) handed out \(keys.count) permanent IDs for \(group.count) objects of \(name)")
            }
            for (object, key) in zip(group, keys) {
                registered[object.objectID] = nil
                object.objectID = NSManagedObjectID(entity: object.entity, store: store, storeID: StoreObjectID(entityName: name, primaryKey: key))
                registered[object.objectID] = object
            }
            noteRegistered(group.map(\.objectID))
        }
    }

    /// Validates every pending change. The errors come in a stable order: deletes, inserts, then
    /// updates, each group by object ID. Validation runs in table order and only the failures
    /// are sorted, so a save that passes pays nothing for the order.
    private func validatePendingChanges() throws {
        var failures: [(group: Int, object: NSManagedObject, errors: [NSError])] = []
        func collect(_ group: Int, _ object: NSManagedObject, _ body: () throws -> Void) {
            do {
                try body()
            } catch let error as NSError {
                if error.code == NSValidationMultipleErrorsError, let details = error.userInfo[NSDetailedErrorsKey] as? [NSError] {
                    failures.append((group, object, details))
                } else {
                    failures.append((group, object, [error]))
                }
            }
        }
        for object in pendingDeleted.values { collect(0, object) { try object.validateForDelete() } }
        for object in pendingInserted.values { collect(1, object) { try object.validateForInsert() } }
        for object in pendingUpdated.values where !object.isDeleted && object.hasChanges {
            collect(2, object) { try object.validateForUpdate() }
        }
        guard !failures.isEmpty else { return }
        failures.sort { $0.group != $1.group ? $0.group < $1.group : Self.stableOrder($0.object, $1.object) }
        let errors = failures.flatMap(\.errors)
        if errors.count == 1, let only = errors.first { throw only }
        if errors.count > 1 { throw combinedValidationError(errors) }
    }

    static func stableOrder(_ a: NSManagedObject, _ b: NSManagedObject) -> Bool {
        a.objectID.description < b.objectID.description
    }

    /// Saves one store's changes; on a version conflict applies the merge policy and retries.
    /// Sets `resolved` when the merge policy resolved a conflict (and the saved rows differ from the objects' state).
    private func saveResolvingConflicts(_ changes: StoreChangeSet, to store: NSPersistentStore, resolved: inout Bool) throws -> [StoreObjectID: Int64] {
        var attempt = changes
        // Each retry resolves every conflict it saw; a store that keeps changing under us is
        // given a bounded number of tries.
        for _ in 0..<8 {
            do {
                return try store.engine.save(attempt)
            } catch .optimisticLockingFailure(let conflicts) {
                guard let next = resolve(conflicts, in: attempt) else {
                    throw mergeError(conflicts)
                }
                attempt = next
                resolved = true
            } catch .constraintConflict(let conflicts) {
                if let next = try resolve(conflicts, in: attempt, store: store) {
                    attempt = next
                    resolved = true
                    continue
                }
                throw coreDataError(
                    NSManagedObjectConstraintMergeError,
                    "uniqueness constraint violated: " + conflicts.map { "\($0.entityName)(\($0.constraint.joined(separator: ", ")))" }.joined(separator: "; "),
                    [NSPersistentStoreSaveConflictsErrorKey: conflicts.map { NSConstraintConflict($0, context: self) }])
            } catch {
                throw nsError(from: error)
            }
        }
        throw coreDataError(NSManagedObjectMergeError, "the store kept changing while this context saved; gave up after 8 attempts")
    }

    /// Uniqueness conflicts resolved as the merge policy says, or `nil` for the error policy.
    ///
    /// The newly inserted object gives way to the object that already holds the values (Apple's
    /// behaviour): with object trump and overwrite its values are written over that object's,
    /// with store trump and rollback the stored values stay; either way the in-memory object takes
    /// the existing object's ID, and references to it in the same save follow.
    private func resolve(_ conflicts: [StoreConstraintConflict], in changes: StoreChangeSet, store: NSPersistentStore) throws -> StoreChangeSet? {
        let policy = resolvedMergeType
        guard policy != .errorMergePolicyType else { return nil }
        var result = changes
        var remap: [StoreObjectID: StoreObjectID] = [:]
        for conflict in conflicts where conflict.objectIDs.count == 2 {
            let owner = conflict.objectIDs[0], newcomer = conflict.objectIDs[1]
            guard remap[newcomer] == nil, let index = result.inserted.firstIndex(where: { $0.objectID == newcomer }) else { return nil }
            let incoming = result.inserted.remove(at: index)
            let objectWins = policy == .mergeByPropertyObjectTrumpMergePolicyType || policy == .overwriteMergePolicyType
            // The winner's attributes; relationships of both, so that inverses saved with the
            // newcomer (a book pointing at it) stay consistent with the surviving object.
            func merged(_ base: [String: StoreValue]) -> [String: StoreValue] {
                var values = base
                for (key, value) in incoming.values {
                    switch (value, base[key] ?? .null) {
                    case (.references(let new), .references(let old)):
                        values[key] = .references(old + new.filter { !old.contains($0) })
                    case (.reference, .null):
                        values[key] = value
                    default:
                        if objectWins { values[key] = value }
                    }
                }
                return values
            }
            if let ownerIndex = result.inserted.firstIndex(where: { $0.objectID == owner }) {
                result.inserted[ownerIndex].values = merged(result.inserted[ownerIndex].values)
            } else {
                let stored = try mapStoreError { () throws(StoreError) -> StoreRow? in try store.engine.row(for: owner) }
                guard let stored else { return nil }
                let base = result.updated.first { $0.objectID == owner }?.values ?? stored.values
                result.updated.removeAll { $0.objectID == owner }
                result.updated.append(StoreRow(objectID: owner, version: stored.version, values: merged(base)))
            }
            remap[newcomer] = owner
        }
        guard !remap.isEmpty else { return nil }
        func follow(_ id: StoreObjectID) -> StoreObjectID { remap[id] ?? id }
        func rewrite(_ row: StoreRow) -> StoreRow {
            var row = row
            for (slot, value) in row.slots.enumerated() {
                switch value {
                case .reference(let id)?: row.slots[slot] = .reference(follow(id))
                case .references(let ids)?: row.slots[slot] = .references(ids.map(follow))
                default: continue
                }
            }
            return row
        }
        result.inserted = result.inserted.map(rewrite)
        result.updated = result.updated.map(rewrite)
        for (newcomer, owner) in remap { adoptIdentity(of: owner, for: newcomer, in: store, objectWins: policy == .mergeByPropertyObjectTrumpMergePolicyType || policy == .overwriteMergePolicyType) }
        return result
    }

    /// Gives the in-memory object saved as `newcomer` the identity of `owner`.
    private func adoptIdentity(of owner: StoreObjectID, for newcomer: StoreObjectID, in store: NSPersistentStore, objectWins: Bool) {
        guard let object = registeredObject(forStoreID: newcomer), let entity = persistentStoreCoordinator?.managedObjectModel.entitiesByName[owner.entityName] else { return }
        let ownerID = NSManagedObjectID(entity: entity, store: store, storeID: owner)
        let heldOwner = registered[ownerID] != nil
        if let previous = registered[ownerID], previous !== object {
            // The context held the existing object too; it now reads the merged state afresh.
            previous.turnIntoFault()
            pendingUpdated[ObjectIdentifier(previous)] = nil
            previous.managedObjectContext = nil
        }
        let newcomerID = object.objectID
        registered[newcomerID] = nil
        object.objectID = ownerID
        registered[ownerID] = object
        // The store hears that the newcomer's ID is gone and, unless it was held already, that
        // the owner's is held now.
        noteUnregistered([newcomerID])
        if !heldOwner { noteRegistered([ownerID]) }
        object.lifecycle.isInserted = false
        pendingInserted[ObjectIdentifier(object)] = nil
        if let stored = try? store.engine.row(for: owner) {
            if objectWins {
                object.committedRow = stored
            } else {
                object.fill(from: stored)
            }
        }
    }

    /// The change set with the conflicts resolved as the merge policy says, or `nil` for the error policy.
    private func resolve(_ conflicts: [StoreVersionConflict], in changes: StoreChangeSet) -> StoreChangeSet? {
        let policy = resolvedMergeType
        guard policy != .errorMergePolicyType else { return nil }
        var result = changes
        for conflict in conflicts {
            let id = conflict.objectID
            guard let stored = conflict.storedRow else {
                // Deleted by someone else: nothing to update or delete any more.
                result.updated.removeAll { $0.objectID == id }
                result.deleted.removeAll { $0.objectID == id }
                continue
            }
            if let index = result.deleted.firstIndex(where: { $0.objectID == id }) {
                if policy == .rollbackMergePolicyType { result.deleted.remove(at: index) } else { result.deleted[index].version = stored.version }
                continue
            }
            guard let index = result.updated.firstIndex(where: { $0.objectID == id }) else { continue }
            let mine = result.updated[index]
            let object = registeredObject(forStoreID: id)
            let changedKeys = object?.changedKeys ?? Set(mine.values.keys)
            let base = object?.committedRow?.values ?? [:]
            var merged: [String: StoreValue]
            switch policy {
            case .overwriteMergePolicyType:
                merged = mine.values
            case .rollbackMergePolicyType:
                merged = stored.values
            case .mergeByPropertyObjectTrumpMergePolicyType:
                merged = stored.values
                for key in changedKeys { merged[key] = mine.values[key] ?? .null }
            case .mergeByPropertyStoreTrumpMergePolicyType:
                merged = stored.values
                for key in changedKeys where (stored.values[key] ?? .null) == (base[key] ?? .null) {
                    merged[key] = mine.values[key] ?? .null
                }
            case .errorMergePolicyType:
                return nil
            }
            result.updated[index] = StoreRow(objectID: id, version: stored.version, values: merged)
        }
        return result
    }

    private func mergeError(_ conflicts: [StoreVersionConflict]) -> NSError {
        let list = conflicts.map { conflict -> NSMergeConflict in
            let object = registeredObject(forStoreID: conflict.objectID)
            return NSMergeConflict(
                source: object, newVersion: Int(conflict.storedRow?.version ?? 0), oldVersion: Int(conflict.expectedVersion),
                cachedSnapshot: object.map { $0.committedValues(forKeys: nil) }, persistedSnapshot: conflict.storedRow.map { row in
                    object.map { obj in obj.snapshot(of: row) } ?? [:]
                })
        }
        return coreDataError(
            NSManagedObjectMergeError,
            "Could not merge changes: \(conflicts.count) object\(conflicts.count == 1 ? " was" : "s were") changed in the store since this context read \(conflicts.count == 1 ? "it" : "them") ("
                + conflicts.map { $0.objectID.description }.joined(separator: ", ") + ")",
            [NSPersistentStoreSaveConflictsErrorKey: list])
    }

    func registeredObject(forStoreID id: StoreObjectID) -> NSManagedObject? {
        registered.first { $0.key.storeObjectID == id }?.value
    }

    /// `rows`, when given, are the objects' rows as saved (inserts then updates), so they need not be built again.
    private func finishSave(inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject], versions: [StoreObjectID: Int64], rows: [StoreRow]?) {
        for (position, object) in (inserted + updated).enumerated() {
            guard let id = object.objectID.storeObjectID else { continue }
            let version = versions[id] ?? object.committedRow?.version ?? 1
            var row: StoreRow
            if let rows, position < rows.count, rows[position].objectID == id {
                row = rows[position]
                row.version = version
            } else {
                guard let fresh = try? object.storeRow(version: version) else { continue }
                row = fresh
            }
            object.committedRow = row
            object.changedKeys = []
            object.lifecycle.isInserted = false
            // Relationships were saved from the in-memory objects; they stay materialised.
        }
        for object in deleted {
            registered[object.objectID] = nil
            object.lifecycle.isDeleted = true
        }
        noteUnregistered(deleted.map(\.objectID))
        // Objects that only changed transient values were in pendingUpdated; they are clean now.
        for object in pendingUpdated.values { object.changedKeys = [] }
        pendingInserted = [:]
        pendingUpdated = [:]
        pendingDeleted = [:]
        for object in inserted + updated { object.didSave() }
        for object in deleted { object.didSave() }
        var saved: [AnyHashable: Any] = [NSInsertedObjectsKey: Set(inserted), NSUpdatedObjectsKey: Set(updated), NSDeletedObjectsKey: Set(deleted)]
        if queryGeneration != nil {
            // A pinned context reads what it saved: the generation after the save.
            advanceQueryGeneration()
            saved[NSManagedObjectContextQueryGenerationKey] = queryGenerationToken
        }
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSave, object: self, userInfo: saved)
        let insertedIDs = Set(inserted.map(\.objectID)), updatedIDs = Set(updated.map(\.objectID)), deletedIDs = Set(deleted.map(\.objectID))
        NotificationCenter.default.post(
            name: .NSManagedObjectContextDidSaveObjectIDs, object: self,
            userInfo: [NSInsertedObjectIDsKey: insertedIDs, NSUpdatedObjectIDsKey: updatedIDs, NSDeletedObjectIDsKey: deletedIDs])
        if let coordinator = persistentStoreCoordinator {
            NotificationCenter.default.post(
                name: .coordinatorDidSaveObjectIDs, object: coordinator,
                userInfo: ["context": self, NSInsertedObjectIDsKey: insertedIDs, NSUpdatedObjectIDsKey: updatedIDs, NSDeletedObjectIDsKey: deletedIDs])
        }
        for object in deleted { object.managedObjectContext = nil }
    }
}

extension NSManagedObject {
    /// The object's saved form: every non-transient property as a store value, by slot of the
    /// entity's layout (a layout extending it when the saved row had properties this model lacks,
    /// which are kept). A slot never read since the fetch keeps the row's stored value unconverted.
    func storeRow(version: Int64) throws -> StoreRow {
        guard let id = objectID.storeObjectID else {
            throw coreDataError(NSPersistentStoreSaveError, "\(objectID) has no permanent ID")
        }
        let layout = entity.propertyLayout
        var row: StoreRow
        if let committed = committedRow, committed.layout.extends(layout) {
            row = committed
            row.objectID = id
            row.version = version
        } else if let committed = committedRow {
            // Laid out by name (a row from a store that does not use the model's layouts): keep
            // what it has, then set the model's properties by name below.
            row = committed
            row.objectID = id
            row.version = version
            for name in layout.names where !row.contains(name) { row[name] = .null }
        } else {
            row = StoreRow(objectID: id, version: version, layout: layout, slots: .emptySlots(layout.count))
        }
        let byName = !row.layout.extends(layout)
        let traits = entity.layoutTraits
        let properties = entity.layoutProperties
        for slot in traits.indices where !traits[slot].isTransient {
            let value: StoreValue
            if let type = traits[slot].attributeType {
                if type != .transformableAttributeType {
                    // Converted once: validation already did it, or the row's value is reused.
                    value = attributeValues.storeValue(at: slot, type: type) ?? .null
                } else if let stored = attributeValues.pendingStoredValue(slot) {
                    value = stored
                } else if let attribute = properties[slot] as? NSAttributeDescription {
                    value = try transformedValue(attributeValues[slot: slot], attribute)
                } else {
                    continue
                }
                if byName { row[properties[slot].name] = value } else { row.slots[slot] = value }
                continue
            }
            let property = properties[slot]
            switch property {
            case let relationship as NSRelationshipDescription:
                let name = relationship.name
                guard materialisedRelationships.contains(name) else { continue }
                if relationship.isToMany {
                    value = .references((toManyValues[name] ?? []).filter { !$0.isDeleted }.compactMap { $0.objectID.storeObjectID })
                } else if let destination = toOneValues[name], !destination.isDeleted, let destinationID = destination.objectID.storeObjectID {
                    value = .reference(destinationID)
                } else {
                    value = .null
                }
            default:
                continue
            }
            if byName { row[property.name] = value } else { row.slots[slot] = value }
        }
        return row
    }

    /// The object's attribute values as a store would save them, transient ones left out;
    /// transformable values the transformer cannot turn into `Data` read as ``StoreValue/null``.
    func storeAttributeValues() -> [String: StoreValue] {
        var values: [String: StoreValue] = [:]
        for (slot, attribute) in entity.layoutAttributes.enumerated() {
            guard let attribute, !attribute.isTransient else { continue }
            if attribute.attributeType == .transformableAttributeType {
                values[attribute.name] = (try? transformedValue(attributeValues[slot: slot], attribute)) ?? .null
            } else {
                values[attribute.name] = StoreValue(attributeValue: attributeValues[slot: slot], type: attribute.attributeType) ?? .null
            }
        }
        return values
    }

    /// A transformable value in its stored form: `Data` as is, otherwise through the named
    /// `ValueTransformer` (or secure unarchiving's default, `NSSecureUnarchiveFromData`).
    private func transformedValue(_ value: Any?, _ attribute: NSAttributeDescription) throws -> StoreValue {
        guard let value else { return .null }
        if let data = value as? Data, attribute.valueTransformerName == nil { return .data(data) }
        let name = attribute.valueTransformerName ?? "NSSecureUnarchiveFromData"
        guard let transformer = ValueTransformer.valueTransformer(forName: NSValueTransformerName(rawValue: name)),
              let data = transformer.transformedValue(value) as? Data
        else {
            throw validationError(
                NSManagedObjectValidationError, key: attribute.name, value: value,
                "'\(attribute.name)' of \(entity.name ?? "object") is transformable and its value transformer '\(name)' is not registered or did not produce Data")
        }
        return .data(data)
    }

    /// A stored row as `[key: value]`, relationships as objects of this object's context.
    func snapshot(of row: StoreRow) -> [String: Any] {
        var result: [String: Any] = [:]
        for (name, property) in entity.propertiesByName where !property.isTransient {
            result[name] = storedValue(row[name], of: property) ?? NSNull()
        }
        return result
    }
}
