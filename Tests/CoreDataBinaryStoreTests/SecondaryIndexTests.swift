@testable import CoreDataBinaryStore
import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

// Foundation declares these names too; here they mean the working classes.
private typealias NSPredicate = CoreDataPredicate.NSPredicate

/// Secondary indexes (Formats/binary-store.md §7.1) kept current by saves: after every save,
/// fetches an index narrows give what the reference evaluator gives over the same rows, the
/// indexes stay built (no rebuild from the records), and another process's save, whose values
/// the handle does not see, drops them.
final class SecondaryIndexTests: XCTestCase {
    private static let model: NSManagedObjectModel = {
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [
            AllTypesModel.attribute("name", .stringAttributeType), AllTypesModel.attribute("age", .integer32AttributeType),
            AllTypesModel.attribute("score", .doubleAttributeType), AllTypesModel.attribute("born", .dateAttributeType),
        ]
        person.indexes = ["age", "name", "score", "born"].map {
            NSFetchIndexDescription(name: "by\($0)", elements: [NSFetchIndexElementDescription(propertyName: $0, collationType: .binary)])
        }
        let model = NSManagedObjectModel()
        model.entities = [person]
        try? model.freeze()
        return model
    }()

    private static let day = Date(timeIntervalSinceReferenceDate: 20 * 86_400)
    private static let predicates = [
        "age > 50", "age <= 20", "age == 37", "age BETWEEN {10, 30}", "score >= 5.5", "score < 2",
        "born > %@", "born == %@", "name == 'n7'", "name < 'n3'", "name BETWEEN {'n2', 'n5'}", "age > 50 AND score < 5",
    ]

