import CoreDataModel
import Foundation

/// A property's value as undo puts it back: read and written in the object's own storage, so
/// that putting it back neither runs accessors nor touches the inverse (whose own change is
/// recorded, and put back, on the other object).
enum UndoValue {
    case attribute(Any?)
    case toOne(NSManagedObject?)
    case toMany([NSManagedObject])
}

/// The changes a context made since it last registered with its undo manager, kept as what
/// undoes them: for each object, whether it was in the context before the first insert or delete
/// of it, and each changed property's value before its first change. Later changes to the same
/// property add nothing, so a run of edits costs one entry per property.
struct UndoRecord {
    struct Entry {
        let object: NSManagedObject
        /// Whether the object was in the context (inserted or registered, not deleted) before; `nil`
        /// when it was neither inserted nor deleted.
        var existed: Bool?
        var values: [String: UndoValue] = [:]
    }

    private(set) var entries: [Entry] = []
    private var positions: [ObjectIdentifier: Int] = [:]

    var isEmpty: Bool { entries.isEmpty }

    /// The position of `object`'s entry, made when missing.
    mutating func position(of object: NSManagedObject) -> Int {
        if let position = positions[ObjectIdentifier(object)] { return position }
        entries.append(Entry(object: object))
        positions[ObjectIdentifier(object)] = entries.count - 1
        return entries.count - 1
    }

    mutating func noteExistence(_ existed: Bool, of object: NSManagedObject) {
        let position = position(of: object)
        if entries[position].existed == nil { entries[position].existed = existed }
    }

    /// Keeps the value `read` gives unless one is kept for `key` already (the oldest wins).
    mutating func noteValue(of object: NSManagedObject, key: String, _ read: () -> UndoValue?) {
        let position = position(of: object)
        guard entries[position].values[key] == nil, let value = read() else { return }
        entries[position].values[key] = value
    }
}

// Undo is recorded where the object graph changes (the storage writes of NSManagedObject and the
// context's insert and delete) rather than in each accessor, so every path that changes a value
// (key-value coding, @Managed, primitive values, inverse maintenance, delete rules, a child's
// save into its parent) is undoable.
extension NSManagedObjectContext {
    /// Whether `object` is one of the context's objects now: registered here and not deleted.
    private func holds(_ object: NSManagedObject) -> Bool {
        registered[object.objectID] === object && !object.isDeleted
    }

    private var recordsUndo: Bool {
        tracksUndo && undoSuspensions == 0 && undoManager?.isUndoRegistrationEnabled == true
    }

    /// Records whether `object` is in the context, before an insert or delete changes that.
    func recordUndoExistence(of object: NSManagedObject) {
        guard recordsUndo else { return }
        undoRecord.noteExistence(holds(object), of: object)
    }

    /// Records `object`'s value for `key`, before it changes.
    func recordUndoValue(of object: NSManagedObject, key: String) {
        guard recordsUndo else { return }
        undoRecord.noteValue(of: object, key: key) {
            object.entity.propertiesByName[key].flatMap(object.undoValue(of:))
        }
    }

    /// Registers the recorded changes as one undo operation, then ends the manager's event group.
    ///
    /// With ``UndoManager/groupsByEvent`` off and no group open there is nowhere to register
    /// (Apple raises): the changes wait for the next group the caller opens.
    func registerPendingUndo() {
        guard tracksUndo, let undoManager else { return }
        isRegisteringUndo = true
        defer { isRegisteringUndo = false }
        if !undoRecord.isEmpty, undoManager.groupsByEvent || undoManager.groupingLevel > 0 {
            let record = undoRecord
            undoRecord = UndoRecord()
            undoManager.registerUndo(withTarget: self) { context in context.applyUndo(record) }
        }
        undoManager.endEventGroup()
    }

    /// Puts back what `record` kept. The changes that makes are recorded as they happen and
    /// registered at the end, so the manager (undoing or redoing) files them as the way back.
    private func applyUndo(_ record: UndoRecord) {
        assertOnQueue()
        let unregistered = undoRecord
        undoRecord = UndoRecord()
        // Objects come back before their values are set, so the values land on registered
        // objects (an object out of the context would be taken for an updated one); objects leave
        // after, once what points at them has been put back.
        for entry in record.entries where entry.existed == true && !holds(entry.object) {
            bringBack(entry.object)
        }
        for entry in record.entries where registered[entry.object.objectID] === entry.object {
            for (key, value) in entry.values { entry.object.restoreForUndo(key, value) }
        }
        for entry in record.entries where entry.existed == false && holds(entry.object) {
            takeAway(entry.object)
        }
        processPendingChanges()
        undoRecord = unregistered
    }

