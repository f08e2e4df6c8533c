import CoreDataBinaryFormat
@testable import CoreDataBinaryStore
import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

// Foundation declares these names too; here they mean the working classes.
private typealias NSPredicate = CoreDataPredicate.NSPredicate
private typealias NSSortDescriptor = CoreDataPredicate.NSSortDescriptor

/// Top-k scans that pass over whole data pages (``PageSortBounds``): a scan sorted by a string
/// attribute learns each page's least and greatest sort string, and a later scan holding k
/// matches skips the pages that cannot hold a better one. Every fetch is compared with the
/// reference evaluator over the same rows, through saves that move records out of their pages,
/// deletes, checkpoints, compaction, nulls, non-ASCII strings and prefixes longer than 8 bytes.
final class PageSortBoundsTests: XCTestCase {
    private static let model = PersonModel.model

    private static let fetches: [(format: String, ascending: Bool, offset: Int, limit: Int)] = [
        ("age > 50", true, 0, 10), ("age > 50", false, 0, 10), ("TRUEPREDICATE", true, 0, 1), ("TRUEPREDICATE", false, 5, 20),
        ("age < 30 AND age > 10", true, 3, 25), ("note != nil", true, 0, 40), ("name BEGINSWITH 'shared-prefix'", false, 0, 15),
    ]

