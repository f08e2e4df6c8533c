import CoreData
import Foundation
import XCTest

/// Persistent history (`NSPersistentHistoryTrackingKey`) on every store that records it: the
/// binary store in its files, the in-memory and XML stores in memory. Each scenario runs on all
/// three; user stores (`NSIncrementalStore`, `NSAtomicStore`) record none, as on Apple platforms.
final class PersistentHistoryTests: XCTestCase {
    static let historyKinds: [StoreKind] = [.inMemory, .binary, .xml]

    private func forEachHistoryStore(
        tracking: Bool = true, file: StaticString = #filePath, line: UInt = #line,
        _ body: (StoreKind, NSPersistentContainer) throws -> Void
    ) {
        for kind in Self.historyKinds {
            do {
                let container = try kind.makeContainer(options: tracking ? [NSPersistentHistoryTrackingKey: true as NSNumber] : [:], file: file, line: line)
                try body(kind, container)
            } catch {
                XCTFail("[\(kind)] \(error)", file: file, line: line)
            }
        }
    }

    private func transactions(_ context: NSManagedObjectContext, _ request: NSPersistentHistoryChangeRequest) throws -> [NSPersistentHistoryTransaction] {
        let result = try context.execute(request) as? NSPersistentHistoryResult
        return try XCTUnwrap(result?.result as? [NSPersistentHistoryTransaction])
    }

