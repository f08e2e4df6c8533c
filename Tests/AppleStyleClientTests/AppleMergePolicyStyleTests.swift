// Custom merge policies written the way Apple-platform Core Data code writes them: an NSMergePolicy
// subclass made with init(merge:), overriding resolve(constraintConflicts:) and
// resolve(optimisticLockingConflicts:), changing objects and calling super. Foundation, XCTest and
// CoreData are imported side by side: what compiles here compiles in an iOS or macOS app. The
// policies restate `@unchecked Sendable`, which Swift 6 asks of subclasses of a Sendable class and
// which compiles whether or not an SDK's NSMergePolicy is Sendable.
import Foundation
import XCTest
import CoreData

/// Keeps the best score when a player is inserted twice: the new object takes the higher score,
/// then the object-trump policy (super) folds it into the stored player.
final class KeepBestScorePolicy: NSMergePolicy, @unchecked Sendable {
    override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        for conflict in list {
            guard let stored = conflict.databaseObject else { continue }
            let storedScore = stored.value(forKey: "score") as? Int64 ?? 0
            for object in conflict.conflictingObjects where (object.value(forKey: "score") as? Int64 ?? 0) < storedScore {
                object.setValue(storedScore, forKey: "score")
            }
        }
        try super.resolve(constraintConflicts: list)
    }
}

/// Treats `visits` as a counter: both contexts' increments count.
final class CounterMergePolicy: NSMergePolicy, @unchecked Sendable {
    override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        for conflict in list {
            let object = conflict.sourceObject
            guard let context = object.managedObjectContext,
                  let read = conflict.cachedSnapshot?["visits"] as? Int64,
                  let mine = conflict.objectSnapshot?["visits"] as? Int64,
                  let theirs = conflict.persistedSnapshot?["visits"] as? Int64
            else { continue }
            // Reads the store's version of the object, keeping this context's changes.
            context.refresh(object, mergeChanges: true)
            object.setValue(theirs + (mine - read), forKey: "visits")
        }
        try super.resolve(optimisticLockingConflicts: list)
    }
}

final class AppleMergePolicyStyleTests: XCTestCase {
    private func makeContainer() throws -> NSPersistentContainer {
        let player = NSEntityDescription()
        player.name = "Player"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false
        let score = NSAttributeDescription()
        score.name = "score"
        score.attributeType = .integer64AttributeType
        score.defaultValue = Int64(0)
        let visits = NSAttributeDescription()
        visits.name = "visits"
        visits.attributeType = .integer64AttributeType
        visits.defaultValue = Int64(0)
        player.properties = [name, score, visits]
        player.uniquenessConstraints = [["name"]]
        let model = NSManagedObjectModel()
        model.entities = [player]

        let container = NSPersistentContainer(name: "Players", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        return container
    }

    func testUniquenessConflictKeepsTheBestScore() throws {
        let container = try makeContainer()
        let context = container.viewContext
        context.mergePolicy = KeepBestScorePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        let first = NSEntityDescription.insertNewObject(forEntityName: "Player", into: context)
        first.setValue("Ada", forKey: "name")
        first.setValue(Int64(90), forKey: "score")
        try context.save()
        context.reset()

        let again = NSEntityDescription.insertNewObject(forEntityName: "Player", into: context)
        again.setValue("Ada", forKey: "name")
        again.setValue(Int64(40), forKey: "score")
        try context.save()

        let check = container.newBackgroundContext()
        let scores = try check.performAndWait {
            try check.fetch(NSFetchRequest<NSManagedObject>(entityName: "Player")).map { $0.value(forKey: "score") as? Int64 }
        }
        XCTAssertEqual(scores, [90])
    }

    func testCounterMergesBothIncrements() throws {
        let container = try makeContainer()
        let context = container.viewContext
        context.mergePolicy = CounterMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        let player = NSEntityDescription.insertNewObject(forEntityName: "Player", into: context)
        player.setValue("Grace", forKey: "name")
        player.setValue(Int64(10), forKey: "visits")
        try context.save()

        let playerID = player.objectID
        let other = container.newBackgroundContext()
        try other.performAndWait {
            let theirs = try other.existingObject(with: playerID)
            theirs.setValue(Int64(13), forKey: "visits")
            try other.save()
        }
        player.setValue(Int64(12), forKey: "visits")
        try context.save()

        XCTAssertEqual(player.value(forKey: "visits") as? Int64, 15)
        XCTAssertFalse(context.hasChanges)
    }
}
