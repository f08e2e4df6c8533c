import CoreDataModel
import CoreDataStorage
import Foundation

/// One optimistic-locking conflict found at save: an object the store changed or deleted since
/// the saving context read it.
///
/// Matches Apple's `NSMergeConflict`. A save hands these to its merge policy
/// (``NSMergePolicy/resolve(optimisticLockingConflicts:)``); the error policy's error lists them
/// under `conflictList` (`NSPersistentStoreSaveConflictsErrorKey`) of an
/// `NSManagedObjectMergeError`.
///
/// The snapshots are Apple's: attribute values by name (`NSNull` for nil) and to-one
/// relationships as `NSManagedObjectID`s (`NSNull` for none); to-many relationships are left
/// out, to be read from the store as needed.
///
/// Threading: the source object belongs to the saving context; use it on that context's queue.
open class NSMergeConflict: NSObject, @unchecked Sendable {
    /// The object whose save conflicted.
    public let sourceObject: NSManagedObject
    /// The object's values as the save would write them; `nil` when the save deletes the object.
    public let objectSnapshot: [String: Any]?
    /// The object's values as the context last read them (what the save expected the store to hold).
    public let cachedSnapshot: [String: Any]?
    /// The object's values in the store now; `nil` when the object was deleted there.
    public let persistedSnapshot: [String: Any]?
    /// The version the store has now (0 when the object was deleted there).
    public let newVersionNumber: Int
    /// The version the context read.
    public let oldVersionNumber: Int

    /// The store's record of the conflict, for a conflict a save found.
    let storeConflict: StoreVersionConflict?
    /// The round of the save that found it, where the standard policies note what they resolve.
    weak var round: MergeConflictRound?

    /// Creates a conflict for `srcObject` (Apple's initializer), its object snapshot taken from
    /// the object's current values.
    ///
    /// A conflict made this way belongs to no save: the standard policies have nothing to apply
    /// it to. Call on the object's context's queue.
    public init(
        source srcObject: NSManagedObject, newVersion newvers: Int, oldVersion oldvers: Int,
        cachedSnapshot cachesnap: [String: Any]?, persistedSnapshot persnap: [String: Any]?
    ) {
        self.sourceObject = srcObject
        self.objectSnapshot = srcObject.currentConflictSnapshot()
        self.cachedSnapshot = cachesnap
        self.persistedSnapshot = persnap
        self.newVersionNumber = newvers
        self.oldVersionNumber = oldvers
        self.storeConflict = nil
        super.init()
    }

    init(
        source: NSManagedObject, objectSnapshot: [String: Any]?, cachedSnapshot: [String: Any]?, persistedSnapshot: [String: Any]?,
        storeConflict: StoreVersionConflict, round: MergeConflictRound
    ) {
        self.sourceObject = source
        self.objectSnapshot = objectSnapshot
        self.cachedSnapshot = cachedSnapshot
        self.persistedSnapshot = persistedSnapshot
        self.newVersionNumber = Int(storeConflict.storedRow?.version ?? 0)
        self.oldVersionNumber = Int(storeConflict.expectedVersion)
        self.storeConflict = storeConflict
        self.round = round
        super.init()
    }

    open override var description: String {
        "<NSMergeConflict \(sourceObject.objectID) old version \(oldVersionNumber) new version \(newVersionNumber)>"
    }

    /// The error policy's error: `NSManagedObjectMergeError` listing the conflicts.
    static func mergeError(_ list: [NSMergeConflict]) -> NSError {
        let names = list.map { $0.storeConflict?.objectID.description ?? $0.sourceObject.objectID.description }
        return coreDataError(
            NSManagedObjectMergeError,
            "Could not merge changes: \(list.count) object\(list.count == 1 ? " was" : "s were") changed in the store since this context read \(list.count == 1 ? "it" : "them") ("
                + names.joined(separator: ", ") + ")",
            [NSPersistentStoreSaveConflictsErrorKey: list])
    }
}

/// A uniqueness-constraint conflict found at save: objects whose values for a constraint are equal.
///
/// Matches Apple's `NSConstraintConflict`. A save hands these to its merge policy
/// (``NSMergePolicy/resolve(constraintConflicts:)``); the error policy's error lists them under
/// `conflictList` of an `NSManagedObjectConstraintMergeError`. Snapshots are as
/// ``NSMergeConflict``'s.
///
/// Threading: the objects belong to the saving context; use them on that context's queue.
open class NSConstraintConflict: NSObject, @unchecked Sendable {
    /// The properties of the constraint.
    public let constraint: [String]
    /// The objects of the saving context that share the values (new or changed ones).
    public let conflictingObjects: [NSManagedObject]
    /// The original values of each of ``conflictingObjects``, in the same order: the values last
    /// read from the store, or for a new object the values the save would write.
    public let conflictingSnapshots: [[AnyHashable: Any]]
    /// The values of the stored object that already holds the constraint's values; `nil` when
    /// the conflict is between objects of the same save.
    public let databaseSnapshot: [String: Any]?
    /// The shared values by property name.
    public let constraintValues: [String: Any]

    /// The stored object that already holds the values, in the saving context; `nil` when the
    /// conflict is between objects of the same save.
    ///
    /// Made (as a fault, unless the context holds the object already) when first read, so that a
    /// policy that never looks at it leaves the context as it was.
    public var databaseObject: NSManagedObject? {
        if case .pending(let make) = databaseObjectState {
            databaseObjectState = .made(make())
        }
        if case .made(let object) = databaseObjectState { return object }
        return nil
    }

