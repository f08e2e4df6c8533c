// Persistent history and query generations as Apple-platform apps write them: Foundation, XCTest
// and CoreData side by side, Apple's names only (the README's snippet). If this file stops
// compiling, an app's history-processing code stops compiling too.
import Foundation
import XCTest
import CoreData

final class AppleHistoryStyleTests: XCTestCase {
    private func container() throws -> NSPersistentContainer {
        let entity = NSEntityDescription()
        entity.name = "Note"
        let text = NSAttributeDescription()
        text.name = "text"
        text.attributeType = .stringAttributeType
        text.preservesValueInHistoryOnDeletion = true
        entity.properties = [text]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let container = NSPersistentContainer(name: "Notes", managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: FileManager.default.temporaryDirectory.appendingPathComponent("notes-\(UUID().uuidString).sqlite"))
        description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey)
        description.setOption(true as NSNumber, forKey: NSPersistentStoreRemoteChangeNotificationPostOptionKey)
        container.persistentStoreDescriptions = [description]
        var failure: Error?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        return container
    }

    /// Apple's "consuming relevant store changes" pattern: fetch after the last token without
    /// the app's own transactions, merge, remember the token, purge what every target has seen.
    func testProcessingRemoteHistoryTheAppleWay() throws {
        let container = try container()
        let context = container.viewContext
        context.transactionAuthor = "app"
        var lastToken: NSPersistentHistoryToken? = container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)

        let importer = container.newBackgroundContext()
        importer.transactionAuthor = "importer"
        try importer.performAndWait {
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: importer)
            note.setValue("from the importer", forKey: "text")
            try importer.save()
        }

        let request = NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)
        if let fetchRequest = NSPersistentHistoryTransaction.fetchRequest {
            fetchRequest.predicate = NSPredicate(format: "%K != %@", "author", "app")
            request.fetchRequest = fetchRequest
        }
        request.resultType = .transactionsAndChanges
        let result = try context.execute(request) as? NSPersistentHistoryResult
        let transactions = result?.result as? [NSPersistentHistoryTransaction] ?? []
        XCTAssertEqual(transactions.count, 1)
        for transaction in transactions {
            context.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
            lastToken = transaction.token
        }
        XCTAssertEqual(transactions.first?.changes?.first?.changeType, .insert)
        let data = try NSKeyedArchiver.archivedData(withRootObject: lastToken as Any, requiringSecureCoding: true)
        XCTAssertNotNil(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: data))

        let purge = NSPersistentHistoryChangeRequest.deleteHistory(before: lastToken)
        try context.execute(purge)
        let after = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: nil as Date? ?? .distantPast)) as? NSPersistentHistoryResult
        XCTAssertEqual((after?.result as? [NSPersistentHistoryTransaction])?.count, 0)
    }

    /// A view context pinned to the current generation, as Apple's sample apps set it up.
    func testPinningTheViewContextTheAppleWay() throws {
        let container = try container()
        let viewContext = container.viewContext
        viewContext.automaticallyMergesChangesFromParent = false
        try viewContext.setQueryGenerationFrom(.current)
        // The generation is taken at the context's next read, as on Apple platforms.
        XCTAssertEqual(try viewContext.count(for: NSFetchRequest<NSFetchRequestResult>(entityName: "Note")), 0)
        let background = container.newBackgroundContext()
        try background.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Note", into: background).setValue("later", forKey: "text")
            try background.save()
        }
        XCTAssertEqual(try viewContext.count(for: NSFetchRequest<NSFetchRequestResult>(entityName: "Note")), 0)
        try viewContext.setQueryGenerationFrom(.current)
        XCTAssertEqual(try viewContext.count(for: NSFetchRequest<NSFetchRequestResult>(entityName: "Note")), 1)
    }
}
