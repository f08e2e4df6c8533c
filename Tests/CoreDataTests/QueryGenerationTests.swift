import CoreData
import Foundation
import XCTest

/// Query generations (`NSQueryGenerationToken`, `setQueryGenerationFrom(_:)`) on every store that
/// keeps them: a pinned context reads one snapshot while other contexts save, and moves on when
/// it saves, merges or is reset, as Apple's contexts do.
final class QueryGenerationTests: XCTestCase {
    static let kinds: [StoreKind] = [.inMemory, .binary, .xml]

    private func forEachGenerationStore(file: StaticString = #filePath, line: UInt = #line, _ body: (StoreKind, NSPersistentContainer) throws -> Void) {
        for kind in Self.kinds {
            do {
                try body(kind, try kind.makeContainer(file: file, line: line))
            } catch {
                XCTFail("[\(kind)] \(error)", file: file, line: line)
            }
        }
    }

    /// Saves `body`'s changes in a background context of the container.
    private func saveElsewhere(_ container: NSPersistentContainer, _ body: @escaping (NSManagedObjectContext) throws -> Void) throws {
        let other = container.newBackgroundContext()
        try other.performAndWait {
            try body(other)
            try other.save()
        }
    }

    func testAPinnedContextReadsItsGenerationWhileOthersSave() {
        forEachGenerationStore { kind, container in
            let pinned = container.viewContext
            let ada = pinned.make("Author", ["name": "Ada"])
            try pinned.save()
            XCTAssertNil(pinned.queryGenerationToken, "[\(kind)] unpinned by default")
            try pinned.setQueryGenerationFrom(.current)
            let token = try XCTUnwrap(pinned.queryGenerationToken, "[\(kind)]")
            XCTAssertNotEqual(token, NSQueryGenerationToken.current)
            let adaID = ada.objectID

            try saveElsewhere(container) { other in
                other.make("Author", ["name": "Grace"])
                other.object(with: adaID).setValue("Ada L.", forKey: "name")
            }
            XCTAssertEqual(names(try pinned.all("Author", sortedBy: "name")), ["Ada"], "[\(kind)] the pinned generation has one author")
            XCTAssertEqual(try pinned.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")), 1, "[\(kind)]")
            pinned.refresh(ada, mergeChanges: false)
            XCTAssertEqual(ada.value(forKey: "name") as? String, "Ada", "[\(kind)] a fault fires from the pinned generation")
            XCTAssertEqual(try pinned.all("Author", where: "name == %@", "Ada").count, 1, "[\(kind)] predicates see the old value")
            XCTAssertEqual(pinned.queryGenerationToken, token, "[\(kind)] reading does not move the generation")

            let fresh = container.newBackgroundContext()
            fresh.performAndWait {
                XCTAssertEqual(names((try? fresh.all("Author", sortedBy: "name")) ?? []), ["Ada L.", "Grace"], "[\(kind)] an unpinned context reads the latest")
            }

            try pinned.setQueryGenerationFrom(.current)
            // As on Apple platforms, objects the context holds keep their values until refreshed.
            XCTAssertEqual(names(try pinned.all("Author", sortedBy: "name")), ["Ada", "Grace"], "[\(kind)] pinned again to the latest")
            pinned.refreshAllObjects()
            XCTAssertEqual(names(try pinned.all("Author", sortedBy: "name")), ["Ada L.", "Grace"], "[\(kind)] refreshed from the latest")
            XCTAssertNotEqual(pinned.queryGenerationToken, token, "[\(kind)]")
            try pinned.setQueryGenerationFrom(nil)
            XCTAssertNil(pinned.queryGenerationToken, "[\(kind)]")
        }
    }

    func testSavingMergingAndResettingMoveToTheLatestGeneration() {
        forEachGenerationStore { kind, container in
            let pinned = container.viewContext
            try pinned.setQueryGenerationFrom(.current)
            XCTAssertEqual(try pinned.all("Tag").count, 0)
            try saveElsewhere(container) { $0.make("Tag", ["label": "elsewhere 1"]) }
            XCTAssertEqual(try pinned.all("Tag").count, 0, "[\(kind)]")

            let saved = expectation(forNotification: .NSManagedObjectContextDidSave, object: pinned)
            let savedToken = Captured<NSQueryGenerationToken>()
            let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: pinned, queue: nil) { note in
                savedToken.value = note.userInfo?[NSManagedObjectContextQueryGenerationKey] as? NSQueryGenerationToken
            }
            pinned.make("Tag", ["label": "mine"])
            try pinned.save()
            wait(for: [saved], timeout: 1)
            NotificationCenter.default.removeObserver(observer)
            XCTAssertNotNil(savedToken.value, "[\(kind)] the did-save notification names the new generation")
            XCTAssertEqual(Set(names(try pinned.all("Tag"), "label")), ["elsewhere 1", "mine"], "[\(kind)] a save moves to the latest")

            let notification = try XCTUnwrap(try {
                let captured = Captured<Notification>()
                let other = container.newBackgroundContext()
                let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { captured.value = $0 }
                defer { NotificationCenter.default.removeObserver(token) }
                try other.performAndWait {
                    other.make("Tag", ["label": "elsewhere 2"])
                    try other.save()
                }
                return captured.value
            }())
            XCTAssertEqual(try pinned.all("Tag").count, 2, "[\(kind)] still pinned")
            pinned.mergeChanges(fromContextDidSave: notification)
            XCTAssertEqual(try pinned.all("Tag").count, 3, "[\(kind)] a merge moves to the latest")

            try saveElsewhere(container) { $0.make("Tag", ["label": "elsewhere 3"]) }
            XCTAssertEqual(try pinned.all("Tag").count, 3, "[\(kind)]")
            pinned.reset()
            XCTAssertEqual(try pinned.all("Tag").count, 4, "[\(kind)] a reset moves to the latest")
            XCTAssertNotNil(pinned.queryGenerationToken, "[\(kind)] and stays pinned")
        }
    }

    func testContextsShareAGenerationAndTokensArchive() {
        forEachGenerationStore { kind, container in
            let first = container.viewContext
            first.make("Tag", ["label": "one"])
            try first.save()
            try first.setQueryGenerationFrom(.current)
            let token = try XCTUnwrap(first.queryGenerationToken)
            try saveElsewhere(container) { $0.make("Tag", ["label": "two"]) }

            let second = container.newBackgroundContext()
            try second.performAndWait {
                try second.setQueryGenerationFrom(token)
                XCTAssertEqual(try second.all("Tag").count, 1, "[\(kind)] the shared generation")
                XCTAssertEqual(second.queryGenerationToken, token)
            }

            let archived = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
            let decoded = try XCTUnwrap(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSQueryGenerationToken.self, from: archived))
            XCTAssertEqual(decoded, token, "[\(kind)] a decoded token names the same generation")
            let third = container.newBackgroundContext()
            try third.performAndWait {
                XCTAssertThrowsError(try third.setQueryGenerationFrom(decoded), "[\(kind)] but holds no snapshot") { error in
                    XCTAssertEqual((error as NSError).code, NSPersistentStoreOperationError)
                }
            }
            let child = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
            child.parent = first
            XCTAssertThrowsError(try child.setQueryGenerationFrom(.current), "[\(kind)] a child reads through its parent")
        }
    }
}

/// A value set from a notification observer (called on the posting thread).
private final class Captured<Value>: @unchecked Sendable {
    var value: Value?
}
