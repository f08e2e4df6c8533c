import CoreDataBinaryFormat
@testable import CoreDataBinaryStore
import CoreDataModel
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// The page cache's position table against `Dictionary` as a model, and the cache's counts and
/// bound as a store reports them.
final class PageCacheTests: XCTestCase {
    /// Random sets, replacements and removals (most of them evictions' removals in the middle of
    /// probe runs) agree with a dictionary after every step; keys shaped as the cache's are
    /// (page offsets a few KiB apart, log blocks with the top bit set).
    func testPositionTableAgreesWithADictionaryUnderChurn() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<4 {
            var table = PagePositionTable(minimumCapacity: round == 0 ? 1 : 64)
            var model: [UInt64: Int] = [:]
            let keySpace = [64, 500, 5_000, 20_000][round]
            for step in 0..<20_000 {
                let raw = UInt64.random(in: 0..<UInt64(keySpace), using: &generator)
                let key = raw % 7 == 0 ? raw | RecordLocation.logBit : 4_096 + raw * 16_384
                if Int.random(in: 0..<3, using: &generator) == 0 {
                    table.remove(key)
                    model[key] = nil
                } else {
                    table.set(key, position: step)
                    model[key] = step
                }
                XCTAssertEqual(table.position(of: key), model[key], "round \(round), step \(step)")
                XCTAssertEqual(table.count, model.count)
            }
            for (key, position) in model { XCTAssertEqual(table.position(of: key), position) }
            for raw in 0..<UInt64(keySpace) where model[4_096 + raw * 16_384] == nil {
                XCTAssertNil(table.position(of: 4_096 + raw * 16_384))
            }
            table.removeAll()
            XCTAssertEqual(table.count, 0)
            for key in model.keys { XCTAssertNil(table.position(of: key)) }
        }
    }

    /// Keys made to hash to the last buckets and the first (by the multiplier's inverse modulo
    /// 2^64): their probe run wraps past the end of the table. Removing any one of them must
    /// move the rest back so that each stays reachable from its home bucket.
    func testRemovalInsideWrappingRunsKeepsEveryKeyReachable() {
        // The multiplier's inverse: (k * inverse) * multiplier == k, so a key built as
        // (bucket << 60 + j) * inverse hashes to `bucket` in a table of 16 buckets.
        let inverse: UInt64 = 0xF1DE_83E1_9937_733D
        func key(bucket: UInt64, _ j: UInt64) -> UInt64 { ((bucket << 60) &+ j) &* inverse }
        let homes: [(UInt64, UInt64)] = [(14, 0), (15, 0), (15, 1), (0, 0), (14, 1), (0, 1), (1, 0)]
        let keys = homes.map { key(bucket: $0.0, $0.1) }
        XCTAssertEqual(keys[1], 0x3000_0000_0000_0000, "the inverse is the multiplier's")
        for removed in keys.indices {
            var table = PagePositionTable(minimumCapacity: 8)  // 16 buckets
            for (position, key) in keys.enumerated() { table.set(key, position: position) }
            table.remove(keys[removed])
            XCTAssertEqual(table.count, keys.count - 1)
            for (position, key) in keys.enumerated() {
                XCTAssertEqual(table.position(of: key), position == removed ? nil : position, "removing key \(removed)")
            }
            // Put back, the key is found again and the others are untouched.
            table.set(keys[removed], position: 99)
            for (position, key) in keys.enumerated() { XCTAssertEqual(table.position(of: key), position == removed ? 99 : position) }
        }
        var table = PagePositionTable(minimumCapacity: 8)
        table.set(keys[0], position: 0)
        table.remove(12_345)  // not held: nothing changes
        XCTAssertEqual(table.count, 1)
    }

    /// A store counts its cache's hits and misses, and the cache keeps to its bound: a second
    /// pass over the same objects is all hits when they fit, and evicts when they do not.
    func testAStoreCountsHitsAndMissesAndKeepsItsBound() throws {
        let count: Int64 = 3_000
        for (capacity, fits) in [(64 << 20, true), (40_000, false)] {
            let path = BinaryTestModel.temporaryPath()
            var options = BinaryStoreOptions()
            options.backgroundCheckpoints = false
            options.pageCacheBytes = capacity
            var store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
            _ = try store.save(StoreChangeSet(inserted: (1...count).map { BinaryTestModel.item($0, owner: nil) }))
            try store.close()
            store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
            defer { try? store.close() }
            for _ in 0..<2 {
                for key in 1...count { XCTAssertNotNil(try store.row(for: StoreObjectID(entityName: "Item", primaryKey: key))) }
            }
            let statistics = store.pageCacheStatistics
            XCTAssertEqual(statistics.capacity, capacity)
            XCTAssertLessThanOrEqual(statistics.bytes, capacity)
            XCTAssertGreaterThan(statistics.counts.misses, 0)
            XCTAssertGreaterThan(statistics.entries, 0)
            if fits {
                XCTAssertEqual(statistics.counts.evictions, 0)
                // Each page missed once, on the first pass; the second pass was all hits.
                XCTAssertGreaterThanOrEqual(statistics.counts.hits, UInt64(count))
                XCTAssertGreaterThan(statistics.hitRate, 0.9)
            } else {
                XCTAssertGreaterThan(statistics.counts.evictions, 0)
                XCTAssertLessThan(statistics.hitRate, 0.99)
            }
        }
    }
}
