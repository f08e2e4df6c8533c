import CoreData
import Foundation
import XCTest

private typealias NSPredicate = CoreData.NSPredicate
private typealias NSSortDescriptor = CoreData.NSSortDescriptor

/// `NSAsynchronousFetchRequest` through `context.execute(_:)`, against every store (``StoreKind``).
final class AsynchronousFetchConformanceTests: XCTestCase {
    /// What a completion block saw, handed back to the test thread.
    private final class Outcome: @unchecked Sendable {
        var names: [String]?
        var error: Error?
        var onContextQueue = false
        var calls = 0
    }

    private func seedAuthors(_ container: NSPersistentContainer, count: Int) throws {
        let context = container.viewContext
        for index in 0..<count { context.make("Author", ["name": String(format: "A%03d", index), "rating": Int16(index % 6)]) }
        try context.save()
    }

    func testAsynchronousFetchDeliversItsResultOnTheContextQueue() {
        forEachStore { kind, container in
            try seedAuthors(container, count: 150)
            let context = container.newBackgroundContext()
            let outcome = Outcome()
            let done = expectation(description: "completion [\(kind)]")
            let fetch = NSFetchRequest<NSManagedObject>(entityName: "Author")
            fetch.predicate = NSPredicate(format: "rating >= 3")
            fetch.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let request = NSAsynchronousFetchRequest(fetchRequest: fetch) { result in
                outcome.calls += 1
                outcome.names = result.finalResult.map { names($0) }
                outcome.error = result.operationError
                outcome.onContextQueue = result.managedObjectContext === context
                done.fulfill()
            }
            request.estimatedResultCount = 50
            let running = try context.performAndWait { () throws -> NSAsynchronousFetchResult<NSManagedObject>? in
                let result = try context.execute(request) as? NSAsynchronousFetchResult<NSManagedObject>
                XCTAssertNil(result?.finalResult, "[\(kind)] execute returns before the fetch runs")
                return result
            }
            wait(for: [done], timeout: 30)
            let result = try XCTUnwrap(running)
            XCTAssertEqual(outcome.calls, 1, "[\(kind)]")
            XCTAssertNil(outcome.error, "[\(kind)]")
            XCTAssertTrue(outcome.onContextQueue, "[\(kind)]")
            let expected = (0..<150).filter { $0 % 6 >= 3 }.map { String(format: "A%03d", $0) }
            XCTAssertEqual(outcome.names, expected, "[\(kind)]")
            XCTAssertEqual(result.finalResult?.count, expected.count, "[\(kind)]")
            XCTAssertTrue(result.fetchRequest === request, "[\(kind)]")
            let progress = try XCTUnwrap(result.progress)
            XCTAssertEqual(progress.totalUnitCount, Int64(expected.count), "[\(kind)] the total becomes the number of results")
            XCTAssertEqual(progress.completedUnitCount, progress.totalUnitCount, "[\(kind)]")
            XCTAssertTrue(progress.isFinished, "[\(kind)]")
        }
    }