    /// Every save is a transaction with its author, context name, process and changes: inserts,
    /// updates with the properties they changed, deletes with the preserved values.
    func testSavesAreRecordedWithWhoAndWhat() {
        forEachHistoryStore { kind, container in
            let context = container.viewContext
            context.name = "view"
            context.transactionAuthor = "app"
            let author = context.make("Author", ["name": "Ada"])
            let book = context.make("Book", ["title": "Notes", "author": author])
            try context.save()
            author.setValue("Ada L.", forKey: "name")
            author.setValue(Int16(5), forKey: "rating")
            try context.save()
            context.transactionAuthor = "cleanup"
            let bookID = book.objectID
            context.delete(book)
            try context.save()

            let history = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
            try require(history, count: 3, "[\(kind)] transactions")
            XCTAssertEqual(history.map(\.transactionNumber), [1, 2, 3], "[\(kind)]")
            XCTAssertEqual(history.map(\.author), ["app", "app", "cleanup"], "[\(kind)]")
            XCTAssertEqual(history.map(\.contextName), ["view", "view", "view"], "[\(kind)]")
            XCTAssertEqual(history[0].processID, String(ProcessInfo.processInfo.processIdentifier), "[\(kind)]")
            XCTAssertFalse(history[0].bundleID.isEmpty, "[\(kind)]")
            XCTAssertEqual(history[0].storeID, container.persistentStoreCoordinator.persistentStores.first?.identifier, "[\(kind)]")
            XCTAssertTrue(history[0].timestamp <= history[2].timestamp, "[\(kind)]")

            let inserted = try XCTUnwrap(history[0].changes)
            XCTAssertEqual(Set(inserted.map(\.changedObjectID)), [author.objectID, bookID], "[\(kind)]")
            XCTAssertTrue(inserted.allSatisfy { $0.changeType == .insert && $0.transaction === history[0] }, "[\(kind)]")
            let updated = try XCTUnwrap(history[1].changes)
            try require(updated, count: 1, "[\(kind)] updates")
            XCTAssertEqual(updated[0].changeType, .update)
            XCTAssertEqual(updated[0].changedObjectID, author.objectID)
            XCTAssertEqual(Set(updated[0].updatedProperties?.map(\.name) ?? []), ["name", "rating"], "[\(kind)]")
            XCTAssertNil(updated[0].tombstone)
            let deletes = try XCTUnwrap(history[2].changes).filter { $0.changeType == .delete }
            try require(deletes, count: 1, "[\(kind)] deletes")
            XCTAssertEqual(deletes[0].changedObjectID, bookID)
            XCTAssertEqual(deletes[0].tombstone?["title"] as? String, "Notes", "[\(kind)] the preserved value")
            XCTAssertNil(deletes[0].tombstone?["pages"], "[\(kind)] values not preserved are not kept")
            XCTAssertTrue(history[0].token < history[1].token && history[1].token < history[2].token, "[\(kind)]")
            XCTAssertEqual(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil), history[2].token, "[\(kind)]")
        }
    }

    /// Fetching after a token, a transaction or a date, filtered by a transaction or change
    /// predicate, with every result type.
    func testFetchAfterTokensDatesAndFilters() {
        forEachHistoryStore { kind, container in
            let context = container.viewContext
            context.transactionAuthor = "app"
            context.make("Author", ["name": "One"])
            try context.save()
            let coordinator = container.persistentStoreCoordinator
            let afterFirst = try XCTUnwrap(coordinator.currentPersistentHistoryToken(fromStores: nil))
            let middle = Date()
            Thread.sleep(forTimeInterval: 0.01)
            context.transactionAuthor = "importer"
            context.make("Author", ["name": "Two"])
            context.make("Tag", ["label": "t"])
            try context.save()
            context.transactionAuthor = "app"
            context.make("Author", ["name": "Three"])
            try context.save()

            XCTAssertEqual(try transactions(context, .fetchHistory(after: afterFirst)).map(\.transactionNumber), [2, 3], "[\(kind)]")
            XCTAssertEqual(try transactions(context, .fetchHistory(after: middle)).map(\.transactionNumber), [2, 3], "[\(kind)]")
            let all = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryTransaction?))
            XCTAssertEqual(try transactions(context, .fetchHistory(after: all[1])).map(\.transactionNumber), [3], "[\(kind)]")
            let current = try XCTUnwrap(coordinator.currentPersistentHistoryToken(fromStores: nil))
            XCTAssertEqual(try transactions(context, .fetchHistory(after: current)).count, 0, "[\(kind)] nothing after the current token")

            // The app's pattern: everything after a token except its own saves.
            let others = NSPersistentHistoryChangeRequest.fetchHistory(after: afterFirst)
            let byAuthor = try XCTUnwrap(NSPersistentHistoryTransaction.fetchRequest)
            byAuthor.predicate = NSPredicate(format: "author != %@", "app")
            others.fetchRequest = byAuthor
            XCTAssertEqual(try transactions(context, others).map(\.author), ["importer"], "[\(kind)]")

            let tagsOnly = try XCTUnwrap(NSPersistentHistoryChange.fetchRequest)
            tagsOnly.predicate = NSPredicate(format: "changedEntity == %@ AND changeType == %d", "Tag", NSPersistentHistoryChangeType.insert.rawValue)
            let tagRequest = NSPersistentHistoryChangeRequest.fetchHistory(withFetchRequest: tagsOnly)
            let tagTransactions = try transactions(context, tagRequest)
            XCTAssertEqual(tagTransactions.map(\.transactionNumber), [2], "[\(kind)]")
            XCTAssertEqual(tagTransactions.first?.changes?.count, 1, "[\(kind)] only the matching change")

            func result(_ type: NSPersistentHistoryResultType) throws -> Any? {
                let request = NSPersistentHistoryChangeRequest.fetchHistory(after: afterFirst)
                request.resultType = type
                return (try context.execute(request) as? NSPersistentHistoryResult)?.result
            }
            XCTAssertEqual(try result(.count) as? Int, 3, "[\(kind)]")
            XCTAssertEqual((try result(.objectIDs) as? [NSManagedObjectID])?.count, 3, "[\(kind)]")
            XCTAssertEqual((try result(.changesOnly) as? [NSPersistentHistoryChange])?.map(\.changeType), [.insert, .insert, .insert], "[\(kind)]")
            let bare = try XCTUnwrap(try result(.transactionsOnly) as? [NSPersistentHistoryTransaction])
            XCTAssertEqual(bare.count, 2)
            XCTAssertTrue(bare.allSatisfy { $0.changes == nil }, "[\(kind)]")
            XCTAssertEqual(try result(.statusOnly) as? Bool, true)
        }
    }

    /// Deleting history: by token, by transaction, by date; a token from before the deleted
    /// transactions has expired (134301), a current one has not; numbers are never reused.
    func testDeleteHistoryAndExpiredTokens() {
        forEachHistoryStore { kind, container in
            let context = container.viewContext
            for index in 0..<5 {
                context.make("Tag", ["label": "tag \(index)"])
                try context.save()
            }
            let all = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
            try require(all, count: 5, "[\(kind)] transactions")
            let stale = all[0].token

            let deleted = NSPersistentHistoryChangeRequest.deleteHistory(before: all[2].token)
            deleted.resultType = .count
            XCTAssertEqual((try context.execute(deleted) as? NSPersistentHistoryResult)?.result as? Int, 3, "[\(kind)] through the token's transaction")
            XCTAssertEqual(try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?)).map(\.transactionNumber), [4, 5], "[\(kind)]")
            XCTAssertEqual(try transactions(context, .fetchHistory(after: all[2].token)).map(\.transactionNumber), [4, 5], "[\(kind)] the cut's own token still works")
            XCTAssertThrowsError(try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: stale)), "[\(kind)]") { error in
                XCTAssertEqual((error as NSError).code, NSPersistentHistoryTokenExpiredError, "[\(kind)]")
            }

            _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: all[4]))
            XCTAssertEqual(try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?)).map(\.transactionNumber), [5], "[\(kind)] older than the transaction")
            _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: Date().addingTimeInterval(1)))
            XCTAssertEqual(try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?)).count, 0, "[\(kind)] before a date")

            context.make("Tag", ["label": "after"])
            try context.save()
            XCTAssertEqual(try transactions(context, .fetchHistory(after: all[4].token)).map(\.transactionNumber), [6], "[\(kind)] numbers go on")

            // A token past the last transaction (a store whose history started over) has expired too.
            let storeID = try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first?.identifier)
            let future = try JSONDecoder().decode(NSPersistentHistoryToken.self, from: Data("{\"\(storeID)\": 99}".utf8))
            XCTAssertThrowsError(try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: future)), "[\(kind)]") { error in
                XCTAssertEqual((error as NSError).code, NSPersistentHistoryTokenExpiredError, "[\(kind)]")
            }
        }
    }

    /// Batch inserts, updates and deletes are transactions too, with the executing context's author.
    func testBatchRequestsAreRecorded() {
        forEachHistoryStore { kind, container in
            let context = container.viewContext
            context.transactionAuthor = "batch"
            let insert = NSBatchInsertRequest(entityName: "Tag", objects: [["label": "a"], ["label": "b"]])
            insert.resultType = .objectIDs
            let ids = try XCTUnwrap((try context.execute(insert) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
            let update = NSBatchUpdateRequest(entityName: "Tag")
            update.propertiesToUpdate = ["label": "z"]
            try context.execute(update)
            try context.execute(NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Tag")))

            let history = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
            try require(history, count: 3, "[\(kind)] batch transactions")
            XCTAssertEqual(history.map(\.author), ["batch", "batch", "batch"], "[\(kind)]")
            XCTAssertEqual(history[0].changes?.map(\.changeType), [.insert, .insert], "[\(kind)]")
            XCTAssertEqual(Set(history[0].changes?.map(\.changedObjectID) ?? []), Set(ids), "[\(kind)]")
            XCTAssertEqual(history[1].changes?.first?.updatedProperties?.map(\.name), ["label"], "[\(kind)]")
            XCTAssertEqual(history[2].changes?.map(\.changeType), [.delete, .delete], "[\(kind)]")
        }
    }

    /// A context takes in another context's save through the transaction's object-ID notification.
    func testMergingATransactionIntoAnotherContext() {
        forEachHistoryStore { kind, container in
            let viewer = container.viewContext
            let author = viewer.make("Author", ["name": "Old"])
            try viewer.save()
            let token = try XCTUnwrap(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
            let background = container.newBackgroundContext()
            let authorID = author.objectID
            try background.performAndWait {
                background.object(with: authorID).setValue("New", forKey: "name")
                background.make("Author", ["name": "Added"])
                try background.save()
            }
            for transaction in try transactions(viewer, .fetchHistory(after: token)) {
                viewer.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
            }
            XCTAssertEqual(author.value(forKey: "name") as? String, "New", "[\(kind)] the update is merged")
            XCTAssertEqual(try viewer.all("Author", sortedBy: "name").count, 2, "[\(kind)]")
        }
    }

    /// Without the option nothing is recorded and there is no token.
    func testNoHistoryWithoutTheOption() {
        forEachHistoryStore(tracking: false) { kind, container in
            let context = container.viewContext
            context.make("Tag", ["label": "x"])
            try context.save()
            XCTAssertNil(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil), "[\(kind)]")
            XCTAssertEqual(try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?)).count, 0, "[\(kind)]")
        }
    }

    /// A `.changesOnly` result's changes keep their transactions; a token that does not name a
    /// store asks it from the start without an expiry error.
    func testChangesKeepTheirTransactionsAndForeignTokens() {
        forEachHistoryStore { kind, container in
            let context = container.viewContext
            context.transactionAuthor = "app"
            context.make("Tag", ["label": "x"])
            try context.save()
            _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: nil as NSPersistentHistoryToken?))
            context.make("Tag", ["label": "y"])
            try context.save()
            let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
            request.resultType = .changesOnly
            let changes = try XCTUnwrap((try context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryChange])
            XCTAssertEqual(changes.count, 1, "[\(kind)]")
            XCTAssertEqual(changes.first?.transaction?.author, "app", "[\(kind)] the change holds its transaction")
            XCTAssertEqual(changes.first?.transaction?.transactionNumber, 2, "[\(kind)]")

            let foreign = try JSONDecoder().decode(NSPersistentHistoryToken.self, from: Data(#"{"another-store": 7}"#.utf8))
            XCTAssertEqual(try transactions(context, .fetchHistory(after: foreign)).map(\.transactionNumber), [2], "[\(kind)] from the start, no expiry")
        }
    }

    /// A store that holds history opens read-only without the tracking option (Apple's rule).
    func testAStoreWithHistoryOpensReadOnlyWithoutTracking() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID().uuidString).store")
        let model = StoreKind.sharedModel
        let tracked = NSPersistentStoreCoordinator(managedObjectModel: model)
        let first = try tracked.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: [NSPersistentHistoryTrackingKey: true])
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = tracked
        context.make("Tag", ["label": "tracked"])
        try context.save()
        try tracked.remove(first)

        let untracked = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try untracked.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: nil)
        XCTAssertTrue(store.isReadOnly)
        let reader = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        reader.persistentStoreCoordinator = untracked
        XCTAssertEqual(try reader.all("Tag").count, 1, "it reads")
        reader.make("Tag", ["label": "untracked"])
        XCTAssertThrowsError(try reader.save(), "but does not save: its saves would be missing from the history")
        try untracked.remove(store)
    }

    /// An archive that names the token class but holds other values decodes to `nil`, never a trap.
    func testAForgedTokenArchiveDecodesToNil() throws {
        let data = try NSKeyedArchiver.archivedData(withRootObject: ForgedToken(), requiringSecureCoding: true)
        for tokenClass in [NSPersistentHistoryToken.self, NSQueryGenerationToken.self] as [NSObject.Type] {
            let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
            unarchiver.decodingFailurePolicy = .setErrorAndReturn
            // The archive's object is read as a token: the token's decoder meets its fields.
            unarchiver.setClass(tokenClass, forClassName: NSStringFromClass(ForgedToken.self))
            XCTAssertNil(unarchiver.decodeObject(of: [tokenClass], forKey: NSKeyedArchiveRootObjectKey), "\(tokenClass)")
            unarchiver.finishDecoding()
        }
    }

    /// A user's store (`NSIncrementalStore`, `NSAtomicStore`) keeps no history and no query
    /// generations, as on Apple platforms: history requests find nothing, no token is given, and
    /// a pinned context reads the store's latest state.
    func testUserStoresKeepNoHistoryAndNoGenerations() throws {
        for kind in [StoreKind.incremental, .atomic] {
            let container = try kind.makeContainer(options: [NSPersistentHistoryTrackingKey: true as NSNumber])
            let context = container.viewContext
            context.make("Tag", ["label": "one"])
            try context.save()
            XCTAssertNil(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil), "[\(kind)]")
            XCTAssertEqual(try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?)).count, 0, "[\(kind)]")

            try context.setQueryGenerationFrom(.current)
            XCTAssertEqual(try context.all("Tag").count, 1, "[\(kind)]")
            let other = container.newBackgroundContext()
            try other.performAndWait {
                other.make("Tag", ["label": "two"])
                try other.save()
            }
            XCTAssertEqual(try context.all("Tag").count, 2, "[\(kind)] a user's store is read at its latest state")
        }
    }

    /// Tokens archive with `NSKeyedArchiver` (secure coding) and with `Codable`, and compare.
    func testTokensArchiveAndCompare() throws {
        let container = try StoreKind.inMemory.makeContainer(options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        let context = container.viewContext
        context.make("Tag", ["label": "x"])
        try context.save()
        let first = try XCTUnwrap(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        context.make("Tag", ["label": "y"])
        try context.save()
        let second = try XCTUnwrap(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        XCTAssertTrue(first < second)
        XCTAssertFalse(second < first)
        XCTAssertNotEqual(first, second)

        let archived = try NSKeyedArchiver.archivedData(withRootObject: second, requiringSecureCoding: true)
        let unarchived = try XCTUnwrap(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: archived))
        XCTAssertEqual(unarchived, second)
        let decoded = try JSONDecoder().decode(NSPersistentHistoryToken.self, from: try JSONEncoder().encode(first))
        XCTAssertEqual(decoded, first)
        XCTAssertEqual(try transactions(context, .fetchHistory(after: unarchived)).count, 0)
        XCTAssertEqual(try transactions(context, .fetchHistory(after: decoded)).count, 1)
    }
}

/// Writes what a token's keys hold with values of other types and lengths out of range.
final class ForgedToken: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }

    override init() { super.init() }
    init?(coder: NSCoder) { nil }

    func encode(with coder: NSCoder) {
        coder.encode(Int64(2), forKey: "count")
        coder.encode(["a": 1] as NSDictionary, forKey: "store.0")
        coder.encode(NSString(string: "not a number"), forKey: "number.0")
        coder.encode(Int64.max, forKey: "store.1")
        coder.encode(true, forKey: "current")
    }
}
