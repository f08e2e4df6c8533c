import CoreDataBinaryStore
import CoreDataModel
import CoreDataPredicate
import CoreDataTestSupport
import Foundation
import XCTest
@testable import CoreDataStorage

// Foundation declares these names too; here they mean the working classes.
private typealias NSPredicate = CoreDataPredicate.NSPredicate
private typealias NSSortDescriptor = CoreDataPredicate.NSSortDescriptor

/// The binary store's fast fetch path (compiled predicate and sort over partly decoded records,
/// secondary indexes) against the reference execution (``StoreQuery`` with the reference
/// evaluator) on the same rows: every predicate, sort, offset and limit must give the same IDs in
/// the same order.
final class CompiledScanTests: XCTestCase {
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [
            attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType),
            attribute("rank", .integer64AttributeType), attribute("score", .doubleAttributeType),
            attribute("born", .dateAttributeType), attribute("flag", .booleanAttributeType),
            attribute("tag", .UUIDAttributeType), attribute("ratio", .floatAttributeType),
        ]
        person.indexes = [
            NSFetchIndexDescription(name: "byAge", elements: [NSFetchIndexElementDescription(propertyName: "age", collationType: .binary)]),
            NSFetchIndexDescription(name: "byName", elements: [NSFetchIndexElementDescription(propertyName: "name", collationType: .binary)]),
            NSFetchIndexDescription(name: "byScore", elements: [NSFetchIndexElementDescription(propertyName: "score", collationType: .binary)]),
            NSFetchIndexDescription(name: "byBorn", elements: [NSFetchIndexElementDescription(propertyName: "born", collationType: .binary)]),
        ]
        let model = NSManagedObjectModel()
        model.entities = [person]
        try? model.freeze()
        return model
    }()

    static let names = ["ada", "Ada", "alan", "Émile", "e\u{301}mile", "zoë", "Zed", "bob", "", "b", "ålesund", "🙂smile", "grace", "Grace"]

    static func rows() -> [StoreRow] {
        (Int64(1)...160).map { key -> StoreRow in
            var values: [String: StoreValue] = [:]
            let k = Int(key)
            if k % 11 != 0 { values["name"] = .string(names[k % names.count] + (k % 3 == 0 ? "" : "\(k % 7)")) }
            if k % 13 != 0 { values["age"] = .integer(Int64(k * 37 % 100)) }
            values["rank"] = .integer(Int64(k % 9) - 4)
            if k % 17 != 0 { values["score"] = .double(k % 29 == 0 ? .nan : Double(k % 50) / 4) }
            if k % 5 != 0 { values["born"] = .date(Date(timeIntervalSinceReferenceDate: Double(k % 40) * 86_400)) }
            values["flag"] = .bool(k % 2 == 0)
            if k % 4 == 0 { values["tag"] = .uuid(UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", k % 8)) ?? UUID()) }
            values["ratio"] = .double(Double(Float(k % 10) / 3))
            return StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: key), version: 1, values: values)
        }
    }

    static let predicates: [String] = [
        "age > 50", "age >= 50", "age < 20", "age <= 20", "age == 37", "age != 37", "age = nil", "age != nil",
        "age > 50.5", "age BETWEEN {10, 30}", "age IN {1, 37, 74, 99}", "NOT age > 50", "age > 50 AND flag == YES",
        "age > 50 OR name BEGINSWITH 'a'", "rank < 0", "rank == -4", "rank > -1 AND rank < 2", "rank == 2.0",
        "score > 5", "score >= 5.25", "score == 0", "score < 2 OR score > 10", "score BETWEEN {1, 3}", "score != 3.5",
        "born > %@", "born <= %@", "born == %@", "born == nil",
        "name == 'ada'", "name ==[c] 'ada'", "name == 'Émile'", "name ==[cd] 'emile'", "name < 'b'", "name >= 'Zed'",
        "name BEGINSWITH 'a'", "name BEGINSWITH[c] 'a'", "name ENDSWITH '3'", "name CONTAINS 'ra'", "name CONTAINS[cd] 'E'",
        "name LIKE 'a*'", "name LIKE[c] '?da'", "name MATCHES '[a-z]+[0-9]'", "name IN {'ada', 'bob', 'Zed'}", "name == nil",
        "name != nil AND age == nil", "name BETWEEN {'a', 'c'}",
        "flag == YES", "flag == 1", "flag != NO", "flag == TRUE AND NOT (age < 10)",
        "ratio > 1", "ratio == 1", "ratio < 0.4",
        "tag == nil", "tag != nil",
        "TRUEPREDICATE", "FALSEPREDICATE", "age > 50 AND age < 20", "(age > 90 OR age < 5) AND score > 1",
        "50 < age", "'b' > name", "NOT (name == nil OR age == nil)",
        "age > 50 AND rank < 0", "rank >= -2 AND rank <= 2 AND age > 10", "age > 40000", "age < 70 AND age > 30",
    ]

    fileprivate static func predicate(_ format: String) -> NSPredicate {
        NSPredicate(format: format, argumentArray: format.contains("%@") ? [Date(timeIntervalSinceReferenceDate: 10 * 86_400)] : [])
    }

    fileprivate static let sorts: [[NSSortDescriptor]] = [
        [],
        [NSSortDescriptor(key: "name", ascending: true)],
        [NSSortDescriptor(key: "name", ascending: false)],
        [NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "name", ascending: true)],
        [NSSortDescriptor(key: "score", ascending: false)],
        [NSSortDescriptor(key: "born", ascending: true), NSSortDescriptor(key: "rank", ascending: false)],
        [NSSortDescriptor(key: "name", ascending: true, selector: .caseInsensitiveCompare)],
        [NSSortDescriptor(key: "flag", ascending: true), NSSortDescriptor(key: "ratio", ascending: true)],
    ]

    static func describe(_ row: StoreRow) -> String {
        "\(row.objectID) v\(row.version) " + row.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }

    /// A top-k fetch over many records, where the raw first look (integer tests and the sort
    /// string's bytes against the last of k matches) skips most of them: the same rows as the
    /// reference, with ties, nulls, non-ASCII names, and values in the log and in pages.
    func testTopKOnRawBytesMatchesTheReference() throws {
        let store = try BinaryStore(path: BinaryTestModel.temporaryPath(), model: Self.model, metadata: StoreMetadata())
        var generator = SystemRandomNumberGenerator()
        let pool = ["ann", "Bob", "bob", "carl", "Émile", "zoë", "", "a", "ab", "abc", "zz", "Zz", "b\u{301}", "mia"]
        let rows = (Int64(1)...3_000).map { key -> StoreRow in
            var values: [String: StoreValue] = [:]
            if Int.random(in: 0..<20, using: &generator) != 0 {
                values["name"] = .string(pool.randomElement(using: &generator)! + (Bool.random(using: &generator) ? "" : "\(Int.random(in: 0..<50, using: &generator))"))
            }
            if Int.random(in: 0..<15, using: &generator) != 0 { values["age"] = .integer(Int64.random(in: 0..<100, using: &generator)) }
            values["rank"] = .integer(Int64.random(in: -4...4, using: &generator))
            return StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: key), version: 0, values: values)
        }
        _ = try store.save(StoreChangeSet(inserted: Array(rows[..<2_000])))
        try store.checkpoint()
        _ = try store.save(StoreChangeSet(inserted: Array(rows[2_000...])))
        let stored = rows.map { row -> StoreRow in
            var copy = row
            copy.version = 1
            return copy
        }
        let entity = try XCTUnwrap(Self.model.entitiesByName["Person"])
        for format in ["age > 50", "age > 50 AND rank < 2", "rank == 0", "TRUEPREDICATE", "name != nil"] {
            for ascending in [true, false] {
                for (offset, limit) in [(0, 25), (7, 100), (0, 1)] {
                    let request = StoreFetchRequest(
                        entity: entity, predicate: Self.predicate(format), sortDescriptors: [NSSortDescriptor(key: "name", ascending: ascending)],
                        offset: offset, limit: limit)
                    let expected = StoreQuery.run(request, candidates: stored, resolve: { _ in nil }, entities: Self.model.entitiesByName)
                    guard case .rows(let got) = try store.execute(request) else { return XCTFail("rows expected") }
                    XCTAssertEqual(got.map(\.objectID), expected.map(\.objectID), "\(format) ascending \(ascending) offset \(offset) limit \(limit)")
                }
            }
        }
        try store.close()
    }

    func testCompiledPredicateAgreesWithTheEvaluatorOnEveryRow() throws {
        let entity = try XCTUnwrap(Self.model.entitiesByName["Person"])
        let rows = Self.rows()
        var compiledCount = 0
        for format in Self.predicates {
            let request = StoreFetchRequest(entity: entity, predicate: Self.predicate(format))
            guard let compiled = CompiledFetch.compile(request), let filter = compiled.filter else {
                XCTFail("\(format) does not compile")
                continue
            }
            compiledCount += 1
            for row in rows {
                let reference = request.predicate?.evaluate(with: RowObject(row: row, resolve: { _ in nil }, entities: Self.model.entitiesByName)) ?? true
                XCTAssertEqual(filter(compiled.slots(of: row)), reference, "\(format) on \(row.objectID): \(row.values)")
            }
        }
        XCTAssertEqual(compiledCount, Self.predicates.count, "every predicate of the table reads plain attributes, so every one compiles")
    }

    func testStoreFetchesMatchTheReferenceForEveryPredicateSortAndPage() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try BinaryStore(path: path, model: Self.model, metadata: StoreMetadata())
        let rows = Self.rows()
        _ = try store.save(StoreChangeSet(inserted: rows.map { StoreRow(objectID: $0.objectID, version: 0, values: $0.values) }))
        // Half the rows in pages, the rest updated into the log, so both kinds of location are read.
        try store.checkpoint()
        _ = try store.save(StoreChangeSet(updated: rows.filter { $0.objectID.primaryKey % 2 == 0 }))
        let stored = rows.map { row -> StoreRow in
            var copy = row
            copy.version = row.objectID.primaryKey % 2 == 0 ? 2 : 1
            return copy
        }
        let entity = try XCTUnwrap(Self.model.entitiesByName["Person"])
        var checked = 0
        for format in Self.predicates {
            // The reference filter once per predicate (the evaluator is slow in debug builds);
            // the reference sort and paging then run over what it kept.
            let filtered = StoreQuery.run(StoreFetchRequest(entity: entity, predicate: Self.predicate(format)), candidates: stored,
                                          resolve: { _ in nil }, entities: Self.model.entitiesByName)
            for sort in Self.sorts {
                for (offset, limit) in sort.isEmpty ? [(0, 0), (150, 20)] : [(0, 0), (5, 10)] {
                    let request = StoreFetchRequest(entity: entity, predicate: Self.predicate(format), sortDescriptors: sort, offset: offset, limit: limit)
                    let expected = StoreQuery.run(StoreFetchRequest(entity: entity, sortDescriptors: sort, offset: offset, limit: limit), candidates: filtered, resolve: { _ in nil }, entities: Self.model.entitiesByName)
                    guard case .rows(let got) = try store.execute(request) else { return XCTFail("rows expected") }
                    XCTAssertEqual(got.map(\.objectID), expected.map(\.objectID), "\(format) sorted by \(sort) offset \(offset) limit \(limit)")
                    // Described, because a NaN value makes equal rows compare unequal.
                    XCTAssertEqual(got.map(Self.describe), expected.map(Self.describe), "\(format): rows differ")
                    var counting = request
                    counting.resultType = .count
                    guard case .count(let count) = try store.execute(counting) else { return XCTFail("count expected") }
                    XCTAssertEqual(count, expected.count, "count of \(format) offset \(offset) limit \(limit)")
                    checked += 1
                }
            }
        }
        XCTAssertEqual(checked, Self.predicates.count * Self.sorts.count * 2)
        // A save drops the indexes of what it changes; the next fetch sees the new values.
        var changed = rows[0]
        changed.version = 1
        changed.values["age"] = .integer(99)
        changed.values["name"] = .string("zzz")
        _ = try store.save(StoreChangeSet(updated: [changed]))
        let request = StoreFetchRequest(entity: entity, predicate: NSPredicate(format: "age == 99 AND name == 'zzz'"))
        guard case .objectIDs(let ids) = try store.execute({ var r = request; r.resultType = .objectIDs; return r }()) else { return XCTFail("IDs expected") }
        XCTAssertEqual(ids, [changed.objectID])
        try store.close()
    }
}
