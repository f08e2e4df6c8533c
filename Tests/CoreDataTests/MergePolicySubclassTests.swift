import CoreData
import Foundation
import XCTest

/// A policy that notes every call and then does what `super` does.
private final class RecordingPolicy: NSMergePolicy, @unchecked Sendable {
    var mergeCalls: [[Any]] = []
    var lockingCalls: [[NSMergeConflict]] = []
    var constraintCalls: [[NSConstraintConflict]] = []
    /// What the constraint conflicts' `databaseObject` was while the policy ran.
    var databaseObjectIDs: [NSManagedObjectID?] = []

    override func resolve(mergeConflicts list: [Any]) throws {
        mergeCalls.append(list)
        try super.resolve(mergeConflicts: list)
    }

    override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        lockingCalls.append(list)
        try super.resolve(optimisticLockingConflicts: list)
    }

    override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        constraintCalls.append(list)
        databaseObjectIDs += list.map { $0.databaseObject?.objectID }
        try super.resolve(constraintConflicts: list)
    }
}

/// A subclass that overrides nothing: it must behave as the standard policy of its type.
private final class PlainSubclass: NSMergePolicy, @unchecked Sendable {}

/// Resolves stale objects by hand: re-reads the object (keeping its changes) and sets a value
/// computed from both sides, without calling `super`.
private final class HandLockingPolicy: NSMergePolicy, @unchecked Sendable {
    var calls = 0
    let resolution: (NSMergeConflict) -> Void

    init(_ resolution: @escaping (NSMergeConflict) -> Void) {
        self.resolution = resolution
        super.init(merge: .errorMergePolicyType)
    }

    override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        calls += 1
        list.forEach(resolution)
    }
}

/// Resolves uniqueness conflicts by hand, without calling `super`.
private final class HandConstraintPolicy: NSMergePolicy, @unchecked Sendable {
    var calls = 0
    let resolution: (NSConstraintConflict) -> Void

    init(_ resolution: @escaping (NSConstraintConflict) -> Void) {
        self.resolution = resolution
        super.init(merge: .errorMergePolicyType)
    }

    override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        calls += 1
        list.forEach(resolution)
    }
}

private struct PolicyGaveUp: Error, Equatable {
    var reason: String
}

/// A policy that refuses every conflict with an error of its own.
private final class ThrowingPolicy: NSMergePolicy, @unchecked Sendable {
    override func resolve(mergeConflicts list: [Any]) throws {
        throw PolicyGaveUp(reason: "\(list.count) conflicts")
    }
}

/// A policy that hands stale objects to the rollback policy and uniqueness conflicts to object trump.
private final class DelegatingPolicy: NSMergePolicy, @unchecked Sendable {
    override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        try NSMergePolicy.rollback.resolve(optimisticLockingConflicts: list)
    }
}

/// Custom merge policies (`NSMergePolicy` subclasses) as Apple's: save calls the overrides with
/// real conflicts, `super` gives the standard behaviour, a policy may resolve by hand or throw.
final class MergePolicySubclassTests: XCTestCase {
    /// Uniqueness constraints are enforced by the store kinds the conformance suite runs its
    /// uniqueness scenario on (not by the user incremental store).
    private func forEachUniquenessStore(file: StaticString = #filePath, line: UInt = #line, _ body: (StoreKind, NSPersistentContainer) throws -> Void) {
        forEachStore(file: file, line: line, function: "testUniquenessConstraintConflict()", body)
    }