    private func row(_ key: Int64, _ random: inout SeededGenerator, version: Int64 = 0) -> StoreRow {
        var values: [String: StoreValue] = [:]
        // Now and then a value is nil (or NaN), which no index holds.
        if random.next() % 9 != 0 { values["age"] = .integer(Int64(random.next() % 100)) }
        if random.next() % 9 != 0 { values["name"] = .string("n\(random.next() % 12)") }
        if random.next() % 9 != 0 { values["score"] = .double(random.next() % 31 == 0 ? .nan : Double(random.next() % 40) / 4) }
        if random.next() % 9 != 0 { values["born"] = .date(Date(timeIntervalSinceReferenceDate: Double(random.next() % 40) * 86_400)) }
        return StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: key), version: version, values: values)
    }

    private func check(_ store: BinaryStore, _ rows: [StoreObjectID: StoreRow], _ context: String) throws {
        let entity = try XCTUnwrap(Self.model.entitiesByName["Person"])
        for format in Self.predicates {
            let predicate = NSPredicate(format: format, argumentArray: format.contains("%@") ? [Self.day] : [])
            let expected = StoreQuery.run(StoreFetchRequest(entity: entity, predicate: predicate), candidates: Array(rows.values),
                                          resolve: { _ in nil }, entities: Self.model.entitiesByName)
            var request = StoreFetchRequest(entity: entity, predicate: predicate)
            request.resultType = .objectIDs
            guard case .objectIDs(let ids) = try store.execute(request) else { return XCTFail("IDs expected") }
            XCTAssertEqual(Set(ids), Set(expected.map(\.objectID)), "\(context): \(format)")
        }
    }

    /// A new store at `path` holding `count` random rows, checked once (which builds every
    /// index), with the rows and the generator that made them.
    private func seededStore(_ path: String, seed: UInt64, count: Int64) throws -> (BinaryStore, [StoreObjectID: StoreRow], SeededGenerator) {
        let store = try BinaryStore(path: path, model: Self.model, metadata: StoreMetadata())
        var random = SeededGenerator(seed: seed)
        var rows: [StoreObjectID: StoreRow] = [:]
        let initial = (Int64(1)...count).map { row($0, &random) }
        _ = try store.save(StoreChangeSet(inserted: initial))
        for row in initial { rows[row.objectID] = row }
        try check(store, rows, "after the first save")
        return (store, rows, random)
    }

    func testIndexesFollowEverySaveAndAgreeWithTheReference() throws {
        let (store, initialRows, seeded) = try seededStore(BinaryTestModel.temporaryPath(), seed: 0x5EC0_17DE, count: 400)
        var (rows, random) = (initialRows, seeded)
        let built = store.secondaryLock.withLock { store.secondaryIndexes.values.reduce(0) { $0 + $1.count } }
        XCTAssertEqual(built, 4, "every indexed attribute's index is built by the fetches that use it")

        var nextKey: Int64 = 401
        // Enough changes to fold the kept changes into the sorted entries more than once.
        for round in 0..<30 {
            let keys = rows.keys.sorted { $0.primaryKey < $1.primaryKey }
            var updated: [StoreRow] = []
            var deleted: [(StoreObjectID, Int64)] = []
            for id in keys where random.next() % 2 == 0 {
                let version = try XCTUnwrap(rows[id]?.version)
                if random.next() % 10 == 0 {
                    deleted.append((id, version == 0 ? 1 : version))
                    rows[id] = nil
                } else {
                    var changed = row(id.primaryKey, &random, version: version == 0 ? 1 : version)
                    updated.append(changed)
                    changed.version += 1
                    rows[id] = changed
                }
            }
            var inserted: [StoreRow] = []
            for _ in 0..<Int(random.next() % 40) {
                inserted.append(row(nextKey, &random))
                nextKey += 1
            }
            for row in inserted { rows[row.objectID] = row }
            _ = try store.save(StoreChangeSet(inserted: inserted, updated: updated, deleted: deleted))
            if round == 12 { try store.checkpoint() }
            try check(store, rows, "round \(round)")
            let kept = store.secondaryLock.withLock { store.secondaryIndexes.values.reduce(0) { $0 + $1.count } }
            XCTAssertEqual(kept, 4, "round \(round): a save keeps the indexes, it does not drop them")
        }
        try store.close()
    }

    /// A save that fails (a version conflict) changes no index; saves from several threads at
    /// once, published together by one group commit, each reach the indexes.
    func testAFailedSaveChangesNothingAndConcurrentSavesAllReachTheIndexes() throws {
        let (store, initialRows, seeded) = try seededStore(BinaryTestModel.temporaryPath(), seed: 99, count: 300)
        var (rows, random) = (initialRows, seeded)

        let stale = row(1, &random, version: 7)
        XCTAssertThrowsError(try store.save(StoreChangeSet(updated: [stale])))
        try check(store, rows, "after a failed save")

        // Eight threads, each saving its own keys one at a time.
        let changed = (Int64(1)...240).map { row($0, &random, version: 1) }
        let failed = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for row in changed where Int(row.objectID.primaryKey) % 8 == thread {
                if (try? store.save(StoreChangeSet(updated: [row]))) == nil { failed.add() }
            }
        }
        XCTAssertEqual(failed.value, 0, "every save succeeds")
        for row in changed {
            var stored = row
            stored.version = 2
            rows[row.objectID] = stored
        }
        try check(store, rows, "after concurrent saves")
        try store.close()
    }

    /// A save of another handle reaches this one through the log, without the saved values: the
    /// indexes of what it changed are dropped and built again by the next fetch.
    func testAnotherHandlesSaveDropsTheIndexesAndTheNextFetchRebuildsThem() throws {
        let path = BinaryTestModel.temporaryPath()
        let (first, initialRows, seeded) = try seededStore(path, seed: 7, count: 200)
        var (rows, random) = (initialRows, seeded)

        let second = try BinaryStore(path: path, model: Self.model, metadata: StoreMetadata())
        let changed = row(5, &random, version: 1)
        _ = try second.save(StoreChangeSet(updated: [changed]))
        var stored = changed
        stored.version = 2
        rows[changed.objectID] = stored
        try check(first, rows, "after the other handle's save")
        try second.close()
        try first.close()
    }
}

/// A count several threads add to.
private final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