    private enum DatabaseObjectState {
        case made(NSManagedObject?)
        case pending(() -> NSManagedObject?)
    }

    private var databaseObjectState: DatabaseObjectState

    /// The store's record of the conflict, for a conflict a save found.
    let storeConflict: StoreConstraintConflict?
    /// The round of the save that found it, where the standard policies note what they resolve.
    weak var round: MergeConflictRound?

    /// Creates a conflict (Apple's initializer); the constraint values are read from the first
    /// conflicting object.
    ///
    /// A conflict made this way belongs to no save: the standard policies have nothing to apply
    /// it to. Call on the objects' context's queue.
    public init(
        constraint contraint: [String], database databaseObject: NSManagedObject?, databaseSnapshot: [AnyHashable: Any]?,
        conflicting conflictingObjects: [NSManagedObject], conflictingSnapshots: [Any]
    ) {
        self.constraint = contraint
        self.databaseObjectState = .made(databaseObject)
        self.databaseSnapshot = databaseSnapshot.map { snapshot in
            Dictionary(snapshot.compactMap { key, value in (key.base as? String).map { ($0, value) } }) { first, _ in first }
        }
        self.conflictingObjects = conflictingObjects
        self.conflictingSnapshots = conflictingSnapshots.compactMap { $0 as? [AnyHashable: Any] }
        self.constraintValues = NSConstraintConflict.values(of: contraint, in: conflictingObjects.first ?? databaseObject)
        self.storeConflict = nil
        super.init()
    }

    init(
        _ conflict: StoreConstraintConflict, conflictingObjects: [NSManagedObject], conflictingSnapshots: [[AnyHashable: Any]],
        databaseSnapshot: [String: Any]?, databaseObject: @escaping () -> NSManagedObject?, round: MergeConflictRound
    ) {
        self.constraint = conflict.constraint
        self.conflictingObjects = conflictingObjects
        self.conflictingSnapshots = conflictingSnapshots
        self.databaseSnapshot = databaseSnapshot
        self.databaseObjectState = .pending(databaseObject)
        self.constraintValues = NSConstraintConflict.values(of: conflict.constraint, in: conflictingObjects.first)
        self.storeConflict = conflict
        self.round = round
        super.init()
    }

    private static func values(of constraint: [String], in object: NSManagedObject?) -> [String: Any] {
        guard let object else { return [:] }
        var values: [String: Any] = [:]
        for key in constraint { values[key] = object.primitiveValue(forKey: key) ?? NSNull() }
        return values
    }

    open override var description: String {
        "<NSConstraintConflict (\(constraint.joined(separator: ", "))) \(conflictingObjects.map(\.objectID))>"
    }

    /// The error policy's error: `NSManagedObjectConstraintMergeError` listing the conflicts.
    static func constraintError(_ list: [NSConstraintConflict]) -> NSError {
        let names = list.map { conflict in
            let entity = conflict.storeConflict?.entityName ?? conflict.conflictingObjects.first?.entity.name ?? "?"
            return "\(entity)(\(conflict.constraint.joined(separator: ", ")))"
        }
        return coreDataError(
            NSManagedObjectConstraintMergeError,
            "uniqueness constraint violated: " + names.joined(separator: "; "),
            [NSPersistentStoreSaveConflictsErrorKey: list])
    }
}

/// One round of conflicts a save hands to its merge policy, and which of them the policy left to
/// a standard policy (by calling `super`, or a standard policy's own methods).
///
/// The standard resolutions are noted, not applied on the spot: the save applies them once the
/// policy returns, to what it writes then, so that changes the policy makes to objects count
/// whether it makes them before or after calling `super`.
final class MergeConflictRound {
    private var standardTypes: [ObjectIdentifier: NSMergePolicyType] = [:]

    /// Notes that `conflict` is to be resolved as the standard policy of `type` resolves it.
    func resolveAsStandard(_ conflict: NSObject, type: NSMergePolicyType) {
        standardTypes[ObjectIdentifier(conflict)] = type
    }

    /// The standard policy noted for `conflict`, if any.
    func standardType(for conflict: NSObject) -> NSMergePolicyType? {
        standardTypes[ObjectIdentifier(conflict)]
    }
}

extension NSManagedObject {
    /// The object's current values as a conflict snapshot.
    func currentConflictSnapshot() -> [String: Any] {
        var result: [String: Any] = [:]
        for (name, property) in entity.propertiesByName where !property.isTransient {
            switch property {
            case is NSAttributeDescription:
                result[name] = currentValue(of: property) ?? NSNull()
            case let relationship as NSRelationshipDescription where !relationship.isToMany:
                result[name] = (currentValue(of: relationship) as? NSManagedObject)?.objectID ?? NSNull()
            default:
                continue
            }
        }
        return result
    }
}

extension NSManagedObjectContext {
    /// The object ID for a store's ID, without registering an object for it.
    func objectID(forStoreID id: StoreObjectID) -> NSManagedObjectID? {
        guard let coordinator = persistentStoreCoordinator,
              let entity = coordinator.managedObjectModel.entitiesByName[id.entityName],
              let store = coordinator.store(for: entity)
        else { return nil }
        return NSManagedObjectID(entity: entity, store: store, storeID: id)
    }
}