    /// Undoes a delete or an un-insert: a pending delete is cancelled; an object no longer
    /// registered (un-inserted, or deleted and saved) is inserted again, without `awakeFromInsert`.
    private func bringBack(_ object: NSManagedObject) {
        recordUndoExistence(of: object)
        let key = ObjectIdentifier(object)
        if object.isDeleted, registered[object.objectID] === object {
            object.lifecycle.isDeleted = false
            pendingDeleted[key] = nil
            if object.hasChangedKeys { pendingUpdated[key] = object }
            noteObjectsChanged(inserted: [object])
            return
        }
        // Another object took the ID meanwhile (fetched again after the delete was saved).
        if let holder = registered[object.objectID], holder !== object { return }
        object.managedObjectContext = self
        object.lifecycle.isDeleted = false
        object.lifecycle.isInserted = true
        object.lifecycle.isDiscarded = false
        // A released object's entry is reused: its store hears of the release first.
        if registered.holdsReleased(object.objectID) { noteUnregistered([object.objectID]) }
        registered[object.objectID] = object
        pendingInserted[key] = object
        noteRegistered([object.objectID])
        noteObjectsChanged(inserted: [object])
    }

    /// Undoes an insert: an unsaved object leaves the context (not inserted, not registered, as
    /// a delete before any save leaves it); a saved one becomes a pending delete. Delete rules do
    /// not run: what they would change is put back from the record.
    private func takeAway(_ object: NSManagedObject) {
        recordUndoExistence(of: object)
        let key = ObjectIdentifier(object)
        pendingUpdated[key] = nil
        if object.isInserted {
            discard(object)
        } else {
            object.lifecycle.isDeleted = true
            pendingDeleted[key] = object
        }
        noteObjectsChanged(deleted: [object])
    }

    /// Forgets what is recorded and removes the context's operations from its undo manager.
    func removeUndoActions() {
        undoRecord = UndoRecord()
        undoManager?.removeAllActions(withTarget: self)
    }

    /// Follows the undo manager's checkpoints, at which Apple's context processes its changes.
    func observeUndoCheckpoints() {
        if let undoCheckpointObserver { NotificationCenter.default.removeObserver(undoCheckpointObserver) }
        undoCheckpointObserver = nil
        guard let undoManager else { return }
        undoCheckpointObserver = NotificationCenter.default.addObserver(
            forName: .NSUndoManagerCheckpoint, object: undoManager, queue: nil
        ) { [weak self] _ in
            // A checkpoint from another queue (a manager shared with a context of another queue)
            // cannot be about this context's changes, which are made on its own queue.
            guard let self, self.isOnQueue, !self.isRegisteringUndo else { return }
            self.processPendingChanges()
        }
    }
}

extension NSManagedObject {
    /// Records the value of `key` for undo; called right before the value changes.
    @inline(__always)
    func willChangeForUndo(_ key: String) {
        // Every change of a modeled property passes here first: observers hear of it here.
        if let observation { observation.willChange(key, of: self) }
        recordForUndo(key, in: managedObjectContext)
    }

    /// The undo half of ``willChangeForUndo(_:)``, with the object's context already loaded.
    @inline(__always)
    func recordForUndo(_ key: String, in context: NSManagedObjectContext?) {
        guard let context, context.tracksUndo else { return }
        context.recordUndoValue(of: self, key: key)
    }

    /// The value of `property` now, as undo would put it back.
    func undoValue(of property: NSPropertyDescription) -> UndoValue? {
        switch property {
        case let relationship as NSRelationshipDescription:
            materialise(relationship)
            return relationship.isToMany ? .toMany(toManyValues[relationship.name] ?? []) : .toOne(toOneValues[relationship.name])
        case is NSAttributeDescription:
            return .attribute(attributeValues[property.name])
        default:
            return nil
        }
    }

    /// Puts back a value undo kept, as a change: recorded for redo and noted like any other.
    func restoreForUndo(_ key: String, _ value: UndoValue) {
        fireFaultIfNeeded()
        if let relationship = entity.relationshipsByName[key] { materialise(relationship) }
        willChangeForUndo(key)
        switch value {
        case .attribute(let attribute):
            attributeValues[key] = attribute
            if let slot = entity.slotTable.layout.slot(of: key), slot < 64 {
                noteChange(slot: slot)
                return
            }
        case .toOne(let destination):
            toOneValues[key] = destination
        case .toMany(let destinations):
            toManyValues[key] = destinations
        }
        noteChange(key)
    }
}
