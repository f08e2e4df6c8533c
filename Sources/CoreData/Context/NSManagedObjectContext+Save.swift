import CoreDataModel
import CoreDataStorage
import Foundation

extension NSManagedObjectContext {
    /// The objects one save writes.
    typealias SaveObjects = (inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject])

    /// What one save writes to each store (in a stable order), and the rows of the inserted then
    /// updated objects as built.
    private typealias StorePlan = (stores: [(store: NSPersistentStore, changes: StoreChangeSet)], rows: [StoreRow])

    /// Saves every insert, update and delete to the stores (or, for a child context, into its parent).
    ///
    /// Steps: `willSave()` on each changed object; validation (deny rules for deletes, required
    /// values, the model's rules and relationship counts for inserts and updates); permanent IDs
    /// for inserted objects; one change set per store; conflicts resolved by ``mergePolicy``; then
    /// the objects take their saved state, `didSave()` runs and `NSManagedObjectContextDidSave` is posted.
    ///
    /// Conflicts with a store (objects changed there since this context read them, uniqueness
    /// constraints) go to the merge policy's `resolve(mergeConflicts:)`. When it returns, the save
    /// retries: with the standard resolutions applied, and, if the policy changed objects, with
    /// what it writes validated and built afresh from them (a conflict on the retry after such
    /// changes fails the save).
    ///
    /// - Throws: `NSError`s in `NSCocoaErrorDomain`: validation codes 1550–1680 (several at once
    ///   as 1560 with `NSDetailedErrorsKey`), `NSManagedObjectMergeError` (133020) with a
    ///   `conflictList` of ``NSMergeConflict``s, `NSManagedObjectConstraintMergeError` (133021),
    ///   store errors 134xxx; or whatever the merge policy throws. A failed save changes nothing
    ///   in the store and leaves the context's changes in place.
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
        var saving = try prepareSave(deriving: true)
        try obtainPermanentIDs(for: saving.inserted)
        var plan = try storePlan(for: saving, coordinator: coordinator)

        var versions: [StoreObjectID: Int64] = [:]
        var resolvedConflicts = false
        var savedStores: Set<ObjectIdentifier> = []
        while let entry = plan.stores.first(where: { !savedStores.contains(ObjectIdentifier($0.store)) }) {
            let saved = try saveResolvingConflicts(entry.changes, to: entry.store, resolved: &resolvedConflicts) {
                // The merge policy changed objects: the save is planned afresh from them. Stores
                // already saved stay saved; what the policy changed in them is not written.
                processPendingChanges()
                saving = try pendingSaveObjects()
                try obtainPermanentIDs(for: saving.inserted)
                plan = try storePlan(for: saving, coordinator: coordinator)
                return plan.stores.first { $0.store === entry.store }?.changes
            }
            versions.merge(saved) { _, new in new }
            savedStores.insert(ObjectIdentifier(entry.store))
        }

        // A resolved conflict may have given objects other IDs or values: then their rows are built afresh.
        finishSave(inserted: saving.inserted, updated: saving.updated, deleted: saving.deleted, versions: versions, rows: resolvedConflicts ? nil : plan.rows)
    }

    /// One change set per store for `saving`, in the order of the stores' identifiers.
    private func storePlan(for saving: SaveObjects, coordinator: NSPersistentStoreCoordinator) throws -> StorePlan {
        let (inserted, updated, deleted) = saving
        // One change set per store, in an array found through a table of places; a run of
        // objects of one store (the usual case) skips the table. Edited in place: a copy taken
        // out and stored back would copy the change set's arrays on every append.
        var changesByStore: [(store: NSPersistentStore, changes: StoreChangeSet)] = []
        var placeOfStore: [ObjectIdentifier: Int] = [:]
        var lastStore: NSPersistentStore?
        var lastPlace = 0
        func add(_ object: NSManagedObject, _ edit: (inout StoreChangeSet) -> Void) throws {
            guard let store = object.objectID.persistentStore ?? coordinator.store(for: object.entity) else {
                throw coreDataError(
                    NSPersistentStoreIncompatibleSchemaError,
                    "no store of the coordinator holds entity '\(object.entity.name ?? "?")' (object \(object.objectID))")
            }
            if store !== lastStore {
                guard !store.isReadOnly else {
                    throw coreDataError(NSPersistentStoreSaveError, "the store \(store.identifier) is read-only; \(object.objectID) can't be saved")
                }
                if let place = placeOfStore[ObjectIdentifier(store)] {
                    lastPlace = place
                } else {
                    lastPlace = changesByStore.count
                    placeOfStore[ObjectIdentifier(store)] = lastPlace
                    changesByStore.append((store, StoreChangeSet()))
                }
                lastStore = store
            }
            edit(&changesByStore[lastPlace].changes)
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

        if changesByStore.contains(where: { ($0.store.engine as? any StoreHistoryRecording)?.recordsHistory == true }) {
            // Persistent history names the properties each update changed (Apple's
            // `updatedProperties`); only a store that records history pays for them.
            var changedNames: [StoreObjectID: [String]] = [:]
            for object in updated {
                if let id = object.objectID.storeObjectID { changedNames[id] = Array(object.storedChangedValues().keys).sorted() }
            }
            let context = historyContext(updatedProperties: changedNames)
            for place in changesByStore.indices { changesByStore[place].changes.history = context }
        }
        return (changesByStore.sorted { $0.store.identifier < $1.store.identifier }, savedRows)
    }

    /// The steps every save starts with, whether it goes to stores or into a parent: the
    /// will-save notification and hooks, derived attributes when `deriving` (a save to the
    /// stores), then validation. Returns what the save writes.
    private func prepareSave(deriving: Bool = false) throws -> SaveObjects {
        NotificationCenter.default.post(name: .NSManagedObjectContextWillSave, object: self)
        for object in pendingInserted.values { object.willSave() }
        for object in pendingUpdated.values { object.willSave() }
        for object in pendingDeleted.values { object.willSave() }
        if deriving { computeDerivedAttributes() }
        return try pendingSaveObjects()
    }

    /// The pending changes, validated: what a save writes.
    private func pendingSaveObjects() throws -> SaveObjects {
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
        // Groups in an array, found through a table of their places: appending through the
        // dictionary's optional subscript cost some 900 instructions an object.
        var groups: [(store: NSPersistentStore, objects: [NSManagedObject])] = []
        var groupOfEntity: [ObjectIdentifier: Int] = [:]
        var lastEntity: NSEntityDescription?
        var lastGroup = 0
        // A discarded object (inserted and deleted before any save) is in no store.
        for object in objects where object.hasTemporaryID && !object.lifecycle.isDiscarded {
            if object.entity !== lastEntity {
                let entityKey = ObjectIdentifier(object.entity)
                if let index = groupOfEntity[entityKey] {
                    lastGroup = index
                } else {
                    guard let store = coordinator.store(for: object.entity), object.entity.name != nil else {
                        throw coreDataError(
                            NSPersistentStoreIncompatibleSchemaError,
                            "no store of the coordinator holds entity '\(object.entity.name ?? "?")'")
                    }
                    lastGroup = groups.count
                    groupOfEntity[entityKey] = lastGroup
                    groups.append((store, []))
                }
                lastEntity = object.entity
            }
            groups[lastGroup].objects.append(object)
        }
        for (store, group) in groups {
            let name = group[0].entity.name ?? ""
            let keys = try mapStoreError { () throws(StoreError) -> [Int64] in
                try store.engine.newPrimaryKeys(entityName: name, count: group.count) { group[$0].storeAttributeValues() }
            }
            guard keys.count == group.count else {
                throw coreDataError(
                    NSPersistentStoreOperationError,
                    "the store \(store.identifier) handed out \(keys.count) permanent IDs for \(group.count) objects of \(name)")
            }
            let number = group[0].entity.entityNumber
            for (object, key) in zip(group, keys) {
                object.objectID = NSManagedObjectID(entity: object.entity, store: store, storeID: StoreObjectID(entity: number, primaryKey: key))
                // Registering under the new ID also removes the temporary ID's entry, if one
                // was made.
                registered[object.objectID] = object
            }
            // The group's store is known: told directly, instead of through noteRegistered,
            // which finds each ID's store again through its weak reference.
            if !isStoreSide, store.observesRegistrations { store.contextDidRegister(group.map(\.objectID)) }
        }
        reportReleasesIfMany()
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

    /// Saves one store's changes; on conflicts asks the merge policy and retries.
    ///
    /// Sets `resolved` when a conflict was resolved (and the saved rows differ from the objects'
    /// state). `rebuild` plans the save afresh from the objects after the policy changed them,
    /// returning this store's changes (`nil` when it has none left).
    private func saveResolvingConflicts(
        _ changes: StoreChangeSet, to store: NSPersistentStore, resolved: inout Bool, rebuild: () throws -> StoreChangeSet?
    ) throws -> [StoreObjectID: Int64] {
        var attempt = changes
        // After the policy changed objects the save retries once, as Apple's does; a conflict
        // then fails it. Rounds the standard policies resolve retry while the store keeps
        // changing under us, a bounded number of times.
        var retryingAfterPolicyChanges = false
        for _ in 0..<8 {
            do {
                return try store.engine.save(attempt)
            } catch .optimisticLockingFailure(let conflicts) {
                let round = MergeConflictRound()
                let list = mergeConflicts(conflicts, in: attempt, store: store, round: round)
                guard !retryingAfterPolicyChanges else { throw NSMergeConflict.mergeError(list) }
                let changedObjects = try askMergePolicy(list)
                let standard = list.compactMap { conflict in
                    round.standardType(for: conflict).flatMap { type in conflict.storeConflict.map { ($0, type) } }
                }
                // Conflicts the policy neither handed to a standard policy nor touched would
                // only conflict again.
                guard changedObjects || standard.count == list.count else { throw NSMergeConflict.mergeError(list) }
                guard var next = try (changedObjects ? rebuild() : Optional(attempt)) else { return [:] }
                for (conflict, type) in standard { resolve(conflict, as: type, in: &next) }
                attempt = next
                retryingAfterPolicyChanges = changedObjects
                resolved = true
            } catch .constraintConflict(let conflicts) {
                let round = MergeConflictRound()
                let list = constraintConflicts(conflicts, in: attempt, store: store, round: round)
                guard !retryingAfterPolicyChanges else { throw NSConstraintConflict.constraintError(list) }
                let changedObjects = try askMergePolicy(list)
                let standard = list.compactMap { conflict in
                    round.standardType(for: conflict).flatMap { type in conflict.storeConflict.map { ($0, type) } }
                }
                guard changedObjects || standard.count == list.count else { throw NSConstraintConflict.constraintError(list) }
                guard var next = try (changedObjects ? rebuild() : Optional(attempt)) else { return [:] }
                // Applied one policy at a time, in the order the policy named them (a subclass
                // may hand some conflicts to one standard policy and the rest to another).
                var types: [NSMergePolicyType] = []
                for (_, type) in standard where !types.contains(type) { types.append(type) }
                for type in types {
                    let group = standard.filter { $0.1 == type }.map(\.0)
                    guard let resolvedSet = try resolve(group, as: type, in: next, store: store, afterPolicyChanges: changedObjects) else {
                        throw NSConstraintConflict.constraintError(list)
                    }
                    next = resolvedSet
                }
                attempt = next
                retryingAfterPolicyChanges = changedObjects
                resolved = true
            } catch {
                throw nsError(from: error)
            }
        }
        throw coreDataError(NSManagedObjectMergeError, "the store kept changing while this context saved; gave up after 8 attempts")
    }

    /// Hands one round of conflicts to the merge policy. Returns whether the policy changed the
    /// context's objects (resolved conflicts by hand), in which case the save is planned afresh.
    private func askMergePolicy(_ list: [Any]) throws -> Bool {
        // Changes made before the policy runs (by willSave()) are announced first, so that any
        // change noted from here on is the policy's.
        processPendingChanges()
        let before = pendingMembership
        try effectiveMergePolicy.resolve(mergeConflicts: list)
        // A refresh without merging changes drops an object from the pending updates without a
        // change notice; the membership catches it.
        return !changeNotice.isEmpty || pendingMembership != before
    }

    private var pendingMembership: [Set<ObjectIdentifier>] {
        [Set(pendingInserted.keys), Set(pendingUpdated.keys), Set(pendingDeleted.keys)]
    }

    /// The registered object a store's ID names in `store`.
    private func savedObject(forStoreID id: StoreObjectID, in store: NSPersistentStore) -> NSManagedObject? {
        if let entity = persistentStoreCoordinator?.managedObjectModel.entitiesByName[id.entityName],
           let object = registered[NSManagedObjectID(entity: entity, store: store, storeID: id)] {
            return object
        }
        return registeredObject(forStoreID: id)
    }

    /// The store's version conflicts as Apple's ``NSMergeConflict``s, snapshots filled.
    private func mergeConflicts(_ conflicts: [StoreVersionConflict], in attempt: StoreChangeSet, store: NSPersistentStore, round: MergeConflictRound) -> [NSMergeConflict] {
        let saving = Dictionary(attempt.updated.map { ($0.objectID, $0) }) { first, _ in first }
        return conflicts.compactMap { conflict in
            guard let object = savedObject(forStoreID: conflict.objectID, in: store) ?? object(forStoreID: conflict.objectID) else { return nil }
            return NSMergeConflict(
                source: object,
                objectSnapshot: saving[conflict.objectID].map { conflictSnapshot(of: $0, entity: object.entity, store: store) },
                cachedSnapshot: object.committedRow.map { conflictSnapshot(of: $0, entity: object.entity, store: store) },
                persistedSnapshot: conflict.storedRow.map { conflictSnapshot(of: $0, entity: object.entity, store: store) },
                storeConflict: conflict, round: round)
        }
    }

    /// The store's uniqueness conflicts as Apple's ``NSConstraintConflict``s.
    private func constraintConflicts(_ conflicts: [StoreConstraintConflict], in attempt: StoreChangeSet, store: NSPersistentStore, round: MergeConflictRound) -> [NSConstraintConflict] {
        let saving = Dictionary((attempt.inserted + attempt.updated).map { ($0.objectID, $0) }) { first, _ in first }
        let model = persistentStoreCoordinator?.managedObjectModel
        return conflicts.map { conflict in
            let conflicting = conflict.objectIDs.compactMap { savedObject(forStoreID: $0, in: store) }.filter { $0.isInserted || $0.hasChanges }
            let snapshots = conflicting.map { object -> [AnyHashable: Any] in
                let snapshot: [String: Any]
                if let row = object.committedRow {
                    snapshot = conflictSnapshot(of: row, entity: object.entity, store: store)
                } else if let id = object.objectID.storeObjectID, let row = saving[id] {
                    snapshot = conflictSnapshot(of: row, entity: object.entity, store: nil)
                } else {
                    snapshot = [:]
                }
                return Dictionary(uniqueKeysWithValues: snapshot.map { (AnyHashable($0.key), $0.value) })
            }
            // The stored object that holds the values comes first, unless both are new.
            let owner = conflict.objectIDs.first.flatMap { saving[$0] == nil ? $0 : nil }
            let databaseSnapshot = owner.flatMap { id -> [String: Any]? in
                guard let entity = model?.entitiesByName[id.entityName], let row = try? store.engine.row(for: id) else { return nil }
                return conflictSnapshot(of: row, entity: entity, store: store)
            }
            return NSConstraintConflict(
                conflict, conflictingObjects: conflicting, conflictingSnapshots: snapshots, databaseSnapshot: databaseSnapshot,
                databaseObject: { [weak self] in
                    guard let self, let owner else { return nil }
                    return self.savedObject(forStoreID: owner, in: store) ?? self.object(forStoreID: owner)
                },
                round: round)
        }
    }

    /// Uniqueness conflicts resolved as the standard policy `policy` says, or `nil` when they
    /// can't be (a conflict of an updated object, or the error policy).
    ///
    /// The newly inserted object gives way to the object that already holds the values (Apple's
    /// behaviour): with object trump and overwrite its values are written over that object's,
    /// with store trump and rollback the stored values stay; either way the in-memory object takes
    /// the existing object's ID, and references to it in the same save follow. After the policy
    /// changed objects (`afterPolicyChanges`), a conflict whose new object is no longer saved
    /// (the policy deleted it) is left alone.
    private func resolve(
        _ conflicts: [StoreConstraintConflict], as policy: NSMergePolicyType, in changes: StoreChangeSet, store: NSPersistentStore, afterPolicyChanges: Bool
    ) throws -> StoreChangeSet? {
        guard policy != .errorMergePolicyType else { return nil }
        var result = changes
        var remap: [StoreObjectID: StoreObjectID] = [:]
        for conflict in conflicts where conflict.objectIDs.count == 2 {
            let owner = conflict.objectIDs[0], newcomer = conflict.objectIDs[1]
            if afterPolicyChanges, remap[newcomer] == nil,
               !result.inserted.contains(where: { $0.objectID == newcomer }), !result.updated.contains(where: { $0.objectID == newcomer }) {
                continue
            }
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
        guard !remap.isEmpty else { return afterPolicyChanges ? result : nil }
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
        let objectWins = policy == .mergeByPropertyObjectTrumpMergePolicyType || policy == .overwriteMergePolicyType
        for (newcomer, owner) in remap { adoptIdentity(of: owner, for: newcomer, in: store, objectWins: objectWins) }
        return result
    }

    /// Gives the in-memory object saved as `newcomer` the identity of `owner`.
    private func adoptIdentity(of owner: StoreObjectID, for newcomer: StoreObjectID, in store: NSPersistentStore, objectWins: Bool) {
        guard let object = registeredObject(forStoreID: newcomer), let entity = persistentStoreCoordinator?.managedObjectModel.entitiesByName[owner.entityName] else { return }
        let ownerID = NSManagedObjectID(entity: entity, store: store, storeID: owner)
        let heldOwner = registered[ownerID] != nil
        // A released owner's entry is reused: its store hears of the release first.
        if registered.holdsReleased(ownerID) { noteUnregistered([ownerID]) }
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

    /// Applies the standard policy `policy` to one version conflict in `result`.
    private func resolve(_ conflict: StoreVersionConflict, as policy: NSMergePolicyType, in result: inout StoreChangeSet) {
        guard policy != .errorMergePolicyType else { return }
        let id = conflict.objectID
        guard let stored = conflict.storedRow else {
            // Deleted by someone else: nothing to update or delete any more.
            result.updated.removeAll { $0.objectID == id }
            result.deleted.removeAll { $0.objectID == id }
            return
        }
        if let index = result.deleted.firstIndex(where: { $0.objectID == id }) {
            if policy == .rollbackMergePolicyType { result.deleted.remove(at: index) } else { result.deleted[index].version = stored.version }
            return
        }
        guard let index = result.updated.firstIndex(where: { $0.objectID == id }) else { return }
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
            return
        }
        result.updated[index] = StoreRow(objectID: id, version: stored.version, values: merged)
    }

    /// A row as a conflict snapshot (Apple's form: attributes by name, `NSNull` for nil; to-one
    /// relationships as object IDs; to-many relationships left out).
    ///
    /// A store that loads relationships lazily leaves them out of its rows; such a to-one is read
    /// from `store` as the context would read it, or without a store (a row not saved yet) is none.
    func conflictSnapshot(of row: StoreRow, entity: NSEntityDescription, store: NSPersistentStore?) -> [String: Any] {
        var result: [String: Any] = [:]
        for (name, property) in entity.propertiesByName where !property.isTransient {
            switch property {
            case let attribute as NSAttributeDescription:
                result[name] = row[name].attributeValue(as: attribute.attributeType) ?? NSNull()
            case let relationship as NSRelationshipDescription where !relationship.isToMany:
                var value = row[name]
                if !row.contains(name), let store {
                    value = (try? store.engine.destinations(of: row.objectID, relationship: name)) ?? .null
                }
                if case .reference(let id) = value, let objectID = objectID(forStoreID: id) {
                    result[name] = objectID
                } else {
                    result[name] = NSNull()
                }
            default:
                continue
            }
        }
        return result
    }

    func registeredObject(forStoreID id: StoreObjectID) -> NSManagedObject? {
        registered.values.first { $0.storeLocation?.id == id }
    }

    /// `rows`, when given, are the objects' rows as saved (inserts then updates), so they need not be built again.
    private func finishSave(inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject], versions: [StoreObjectID: Int64], rows: [StoreRow]?) {
        // `rows` holds the inserted objects' rows, then the updated ones'. The two lists are
        // walked in turn rather than concatenated (a copy and a retain of every object).
        func commit(_ object: NSManagedObject, position: Int) {
            guard let id = object.objectID.storeObjectID else { return }
            let version = versions[id] ?? object.committedRow?.version ?? 1
            var row: StoreRow
            if let rows, position < rows.count, rows[position].objectID == id {
                row = rows[position]
                row.version = version
            } else {
                guard let fresh = try? object.storeRow(version: version) else { return }
                row = fresh
            }
            object.committedRow = row
            object.changedKeys = []
            object.lifecycle.isInserted = false
            // Relationships were saved from the in-memory objects; they stay materialised.
        }
        for (position, object) in inserted.enumerated() { commit(object, position: position) }
        for (offset, object) in updated.enumerated() { commit(object, position: inserted.count + offset) }
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
        for object in inserted { object.didSave() }
        for object in updated { object.didSave() }
        for object in deleted { object.didSave() }
        var saved: [AnyHashable: Any] = [
            NSInsertedObjectsKey: Set(sparselyFrom: inserted), NSUpdatedObjectsKey: Set(sparselyFrom: updated), NSDeletedObjectsKey: Set(sparselyFrom: deleted),
        ]
        if queryGeneration != nil {
            // A pinned context reads what it saved: the generation after the save.
            advanceQueryGeneration()
            saved[NSManagedObjectContextQueryGenerationKey] = queryGenerationToken
        }
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSave, object: self, userInfo: saved)
        let insertedIDs = Set(sparselyFrom: inserted.lazy.map(\.objectID))
        let updatedIDs = Set(sparselyFrom: updated.lazy.map(\.objectID)), deletedIDs = Set(sparselyFrom: deleted.lazy.map(\.objectID))
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
        // Set when the row starts as the object's converted values (an insert's usual case):
        // only relationships are left to fill.
        var attributesInRow = false
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
        } else if let converted = attributeValues.storedValuesAsRowSlots() {
            row = StoreRow(objectID: id, version: version, layout: layout, slots: converted)
            attributesInRow = true
        } else {
            row = StoreRow(objectID: id, version: version, layout: layout, slots: .emptySlots(layout.count))
        }
        let byName = !row.layout.extends(layout)
        let traits = entity.layoutTraits
        let properties = entity.layoutProperties
        for slot in traits.indices where !traits[slot].isTransient {
            let value: StoreValue
            if let type = traits[slot].attributeType {
                if attributesInRow { continue }
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
                // A discarded destination (inserted and deleted before any save) has no row to
                // point at: left out, as a deleted one is.
                if relationship.isToMany {
                    value = .references((toManyValues[name] ?? []).filter { !$0.lifecycle.isDeletedOrDiscarded }.compactMap { $0.objectID.storeObjectID })
                } else if let destination = toOneValues[name], !destination.lifecycle.isDeletedOrDiscarded,
                          let destinationID = destination.objectID.storeObjectID {
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

    /// A transformable value in its stored form: archived by Apple's unarchiving transformers in
    /// reverse (`NSSecureUnarchiveFromData` for an attribute that names no transformer), else
    /// through the named `ValueTransformer` forwards.
    private func transformedValue(_ value: Any?, _ attribute: NSAttributeDescription) throws -> StoreValue {
        guard let value else { return .null }
        if let archived = try archivedTransformableValue(value, attribute) { return archived }
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
}
