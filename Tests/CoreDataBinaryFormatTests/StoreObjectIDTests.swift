import CoreDataModel
import CoreDataStorage
import Foundation
import XCTest

/// Object IDs carry an entity number, not a name: equal names must get equal numbers on every
/// thread, names must come back exactly, and the order of IDs must stay by name.
final class StoreObjectIDTests: XCTestCase {
    func testEqualNamesGetEqualNumbersAndNamesRoundTrip() {
        let prefix = "EntityNumberTests-\(UUID().uuidString)-"
        // Enough names to cross several of the table's chunk boundaries (64, 192, 448, ...).
        let names = (0..<3_000).map { "\(prefix)\($0)" } + ["", "Ünïcödé", "e\u{301}"]
        let numbers = names.map(EntityNumber.init)
        XCTAssertEqual(Set(numbers).count, names.count)
        for (name, number) in zip(names, numbers) {
            XCTAssertEqual(number.name, name)
            XCTAssertEqual(EntityNumber(name), number)
        }
        let id = StoreObjectID(entityName: names[7], primaryKey: 42)
        XCTAssertEqual(id, StoreObjectID(entity: numbers[7], primaryKey: 42))
        XCTAssertEqual(id.entityName, names[7])
        XCTAssertEqual(id.description, "\(names[7])/p42")
        var renamed = id
        renamed.entityName = names[8]
        XCTAssertEqual(renamed.entity, numbers[8])
    }

    func testThreadsInterningTheSameNamesAgree() {
        let prefix = "EntityNumberThreads-\(UUID().uuidString)-"
        let names = (0..<500).map { "\(prefix)\($0)" }
        let results = ThreadResults(count: 8)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            // Each thread walks the names in its own order, so first sightings race.
            let order = thread.isMultiple(of: 2) ? Array(names.indices) : names.indices.reversed()
            var mine = [UInt32](repeating: 0, count: names.count)
            for index in order { mine[index] = EntityNumber(names[index]).rawValue }
            results.set(thread, mine)
        }
        let first = results.get(0)
        XCTAssertEqual(Set(first).count, names.count)
        for thread in 1..<8 { XCTAssertEqual(results.get(thread), first) }
        for (index, raw) in first.enumerated() { XCTAssertEqual(EntityNumber(names[index]).rawValue, raw) }
    }

    func testOrderIsByNameThenKeyWhateverTheInterningOrder() {
        let prefix = "EntityNumberOrder-\(UUID().uuidString)-"
        // "b" is seen first, so it has the smaller number; the order must still put "a" first.
        let b = StoreObjectID(entityName: prefix + "b", primaryKey: 1)
        let a = StoreObjectID(entityName: prefix + "a", primaryKey: 2)
        XCTAssertLessThan(b.entity.rawValue, a.entity.rawValue)
        XCTAssertEqual([b, a, StoreObjectID(entityName: prefix + "a", primaryKey: 1)].sorted(),
                       [StoreObjectID(entityName: prefix + "a", primaryKey: 1), a, b])
    }

    /// The layout a fetch's memory depends on: an ID of two words with no reference count, and
    /// a value slot of 24 bytes (32 when an ID held the name).
    func testLayoutOfIDsAndValues() {
        XCTAssertEqual(MemoryLayout<StoreObjectID>.size, 16)
        XCTAssertTrue(_isPOD(StoreObjectID.self))
        XCTAssertEqual(MemoryLayout<StoreValue>.stride, 24)
        XCTAssertEqual(MemoryLayout<StoreValue?>.stride, 24)
    }
}

/// Per-thread result slots behind one lock.
private final class ThreadResults: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [[UInt32]]
    init(count: Int) { slots = Array(repeating: [], count: count) }
    func set(_ index: Int, _ value: [UInt32]) { lock.withLock { slots[index] = value } }
    func get(_ index: Int) -> [UInt32] { lock.withLock { slots[index] } }
}