    /// An author saved with rating 1; `reader` (with `policy`) changed its rating to 2 while
    /// another context saved rating 4 and a birth date. Returns the reader and its object.
    private func staleAuthor(_ container: NSPersistentContainer, policy: NSMergePolicy, name: String = "Stale") throws -> (NSManagedObjectContext, NSManagedObject) {
        let writer = container.newBackgroundContext()
        let reader = container.newBackgroundContext()
        reader.mergePolicy = policy
        let id = try writer.performAndWait { () throws -> NSManagedObjectID in
            let author = writer.make("Author", ["name": name, "rating": Int16(1)])
            try writer.save()
            return author.objectID
        }
        let mine = try reader.performAndWait { () throws -> NSManagedObject in
            let object = try reader.existingObject(with: id)
            object.setValue(Int16(2), forKey: "rating")
            return object
        }
        try writer.performAndWait {
            let theirs = try writer.existingObject(with: id)
            theirs.setValue(Int16(4), forKey: "rating")
            theirs.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "born")
            try writer.save()
        }
        return (reader, mine)
    }

    private func stored(_ container: NSPersistentContainer, _ id: NSManagedObjectID) throws -> (rating: Int16?, born: Date?) {
        let check = container.newBackgroundContext()
        return try check.performAndWait {
            let object = try check.existingObject(with: id)
            return (object.value(forKey: "rating") as? Int16, object.value(forKey: "born") as? Date)
        }
    }

    private func storedAuthors(_ container: NSPersistentContainer, named name: String) throws -> [(rating: Int16?, id: NSManagedObjectID)] {
        let check = container.newBackgroundContext()
        return try check.performAndWait {
            try check.all("Author", where: "name == %@", name).map { (rating: $0.value(forKey: "rating") as? Int16, id: $0.objectID) }
        }
    }

    /// An author "name" saved with rating 1, then a new author of the same name with rating 5
    /// inserted in a fresh context with `policy`. Returns the context, the new object and the
    /// saved one's ID.
    private func duplicateAuthor(_ container: NSPersistentContainer, policy: NSMergePolicy, name: String) throws -> (NSManagedObjectContext, NSManagedObject, NSManagedObjectID) {
        let first = container.newBackgroundContext()
        let existingID = try first.performAndWait { () throws -> NSManagedObjectID in
            let existing = first.make("Author", ["name": name, "rating": Int16(1)])
            try first.save()
            return existing.objectID
        }
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        let newcomer = context.performAndWait { context.make("Author", ["name": name, "rating": Int16(5)]) }
        return (context, newcomer, existingID)
    }

    // MARK: Optimistic locking

    func testLockingConflictReachesTheOverridesWithItsSnapshots() {
        forEachStore { kind, container in
            let policy = RecordingPolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
            let (context, mine) = try staleAuthor(container, policy: policy)
            try context.performAndWait { try context.save() }

            XCTAssertEqual(policy.mergeCalls.count, 1, "[\(kind)] save calls resolve(mergeConflicts:) once")
            XCTAssertEqual(policy.lockingCalls.count, 1, "[\(kind)] the default implementation dispatches the locking conflicts")
            XCTAssertTrue(policy.constraintCalls.isEmpty, "[\(kind)]")
            XCTAssertTrue(policy.mergeCalls.first?.first is NSMergeConflict, "[\(kind)]")
            let conflicts = try XCTUnwrap(policy.lockingCalls.first)
            try require(conflicts, count: 1, "[\(kind)] conflicts")
            let conflict = conflicts[0]
            XCTAssertTrue(conflict.sourceObject === mine, "[\(kind)]")
            XCTAssertEqual(conflict.oldVersionNumber, 1, "[\(kind)]")
            XCTAssertEqual(conflict.newVersionNumber, 2, "[\(kind)]")
            XCTAssertEqual(conflict.objectSnapshot?["rating"] as? Int16, 2, "[\(kind)] objectSnapshot: the values being saved")
            XCTAssertEqual(conflict.objectSnapshot?["name"] as? String, "Stale", "[\(kind)]")
            XCTAssertEqual(conflict.cachedSnapshot?["rating"] as? Int16, 1, "[\(kind)] cachedSnapshot: what the context read")
            XCTAssertTrue(conflict.cachedSnapshot?["born"] is NSNull, "[\(kind)] nil reads as NSNull")
            XCTAssertEqual(conflict.persistedSnapshot?["rating"] as? Int16, 4, "[\(kind)] persistedSnapshot: what the store holds")
            XCTAssertEqual(conflict.persistedSnapshot?["born"] as? Date, Date(timeIntervalSinceReferenceDate: 0), "[\(kind)]")
            XCTAssertTrue(conflict.persistedSnapshot?["publisher"] is NSNull, "[\(kind)] a to-one relationship is in the snapshot")
            XCTAssertNil(conflict.persistedSnapshot?["books"], "[\(kind)] to-many relationships are not (Apple's snapshots)")

            // super with object trump: my rating, their birth date.
            let result = try stored(container, mine.objectID)
            XCTAssertEqual(result.rating, 2, "[\(kind)]")
            XCTAssertNotNil(result.born, "[\(kind)]")
            context.performAndWait { XCTAssertFalse(context.hasChanges, "[\(kind)]") }
        }
    }

    func testSnapshotsNameToOneDestinationsByObjectID() {
        forEachStore { kind, container in
            let writer = container.newBackgroundContext()
            let (bookID, firstID, secondID) = try writer.performAndWait { () throws -> (NSManagedObjectID, NSManagedObjectID, NSManagedObjectID) in
                let first = writer.make("Author", ["name": "First"])
                let second = writer.make("Author", ["name": "Second"])
                let book = writer.make("Book", ["title": "Moved", "author": first])
                try writer.save()
                return (book.objectID, first.objectID, second.objectID)
            }
            let policy = RecordingPolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
            let reader = container.newBackgroundContext()
            reader.mergePolicy = policy
            try reader.performAndWait { try reader.existingObject(with: bookID).setValue(Int32(120), forKey: "pages") }
            try writer.performAndWait {
                try writer.existingObject(with: bookID).setValue(try writer.existingObject(with: secondID), forKey: "author")
                try writer.save()
            }
            try reader.performAndWait { try reader.save() }

            let conflict = try XCTUnwrap(policy.lockingCalls.first?.first, "[\(kind)]")
            XCTAssertEqual(conflict.cachedSnapshot?["author"] as? NSManagedObjectID, firstID, "[\(kind)]")
            XCTAssertEqual(conflict.objectSnapshot?["author"] as? NSManagedObjectID, firstID, "[\(kind)] the reader did not change it")
            XCTAssertEqual(conflict.persistedSnapshot?["author"] as? NSManagedObjectID, secondID, "[\(kind)]")
            XCTAssertEqual(conflict.objectSnapshot?["pages"] as? Int32, 120, "[\(kind)]")
            XCTAssertNil(conflict.persistedSnapshot?["tags"], "[\(kind)]")
            XCTAssertNil(conflict.persistedSnapshot?["draftNote"], "[\(kind)] transient properties are not stored")
        }
    }

    func testSuperAndNonOverridingSubclassesGiveTheStandardResults() {
        forEachStore { kind, container in
            let expected: [(NSMergePolicyType, rating: Int16, bornKept: Bool)] = [
                (.mergeByPropertyObjectTrumpMergePolicyType, 2, true),
                (.mergeByPropertyStoreTrumpMergePolicyType, 4, true),
                (.overwriteMergePolicyType, 2, false),
                (.rollbackMergePolicyType, 4, true),
            ]
            for (type, rating, bornKept) in expected {
                for policy in [RecordingPolicy(merge: type), PlainSubclass(merge: type)] as [NSMergePolicy] {
                    let (context, mine) = try staleAuthor(container, policy: policy, name: "Standard\(type.rawValue)\(policy is PlainSubclass)")
                    try context.performAndWait { try context.save() }
                    let result = try stored(container, mine.objectID)
                    XCTAssertEqual(result.rating, rating, "[\(kind)] \(type) \(policy)")
                    XCTAssertEqual(result.born != nil, bornKept, "[\(kind)] \(type) \(policy)")
                }
            }
            // The error type's default implementation fails the save as the error policy does.
            let errorPolicy = RecordingPolicy(merge: .errorMergePolicyType)
            let (context, mine) = try staleAuthor(container, policy: errorPolicy, name: "StandardError")
            try context.performAndWait {
                XCTAssertThrowsError(try context.save()) { error in
                    let nsError = error as NSError
                    XCTAssertEqual(nsError.code, NSManagedObjectMergeError, "[\(kind)]")
                    let list = nsError.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
                    XCTAssertTrue(list?.first === errorPolicy.lockingCalls.first?.first, "[\(kind)] the error lists the conflicts the policy was given")
                }
                XCTAssertEqual(mine.value(forKey: "rating") as? Int16, 2, "[\(kind)] the context keeps its changes")
            }
            XCTAssertEqual(try stored(container, mine.objectID).rating, 4, "[\(kind)]")
        }
    }

    func testDelegatingToAnotherStandardPolicy() {
        forEachStore { kind, container in
            let (context, mine) = try staleAuthor(container, policy: DelegatingPolicy(merge: .errorMergePolicyType))
            try context.performAndWait { try context.save() }
            XCTAssertEqual(try stored(container, mine.objectID).rating, 4, "[\(kind)] the rollback policy resolved it")
        }
    }

    func testLockingConflictResolvedByHandThenRetried() {
        forEachStore { kind, container in
            // Split the difference between my rating and theirs, keeping their other changes.
            let policy = HandLockingPolicy { conflict in
                let object = conflict.sourceObject
                let mine = conflict.objectSnapshot?["rating"] as? Int16 ?? 0
                let theirs = conflict.persistedSnapshot?["rating"] as? Int16 ?? 0
                object.managedObjectContext?.refresh(object, mergeChanges: true)
                object.setValue((mine + theirs) / 2, forKey: "rating")
            }
            let (context, mine) = try staleAuthor(container, policy: policy)
            try context.performAndWait {
                try context.save()
                XCTAssertFalse(context.hasChanges, "[\(kind)]")
                XCTAssertEqual(mine.value(forKey: "rating") as? Int16, 3, "[\(kind)]")
                XCTAssertEqual(mine.committedValues(forKeys: ["rating"])["rating"] as? Int16, 3, "[\(kind)]")
            }
            XCTAssertEqual(policy.calls, 1, "[\(kind)]")
            let result = try stored(container, mine.objectID)
            XCTAssertEqual(result.rating, 3, "[\(kind)]")
            XCTAssertNotNil(result.born, "[\(kind)] their birth date, read back by the refresh")
        }
    }

    func testHandResolutionIsValidatedAgain() {
        forEachStore { kind, container in
            let policy = HandLockingPolicy { conflict in
                conflict.sourceObject.managedObjectContext?.refresh(conflict.sourceObject, mergeChanges: true)
                conflict.sourceObject.setValue(Int16(9), forKey: "rating")
            }
            let (context, mine) = try staleAuthor(container, policy: policy)
            try context.performAndWait {
                XCTAssertThrowsError(try context.save()) { error in
                    XCTAssertEqual((error as NSError).code, NSValidationNumberTooLargeError, "[\(kind)] rating is at most 5")
                }
            }
            XCTAssertEqual(try stored(container, mine.objectID).rating, 4, "[\(kind)] nothing saved")
        }
    }

    func testUnresolvedConflictsFailAfterOneTry() {
        forEachStore { kind, container in
            // Returns without doing anything: nothing to retry.
            let idle = HandLockingPolicy { _ in }
            let (idleContext, idleObject) = try staleAuthor(container, policy: idle, name: "Idle")
            try idleContext.performAndWait {
                XCTAssertThrowsError(try idleContext.save()) { XCTAssertEqual(($0 as NSError).code, NSManagedObjectMergeError, "[\(kind)]") }
            }
            XCTAssertEqual(idle.calls, 1, "[\(kind)]")
            XCTAssertEqual(try stored(container, idleObject.objectID).rating, 4, "[\(kind)]")

            // Changes the object but not the version it read: the one retry conflicts again.
            let stubborn = HandLockingPolicy { $0.sourceObject.setValue(Int16(3), forKey: "rating") }
            let (stubbornContext, stubbornObject) = try staleAuthor(container, policy: stubborn, name: "Stubborn")
            try stubbornContext.performAndWait {
                XCTAssertThrowsError(try stubbornContext.save()) { error in
                    let nsError = error as NSError
                    XCTAssertEqual(nsError.code, NSManagedObjectMergeError, "[\(kind)]")
                    XCTAssertEqual((nsError.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])?.first?.objectSnapshot?["rating"] as? Int16, 3, "[\(kind)] the retry wrote the policy's value")
                }
            }
            XCTAssertEqual(stubborn.calls, 1, "[\(kind)] the save retries once")
            XCTAssertEqual(try stored(container, stubbornObject.objectID).rating, 4, "[\(kind)]")
        }
    }

    func testThrowingPolicyAbortsTheSave() {
        forEachStore { kind, container in
            let (context, mine) = try staleAuthor(container, policy: ThrowingPolicy(merge: .overwriteMergePolicyType))
            let extra = try context.performAndWait { () throws -> NSManagedObject in
                let extra = context.make("Author", ["name": "Extra"])
                XCTAssertThrowsError(try context.save()) { error in
                    XCTAssertEqual(error as? PolicyGaveUp, PolicyGaveUp(reason: "1 conflicts"), "[\(kind)] save throws the policy's error")
                }
                XCTAssertTrue(context.hasChanges, "[\(kind)]")
                XCTAssertEqual(mine.value(forKey: "rating") as? Int16, 2, "[\(kind)]")
                return extra
            }
            XCTAssertEqual(try stored(container, mine.objectID).rating, 4, "[\(kind)]")
            XCTAssertTrue(try storedAuthors(container, named: "Extra").isEmpty, "[\(kind)] nothing of the save was written")
            _ = extra
        }
    }

    // MARK: Uniqueness constraints

    func testConstraintConflictReachesTheOverrides() {
        forEachUniquenessStore { kind, container in
            let policy = RecordingPolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
            let (context, newcomer, existingID) = try duplicateAuthor(container, policy: policy, name: "Dup")
            try context.performAndWait { try context.save() }

            XCTAssertEqual(policy.mergeCalls.count, 1, "[\(kind)]")
            XCTAssertTrue(policy.lockingCalls.isEmpty, "[\(kind)]")
            let conflicts = try XCTUnwrap(policy.constraintCalls.first)
            try require(conflicts, count: 1, "[\(kind)] conflicts")
            let conflict = conflicts[0]
            XCTAssertEqual(conflict.constraint, ["name"], "[\(kind)]")
            XCTAssertEqual(conflict.constraintValues["name"] as? String, "Dup", "[\(kind)]")
            XCTAssertEqual(conflict.conflictingObjects.count, 1, "[\(kind)]")
            XCTAssertTrue(conflict.conflictingObjects.first === newcomer, "[\(kind)]")
            XCTAssertEqual(conflict.conflictingSnapshots.first?["rating"] as? Int16, 5, "[\(kind)]")
            XCTAssertEqual(conflict.databaseSnapshot?["rating"] as? Int16, 1, "[\(kind)] the stored values")
            XCTAssertEqual(policy.databaseObjectIDs, [existingID], "[\(kind)] the stored object, in the saving context")

            // super with object trump: the new object takes the stored one's identity, its values win.
            context.performAndWait { XCTAssertEqual(newcomer.objectID, existingID, "[\(kind)]") }
            let authors = try storedAuthors(container, named: "Dup")
            XCTAssertEqual(authors.map(\.rating), [5], "[\(kind)]")
        }
    }

    func testConstraintSuperGivesTheStandardResults() {
        forEachUniquenessStore { kind, container in
            for (type, rating) in [(NSMergePolicyType.mergeByPropertyObjectTrumpMergePolicyType, Int16(5)), (.mergeByPropertyStoreTrumpMergePolicyType, 1), (.overwriteMergePolicyType, 5), (.rollbackMergePolicyType, 1)] {
                for policy in [RecordingPolicy(merge: type), PlainSubclass(merge: type)] as [NSMergePolicy] {
                    let name = "Std\(type.rawValue)\(policy is PlainSubclass)"
                    let (context, newcomer, existingID) = try duplicateAuthor(container, policy: policy, name: name)
                    try context.performAndWait {
                        try context.save()
                        XCTAssertEqual(newcomer.objectID, existingID, "[\(kind)] \(type)")
                    }
                    XCTAssertEqual(try storedAuthors(container, named: name).map(\.rating), [rating], "[\(kind)] \(type) \(policy)")
                }
            }
            let errorPolicy = RecordingPolicy(merge: .errorMergePolicyType)
            let (context, _, _) = try duplicateAuthor(container, policy: errorPolicy, name: "StdError")
            try context.performAndWait {
                XCTAssertThrowsError(try context.save()) { error in
                    let nsError = error as NSError
                    XCTAssertEqual(nsError.code, NSManagedObjectConstraintMergeError, "[\(kind)]")
                    let list = nsError.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict]
                    XCTAssertTrue(list?.first === errorPolicy.constraintCalls.first?.first, "[\(kind)]")
                }
            }
            XCTAssertEqual(try storedAuthors(container, named: "StdError").count, 1, "[\(kind)]")
        }
    }

    func testConstraintConflictResolvedByHandThenRetried() {
        forEachUniquenessStore { kind, container in
            // Folds the new object into the stored one: its rating is copied, the new object deleted.
            let fold = HandConstraintPolicy { conflict in
                guard let stored = conflict.databaseObject else { return }
                for object in conflict.conflictingObjects {
                    stored.setValue(object.value(forKey: "rating"), forKey: "rating")
                    object.managedObjectContext?.delete(object)
                }
            }
            let (context, newcomer, existingID) = try duplicateAuthor(container, policy: fold, name: "Fold")
            try context.performAndWait {
                try context.save()
                XCTAssertFalse(context.hasChanges, "[\(kind)]")
                XCTAssertFalse(context.registeredObjects.contains(newcomer), "[\(kind)] the new object is gone")
                XCTAssertEqual(try context.existingObject(with: existingID).value(forKey: "rating") as? Int16, 5, "[\(kind)]")
            }
            XCTAssertEqual(fold.calls, 1, "[\(kind)]")
            let folded = try storedAuthors(container, named: "Fold")
            XCTAssertEqual(folded.map(\.rating), [5], "[\(kind)]")
            XCTAssertEqual(folded.map(\.id), [existingID], "[\(kind)]")

            // Renames the new object: both are saved.
            let rename = HandConstraintPolicy { conflict in
                for object in conflict.conflictingObjects { object.setValue("Renamed", forKey: "name") }
            }
            let (renameContext, renamed, _) = try duplicateAuthor(container, policy: rename, name: "Rename")
            try renameContext.performAndWait {
                try renameContext.save()
                XCTAssertFalse(renamed.objectID.isTemporaryID, "[\(kind)]")
            }
            XCTAssertEqual(try storedAuthors(container, named: "Rename").count, 1, "[\(kind)]")
            XCTAssertEqual(try storedAuthors(container, named: "Renamed").map(\.rating), [5], "[\(kind)]")

            // Does nothing: the save fails with the standard error.
            let idle = HandConstraintPolicy { _ in }
            let (idleContext, _, _) = try duplicateAuthor(container, policy: idle, name: "IdleDup")
            try idleContext.performAndWait {
                XCTAssertThrowsError(try idleContext.save()) { XCTAssertEqual(($0 as NSError).code, NSManagedObjectConstraintMergeError, "[\(kind)]") }
            }
            XCTAssertEqual(idle.calls, 1, "[\(kind)]")
        }
    }

    func testThrowingConstraintPolicyAbortsTheSave() {
        forEachUniquenessStore { kind, container in
            let (context, newcomer, _) = try duplicateAuthor(container, policy: ThrowingPolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType), name: "Refused")
            try context.performAndWait {
                XCTAssertThrowsError(try context.save()) { XCTAssertEqual($0 as? PolicyGaveUp, PolicyGaveUp(reason: "1 conflicts"), "[\(kind)]") }
                XCTAssertTrue(newcomer.isInserted, "[\(kind)] the context keeps its changes")
            }
            XCTAssertEqual(try storedAuthors(container, named: "Refused").map(\.rating), [1], "[\(kind)]")
        }
    }

    // MARK: API

    func testPolicyTypesAndConflictInitializers() {
        XCTAssertEqual(NSMergePolicy(merge: NSOverwriteMergePolicyType).mergeType, .overwriteMergePolicyType)
        XCTAssertEqual(NSMergePolicyType(rawValue: 2), NSMergeByPropertyObjectTrumpMergePolicyType)
        XCTAssertEqual(NSErrorMergePolicyType.rawValue, 0)
        XCTAssertEqual(NSRollbackMergePolicyType.rawValue, 4)
        let legacy: NSMergePolicy.MergePolicyType = .mergeByPropertyStoreTrumpMergePolicyType
        XCTAssertEqual(legacy, NSMergeByPropertyStoreTrumpMergePolicyType)

        let container = try? StoreKind.inMemory.makeContainer()
        guard let context = container?.viewContext else { return XCTFail("no container") }
        let author = context.make("Author", ["name": "Made", "rating": Int16(2)])
        let conflict = NSMergeConflict(source: author, newVersion: 3, oldVersion: 2, cachedSnapshot: ["rating": Int16(1)], persistedSnapshot: nil)
        XCTAssertEqual(conflict.objectSnapshot?["rating"] as? Int16, 2)
        XCTAssertEqual(conflict.newVersionNumber, 3)
        XCTAssertNil(conflict.persistedSnapshot)
        let constraint = NSConstraintConflict(
            constraint: ["name"], database: nil, databaseSnapshot: ["name": "Made"], conflicting: [author], conflictingSnapshots: [["name": "Made"] as [AnyHashable: Any]])
        XCTAssertEqual(constraint.constraintValues["name"] as? String, "Made")
        XCTAssertEqual(constraint.databaseSnapshot?["name"] as? String, "Made")
        XCTAssertEqual(constraint.conflictingSnapshots.count, 1)
        XCTAssertNil(constraint.databaseObject)
        // Conflicts made by hand belong to no save: the standard policy has nothing to apply.
        XCTAssertNoThrow(try NSMergePolicy.overwrite.resolve(mergeConflicts: [conflict, constraint]))
        XCTAssertThrowsError(try NSMergePolicy.error.resolve(mergeConflicts: [conflict])) {
            XCTAssertEqual(($0 as NSError).code, NSManagedObjectMergeError)
        }
    }
}