    /// A name from a mix meant to test the bounds: random letters, a prefix longer than 8 bytes
    /// that many names share, and in a few runs of keys a null or a non-ASCII name (a page
    /// holding one is never passed over).
    private func name(_ key: Int64, _ random: inout SeededGenerator) -> StoreValue {
        if key % 2_000 < 3 { return .null }
        if key % 3_000 < 3 { return .string("zoë \(random.next() % 50)") }
        if random.next() % 6 == 0 { return .string("shared-prefix-\(random.next() % 1_000)") }
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ")
        let length = 3 + Int(random.next() % 10)
        let start = String((0..<length).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
        return .string(start + ", a name long enough for many pages \(key)")
    }

    private func row(_ key: Int64, _ random: inout SeededGenerator, version: Int64 = 0) -> StoreRow {
        var values: [String: StoreValue] = ["age": .integer(Int64(random.next() % 100))]
        let name = name(key, &random)
        if name != .null { values["name"] = name }
        if random.next() % 3 == 0 { values["note"] = .string("note \(key)") }
        return StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: key), version: version, values: values)
    }

    /// Runs every fetch twice (the first learns bounds, the second uses them) against the
    /// reference; returns how many records the store passed over with their pages meanwhile.
    @discardableResult
    private func check(_ store: BinaryStore, _ rows: [StoreObjectID: StoreRow], _ context: String) throws -> Int {
        let entity = try XCTUnwrap(Self.model.entitiesByName["Person"])
        let before = store.pageSortBounds.counts.passedOver
        for _ in 0..<2 {
            for fetch in Self.fetches {
                let request = StoreFetchRequest(
                    entity: entity, predicate: NSPredicate(format: fetch.format), sortDescriptors: [NSSortDescriptor(key: "name", ascending: fetch.ascending)],
                    offset: fetch.offset, limit: fetch.limit)
                let expected = StoreQuery.run(request, candidates: Array(rows.values), resolve: { _ in nil }, entities: Self.model.entitiesByName)
                guard case .rows(let got) = try store.execute(request) else { return -1 }
                XCTAssertEqual(got.map(\.objectID), expected.map(\.objectID), "\(context): \(fetch)")
            }
        }
        return store.pageSortBounds.counts.passedOver - before
    }

    private func open(_ path: String) throws -> BinaryStore { try PersonModel.open(path) }

    func testTopKScansPassOverPagesAndMatchTheReference() throws {
        let path = BinaryTestModel.temporaryPath()
        var store = try open(path)
        var random = SeededGenerator(seed: 0x50_47_42)
        var rows: [StoreObjectID: StoreRow] = [:]
        var nextKey: Int64 = 1
        func insert(_ count: Int) throws {
            var inserted: [StoreRow] = []
            for _ in 0..<count {
                var new = row(nextKey, &random)
                nextKey += 1
                inserted.append(new)
                new.version = 1
                rows[new.objectID] = new
            }
            _ = try store.save(StoreChangeSet(inserted: inserted))
        }
        for _ in 0..<3 {
            try insert(3_000)
            try store.checkpoint()
        }
        try insert(500)  // in the log: never passed over

        XCTAssertGreaterThan(try check(store, rows, "pages and log"), 5_000, "later scans pass over pages")
        XCTAssertGreaterThan(store.pageSortBounds.counts.pages, 30)

        // Saves move records out of their pages, deletes remove them, inserts add new ones; the
        // old pages' bounds still hold, the new pages' are learned.
        for round in 0..<3 {
            var updated: [StoreRow] = []
            var deleted: [(StoreObjectID, Int64)] = []
            for id in rows.keys.sorted(by: { $0.primaryKey < $1.primaryKey }) where random.next() % 6 == 0 {
                let version = try XCTUnwrap(rows[id]?.version)
                if random.next() % 4 == 0 {
                    deleted.append((id, version))
                    rows[id] = nil
                } else {
                    var changed = row(id.primaryKey, &random, version: version)
                    updated.append(changed)
                    changed.version += 1
                    rows[id] = changed
                }
            }
            _ = try store.save(StoreChangeSet(updated: updated, deleted: deleted))
            try insert(300)
            try check(store, rows, "round \(round), saved")
            if round % 2 == 1 { try store.checkpoint() }
            try check(store, rows, "round \(round), checkpointed")
        }

        try store.compact()
        XCTAssertEqual(store.pageSortBounds.counts.pages, 0, "compaction forgets the old file's bounds")
        XCTAssertGreaterThan(try check(store, rows, "compacted"), 5_000)
        try store.close()

        store = try open(path)
        XCTAssertEqual(store.pageSortBounds.counts.pages, 0)
        try check(store, rows, "reopened")
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()
    }

    /// Another handle's saves move records out of pages this handle learned bounds for, and its
    /// checkpoint and compaction give this handle a new index (a new file, for compaction): the
    /// fetches stay right throughout, and a new file's pages start without bounds.
    func testAnotherHandlesSavesCheckpointsAndCompactionKeepFetchesRight() throws {
        let path = BinaryTestModel.temporaryPath()
        let first = try open(path)
        var random = SeededGenerator(seed: 0x0_7E_12)
        var rows: [StoreObjectID: StoreRow] = [:]
        var inserted: [StoreRow] = []
        for key in Int64(1)...6_000 {
            var new = row(key, &random)
            inserted.append(new)
            new.version = 1
            rows[new.objectID] = new
        }
        _ = try first.save(StoreChangeSet(inserted: inserted))
        try first.checkpoint()
        XCTAssertGreaterThan(try check(first, rows, "before"), 2_000)

        let second = try open(path)
        for round in 0..<3 {
            var updated: [StoreRow] = []
            for id in rows.keys.sorted(by: { $0.primaryKey < $1.primaryKey }) where random.next() % 5 == 0 {
                let version = try XCTUnwrap(rows[id]?.version)
                var changed = row(id.primaryKey, &random, version: version)
                updated.append(changed)
                changed.version += 1
                rows[id] = changed
            }
            _ = try second.save(StoreChangeSet(updated: updated))
            try check(first, rows, "round \(round), the other handle saved")
            switch round {
            case 0: try second.checkpoint()
            case 1: try second.compact()
            default: break
            }
            try check(first, rows, "round \(round), the other handle checkpointed or compacted")
        }
        XCTAssertTrue(try first.verify().isIntact)
        try second.close()
        try first.close()
    }

    /// Pages walked in bound order, out of key order: the later keys' pages (least name "a-…")
    /// come first and fill the matches with ties ("m…") of large keys, then the earlier keys'
    /// pages ("b-…") hold ties of smaller keys, which must replace them, as the reference orders
    /// ties by object ID.
    func testTiesWalkedOutOfKeyOrderMatchTheReference() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        var rows: [StoreObjectID: StoreRow] = [:]
        for (chunk, rare) in [(0, "b"), (1, "a")] {
            var inserted: [StoreRow] = []
            for key in Int64(chunk * 3_000 + 1)...Int64(chunk * 3_000 + 3_000) {
                let name = key % 100 == 0 ? "\(rare)-\(key)" : "m, a name that many records share"
                var new = StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: key), version: 0, values: [
                    "name": .string(name), "age": .integer(key % 100),
                ])
                inserted.append(new)
                new.version = 1
                rows[new.objectID] = new
            }
            _ = try store.save(StoreChangeSet(inserted: inserted))
            try store.checkpoint()
        }
        try check(store, rows, "ties")
        XCTAssertGreaterThan(store.pageSortBounds.counts.pages, 10, "the second round of fetches walked pages in bound order")
        try store.close()
    }

    /// A record whose integer the filter tests is null cannot be judged on raw bytes, but its
    /// sort string still bounds its page: pages full of such records are passed over too.
    func testRecordsWithANullTestedIntegerStillBoundTheirPage() throws {
        let store = try open(BinaryTestModel.temporaryPath())
        var rows: [StoreObjectID: StoreRow] = [:]
        var inserted: [StoreRow] = []
        for key in Int64(1)...6_000 {
            var values: [String: StoreValue] = ["name": .string(String(format: "name %05d and a tail to fill pages", 6_001 - key))]
            if key % 10 != 0 { values["age"] = .integer(key % 100) }
            var new = StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: key), version: 0, values: values)
            inserted.append(new)
            new.version = 1
            rows[new.objectID] = new
        }
        _ = try store.save(StoreChangeSet(inserted: inserted))
        try store.checkpoint()
        XCTAssertGreaterThan(try check(store, rows, "null ages"), 5_000)
        try store.close()
    }

    func testBoundsOrderPrefixesAsTheirStrings() {
        func prefix(_ text: String) -> UInt64? { Array(text.utf8).withUnsafeBufferPointer { PageSortBounds.prefix($0) } }
        let ordered = ["", "\u{0}", "a", "a\u{0}", "ab", "abcdefgh", "abcdefgh0", "abcdefgi", "b", "shared-prefix-1", "shared-prefix-2"]
        for (s, t) in zip(ordered, ordered.dropFirst()) {
            let (p, q) = (prefix(s), prefix(t))
            XCTAssertNotNil(p)
            XCTAssertLessThanOrEqual(p ?? 0, q ?? 0, "\(s) < \(t)")
        }
        XCTAssertNil(prefix("zoë"))
        XCTAssertNil(prefix("abcdefghé"), "a non-ASCII byte past the first 8 makes the string unordered by bytes")
        var bounds = PageSortBounds.empty
        bounds.include(prefix("m"))
        bounds.include(prefix("q"))
        XCTAssertTrue(bounds.allSort(after: prefix("l") ?? 0, ascending: true))
        XCTAssertFalse(bounds.allSort(after: prefix("m") ?? 0, ascending: true), "a tie is not passed over")
        XCTAssertTrue(bounds.allSort(after: prefix("r") ?? 0, ascending: false))
        XCTAssertFalse(bounds.allSort(after: prefix("q") ?? 0, ascending: false))
        bounds.include(nil)
        XCTAssertEqual(bounds, .unbounded)
        XCTAssertFalse(bounds.allSort(after: 0, ascending: true))
        XCTAssertFalse(bounds.allSort(after: .max, ascending: false))
    }
}