    func testProgressIsAChildOfTheCurrentProgress() {
        forEachStore { kind, container in
            try seedAuthors(container, count: 10)
            let context = container.newBackgroundContext()
            let done = expectation(description: "completion [\(kind)]")
            let request = NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<NSManagedObject>(entityName: "Author")) { _ in done.fulfill() }
            let parent = Progress(totalUnitCount: 1)
            parent.becomeCurrent(withPendingUnitCount: 1)
            let running = try context.performAndWait { try context.execute(request) as? NSAsynchronousFetchResult<NSManagedObject> }
            parent.resignCurrent()
            wait(for: [done], timeout: 30)
            XCTAssertEqual(running?.finalResult?.count, 10, "[\(kind)]")
            XCTAssertEqual(parent.fractionCompleted, 1, accuracy: 0.0001, "[\(kind)] the parent progress completes with the fetch")
        }
    }

    func testCancellingBeforeTheFetchRunsDeliversACancellationError() {
        forEachStore { kind, container in
            try seedAuthors(container, count: 10)
            let context = container.newBackgroundContext()
            let outcome = Outcome()
            let done = expectation(description: "completion [\(kind)]")
            let request = NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<NSManagedObject>(entityName: "Author")) { result in
                outcome.calls += 1
                outcome.names = result.finalResult.map { names($0) }
                outcome.error = result.operationError
                done.fulfill()
            }
            let running = try context.performAndWait { () throws -> NSAsynchronousFetchResult<NSManagedObject>? in
                // The fetch is queued behind this block, so it is cancelled before it starts.
                let result = try context.execute(request) as? NSAsynchronousFetchResult<NSManagedObject>
                result?.cancel()
                return result
            }
            wait(for: [done], timeout: 30)
            XCTAssertEqual(outcome.calls, 1, "[\(kind)] the completion block still learns that the request is over")
            XCTAssertNil(outcome.names, "[\(kind)]")
            XCTAssertNil(running?.finalResult, "[\(kind)]")
            XCTAssertEqual((outcome.error as NSError?)?.code, NSUserCancelledError, "[\(kind)]")
            XCTAssertEqual((running?.operationError as NSError?)?.domain, NSCocoaErrorDomain, "[\(kind)]")
            XCTAssertTrue(running?.progress?.isCancelled == true, "[\(kind)]")
        }
    }

    func testCancellingStopsAFetchUnderWay() {
        forEachStore { kind, container in
            try seedAuthors(container, count: 300)
            let context = container.newBackgroundContext()
            let outcome = Outcome()
            let done = expectation(description: "completion [\(kind)]")
            let fetch = NSFetchRequest<NSManagedObject>(entityName: "Author")
            fetch.returnsObjectsAsFaults = false
            let request = NSAsynchronousFetchRequest(fetchRequest: fetch) { result in
                outcome.error = result.operationError
                outcome.names = result.finalResult.map { names($0) }
                done.fulfill()
            }
            var awakened = 0
            try context.performAndWait {
                let running = try context.execute(request) as? NSAsynchronousFetchResult<NSManagedObject>
                // The first fetched object cancels the request while the fetch registers the rest.
                AuthorObject.awakeFromFetchHook = {
                    awakened += 1
                    if awakened == 1 { running?.cancel() }
                }
            }
            wait(for: [done], timeout: 30)
            AuthorObject.awakeFromFetchHook = nil
            XCTAssertEqual((outcome.error as NSError?)?.code, NSUserCancelledError, "[\(kind)]")
            XCTAssertNil(outcome.names, "[\(kind)]")
            XCTAssertLessThan(awakened, 300, "[\(kind)] the fetch stopped early")
        }
    }

    func testErrorsOfTheFetchArriveInTheResult() {
        forEachStore { kind, container in
            let context = container.newBackgroundContext()
            let outcome = Outcome()
            let done = expectation(description: "completion [\(kind)]")
            let fetch = NSFetchRequest<NSManagedObject>(entityName: "Author")
            fetch.predicate = NSPredicate(format: "nickname == 'x'")
            let request = NSAsynchronousFetchRequest(fetchRequest: fetch) { result in
                outcome.error = result.operationError
                done.fulfill()
            }
            _ = try context.performAndWait { try context.execute(request) }
            wait(for: [done], timeout: 30)
            XCTAssertTrue((outcome.error as NSError?)?.localizedDescription.contains("nickname") == true, "[\(kind)] \(String(describing: outcome.error))")
        }
    }

    func testTypedAsynchronousFetch() {
        forEachStore { kind, container in
            try seedAuthors(container, count: 12)
            let context = container.newBackgroundContext()
            let outcome = Outcome()
            let done = expectation(description: "completion [\(kind)]")
            let typed = try NSFetchRequest<AuthorObject>(predicate: #Predicate { $0.rating == 5 }, sortBy: [SortDescriptor(\.rating)])
            let request = NSAsynchronousFetchRequest(fetchRequest: typed) { result in
                outcome.names = result.finalResult?.compactMap(\.name)
                done.fulfill()
            }
            _ = try context.performAndWait { try context.execute(request) }
            wait(for: [done], timeout: 30)
            XCTAssertEqual(outcome.names.map(Set.init), ["A005", "A011"], "[\(kind)]")
        }
    }
}
