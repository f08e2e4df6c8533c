import Foundation

/// The kinds of standard merge policy, with Apple's raw values.
///
/// Matches Apple's `NSMergePolicyType` (`NSErrorMergePolicyType` … `NSRollbackMergePolicyType`
/// in Objective-C).
public enum NSMergePolicyType: UInt, Sendable {
    /// Fail the save on any conflict (the default).
    case errorMergePolicyType = 0x00
    /// Keep the store's value for each conflicting property, the context's for the rest.
    case mergeByPropertyStoreTrumpMergePolicyType = 0x01
    /// Keep the context's value for each conflicting property.
    case mergeByPropertyObjectTrumpMergePolicyType = 0x02
    /// Write the context's objects over the store's whole.
    case overwriteMergePolicyType = 0x03
    /// Throw away the context's conflicting changes.
    case rollbackMergePolicyType = 0x04
}

/// Apple's Objective-C spellings of the policy kinds, for code ported from Objective-C.
public let NSErrorMergePolicyType = NSMergePolicyType.errorMergePolicyType
public let NSMergeByPropertyStoreTrumpMergePolicyType = NSMergePolicyType.mergeByPropertyStoreTrumpMergePolicyType
public let NSMergeByPropertyObjectTrumpMergePolicyType = NSMergePolicyType.mergeByPropertyObjectTrumpMergePolicyType
public let NSOverwriteMergePolicyType = NSMergePolicyType.overwriteMergePolicyType
public let NSRollbackMergePolicyType = NSMergePolicyType.rollbackMergePolicyType

/// How a save resolves conflicts with changes already in the store.
///
/// Matches Apple's `NSMergePolicy`: the five standard policies, and a class to subclass for a
/// policy of one's own. When a save to a store finds conflicts (objects another context changed
/// since this one read them, or objects that break a uniqueness constraint), the context calls
/// ``resolve(mergeConflicts:)`` on its `mergePolicy` with the list. The default implementation
/// hands the ``NSMergeConflict``s to ``resolve(optimisticLockingConflicts:)`` and the
/// ``NSConstraintConflict``s to ``resolve(constraintConflicts:)``, whose default implementations
/// apply the standard policy of ``mergeType``.
///
/// A subclass overrides any of the three. It may call `super` (the standard behaviour of its
/// `mergeType` for the conflicts it passes), resolve conflicts itself by changing objects of the
/// context (for a stale object, `refresh(_:mergeChanges:)` it and set the values it wants; for a
/// uniqueness conflict, delete or change the new object, or update `databaseObject`), or throw.
/// When the policy returns, the save validates again and retries; a conflict on that retry fails
/// the save with the standard error. When the policy throws, the save throws that error and
/// writes nothing to that store; the context keeps its changes.
///
/// Threading: the context calls the policy on its own queue, in the middle of `save()`; use the
/// conflicts' objects there and only there, and don't save the context from inside the policy.
/// One policy may serve several contexts at once, so a subclass keeps no unprotected mutable
/// state; being `@unchecked Sendable`, a subclass restates that conformance (Swift 6 asks it to).
open class NSMergePolicy: NSObject, @unchecked Sendable {
    /// The earlier spelling of ``NSMergePolicyType``, kept for code that names it so.
    public typealias MergePolicyType = NSMergePolicyType

    /// The standard behaviour the default implementations apply.
    public let mergeType: NSMergePolicyType

    /// Creates a policy that resolves conflicts as the standard policy of `type` does (a
    /// subclass's designated initializer calls it with the behaviour `super` should give).
    public init(merge type: NSMergePolicyType) {
        self.mergeType = type
        super.init()
    }

    /// Resolves one round of conflicts found by a save.
    ///
    /// The default implementation passes the ``NSMergeConflict``s (optimistic locking) to
    /// ``resolve(optimisticLockingConflicts:)``, then the ``NSConstraintConflict``s (uniqueness)
    /// to ``resolve(constraintConflicts:)``; anything else in the list is ignored.
    ///
    /// - Parameter list: the conflicts, ``NSMergeConflict`` and ``NSConstraintConflict`` objects.
    /// - Throws: whatever the specific methods throw; the save then fails with that error.
    open func resolve(mergeConflicts list: [Any]) throws {
        let versionConflicts = list.compactMap { $0 as? NSMergeConflict }
        let constraintConflicts = list.compactMap { $0 as? NSConstraintConflict }
        if !versionConflicts.isEmpty { try resolve(optimisticLockingConflicts: versionConflicts) }
        if !constraintConflicts.isEmpty { try resolve(constraintConflicts: constraintConflicts) }
    }

    /// Resolves objects the store changed or deleted since the context read them.
    ///
    /// The default implementation applies the standard policy of ``mergeType`` to the conflicts
    /// passed (and only those): with `.errorMergePolicyType` it throws; otherwise the save writes
    /// the merge that policy describes. Conflicts that did not come from a save (made with the
    /// public initializer) have nothing to apply to and are left as they are.
    ///
    /// - Throws: with `.errorMergePolicyType`, `NSManagedObjectMergeError` (133020) whose
    ///   `conflictList` (`NSPersistentStoreSaveConflictsErrorKey`) holds `list`.
    open func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        guard mergeType != .errorMergePolicyType else { throw NSMergeConflict.mergeError(list) }
        for conflict in list { conflict.round?.resolveAsStandard(conflict, type: mergeType) }
    }

    /// Resolves objects that break a uniqueness constraint.
    ///
    /// The default implementation applies the standard policy of ``mergeType`` to the conflicts
    /// passed: with `.errorMergePolicyType` it throws; otherwise the new object gives way to the
    /// one already stored and takes its identity, the values kept being the object's
    /// (object trump, overwrite) or the store's (store trump, rollback).
    ///
    /// - Throws: with `.errorMergePolicyType`, `NSManagedObjectConstraintMergeError` (133021)
    ///   whose `conflictList` holds `list`.
    open func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        guard mergeType != .errorMergePolicyType else { throw NSConstraintConflict.constraintError(list) }
        for conflict in list { conflict.round?.resolveAsStandard(conflict, type: mergeType) }
    }

    /// The standard policy that fails a save on any conflict (a context's default).
    public static let error = NSMergePolicy(merge: .errorMergePolicyType)
    /// The standard policy that keeps the store's value for each property both sides changed.
    public static let mergeByPropertyStoreTrump = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    /// The standard policy that keeps the context's value for each property it changed.
    public static let mergeByPropertyObjectTrump = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    /// The standard policy that writes the context's objects whole over the store's.
    public static let overwrite = NSMergePolicy(merge: .overwriteMergePolicyType)
    /// The standard policy that drops the context's conflicting changes for the store's.
    public static let rollback = NSMergePolicy(merge: .rollbackMergePolicyType)
}

/// Apple's global spellings of the standard policies (`context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy`).
public let NSErrorMergePolicy: NSMergePolicy = .error
public let NSMergeByPropertyStoreTrumpMergePolicy: NSMergePolicy = .mergeByPropertyStoreTrump
public let NSMergeByPropertyObjectTrumpMergePolicy: NSMergePolicy = .mergeByPropertyObjectTrump
public let NSOverwriteMergePolicy: NSMergePolicy = .overwrite
public let NSRollbackMergePolicy: NSMergePolicy = .rollback

extension NSManagedObjectContext {
    /// The policy a save consults: the context's, or the error policy when `mergePolicy` holds
    /// something that is not an `NSMergePolicy` (as Apple's, which expects one).
    var effectiveMergePolicy: NSMergePolicy {
        (mergePolicy as? NSMergePolicy) ?? .error
    }
}
