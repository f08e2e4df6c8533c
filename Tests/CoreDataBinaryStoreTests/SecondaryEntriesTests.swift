@testable import CoreDataBinaryStore
import CoreDataBinaryFormat
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// A secondary index's entries stored by kind (``SecondaryEntries``): a merge of removals and
/// additions, run on typed arrays, gives exactly what sorting the changed entries gives, for
/// every kind, with changes at the ends, in runs, on equal values and on every entry.
final class SecondaryEntriesTests: XCTestCase {
    private func value(_ kind: SecondaryIndexKind, _ random: inout SeededGenerator) -> StoreValue {
        let n = random.next() % 40
        switch kind {
        case .integer: return .integer(Int64(n) - 20)
        case .double: return .double(Double(n) / 4 - 3)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(n) * 3_600))
        case .string: return .string(n % 5 == 0 ? "a value longer than fifteen bytes \(n)" : "v\(n)")
        }
    }

    private func sorted(_ entries: [SecondaryIndexCodec.Entry]) -> [SecondaryIndexCodec.Entry] {
        entries.sorted(by: SecondaryIndexOrder.entryLess)
    }

    private func assertSame(_ typed: SecondaryEntries, _ expected: [SecondaryIndexCodec.Entry], _ context: String) {
        XCTAssertEqual(typed.count, expected.count, context)
        for position in 0..<min(typed.count, expected.count) where typed[position].key != expected[position].key || typed[position].value != expected[position].value {
            return XCTFail("\(context): entry \(position) is \(typed[position]), expected \(expected[position])")
        }
    }

    func testMergingMatchesSortingForEveryKind() {
        var random = SeededGenerator(seed: 0x5E_C0)
        for kind in [SecondaryIndexKind.integer, .double, .date, .string] {
            for round in 0..<40 {
                let count = [0, 1, 7, 300][round % 4]
                var current: [Int64: StoreValue] = [:]
                for key in Int64(1)..<Int64(count + 1) { current[key] = value(kind, &random) }
                let before = sorted(current.map { ($0.value, $0.key) })
                let typed = SecondaryEntries(kind: kind, sorted: before)
                assertSame(typed, before, "\(kind) round \(round), built")

                // Removals (deletes, and the old entries of updates), updates and new keys.
                var removed: [Int64] = []
                var added: [SecondaryIndexCodec.Entry] = []
                let everything = round % 10 == 9
                for key in current.keys.sorted() where everything || random.next() % 4 == 0 {
                    removed.append(key)
                    if random.next() % 3 != 0 {
                        let new = value(kind, &random)
                        current[key] = new
                        added.append((new, key))
                    } else {
                        current[key] = nil
                    }
                }
                for key in Int64(count + 1)...Int64(count + 1 + Int(random.next() % 20)) {
                    let new = value(kind, &random)
                    current[key] = new
                    added.append((new, key))
                }
                let (merged, edit) = typed.merging(removing: KeyFilter(removed), adding: sorted(added))
                assertSame(merged, sorted(current.map { ($0.value, $0.key) }), "\(kind) round \(round), merged")
                // The edit places every old entry it kept: shifted by the insertions at or
                // before it, less the drops before it.
                XCTAssertEqual(edit.oldCount, before.count)
                XCTAssertEqual(edit.dropped.count, removed.count { key in before.contains { $0.key == key } })
                XCTAssertEqual(edit.insertions.count, added.count)
                let dropped = Set(edit.dropped)
                for position in before.indices where !dropped.contains(position) {
                    let shifted = position - edit.dropped.count { $0 < position } + edit.insertions.count { $0 <= position }
                    XCTAssertEqual(merged[shifted].key, before[position].key, "\(kind) round \(round): old entry \(position)")
                }
                assertSame(typed, before, "\(kind) round \(round): the original is unchanged")
            }
        }
    }

    /// Two merges one after the other, composed into one edit (`then`): every old entry the
    /// composition keeps is where the edit says in the final entries, and it drops exactly the
    /// old entries whose keys either merge removed.
    func testComposedEditsPlaceEveryKeptEntry() {
        var random = SeededGenerator(seed: 0xED_17)
        for round in 0..<60 {
            let count = [0, 1, 9, 250][round % 4]
            var current: [Int64: StoreValue] = [:]
            for key in Int64(1)..<Int64(count + 1) { current[key] = value(.integer, &random) }
            let old = sorted(current.map { ($0.value, $0.key) })
            var entries = SecondaryEntries(kind: .integer, sorted: old)
            var nextKey = Int64(count + 1)
            var composed: SecondaryEntries.Edit?
            var removedEver = Set<Int64>()
            for _ in 0..<(1 + round % 3) {
                var removed: [Int64] = []
                var added: [SecondaryIndexCodec.Entry] = []
                for key in current.keys.sorted() where random.next() % 5 == 0 {
                    removed.append(key)
                    removedEver.insert(key)
                    if random.next() % 2 == 0 {
                        let new = value(.integer, &random)
                        current[key] = new
                        added.append((new, key))
                    } else {
                        current[key] = nil
                    }
                }
                for _ in 0..<Int(random.next() % 6) {
                    let new = value(.integer, &random)
                    current[nextKey] = new
                    added.append((new, nextKey))
                    nextKey += 1
                }
                let (merged, edit) = entries.merging(removing: KeyFilter(removed), adding: sorted(added))
                entries = merged
                composed = composed.map { $0.then(edit) } ?? edit
            }
            guard let edit = composed else { continue }
            assertSame(entries, sorted(current.map { ($0.value, $0.key) }), "round \(round)")
            XCTAssertEqual(edit.oldCount, old.count)
            let dropped = Set(edit.dropped)
            XCTAssertEqual(dropped, Set(old.indices.filter { removedEver.contains(old[$0].key) }), "round \(round): dropped")
            XCTAssertEqual(edit.insertions.count, entries.count - (old.count - dropped.count), "round \(round): one insertion per new entry")
            for position in old.indices where !dropped.contains(position) {
                let shifted = position - edit.dropped.count { $0 < position } + edit.insertions.count { $0 <= position }
                XCTAssertEqual(entries[shifted].key, old[position].key, "round \(round): old entry \(position)")
            }
        }
    }

    func testBoundariesAndBytes() {
        let entries: [SecondaryIndexCodec.Entry] = [(.integer(1), 5), (.integer(3), 1), (.integer(3), 2), (.integer(7), 4)]
        let typed = SecondaryEntries(kind: .integer, sorted: entries)
        XCTAssertEqual(typed.boundary(of: .integer(3), after: false), 1)
        XCTAssertEqual(typed.boundary(of: .integer(3), after: true), 3)
        XCTAssertEqual(typed.boundary(of: .integer(0), after: false), 0)
        XCTAssertEqual(typed.boundary(of: .integer(9), after: true), 4)
        XCTAssertEqual(typed.lowerBound(of: (.integer(3), 2)), 2)
        XCTAssertEqual(typed.encodedBytes(at: 0), 16)
        let strings = SecondaryEntries(kind: .string, sorted: [(.string("abc"), 1)])
        XCTAssertEqual(strings.encodedBytes(at: 0), SecondaryIndexCodec.entryBytes(.string("abc")))
        let dates = SecondaryEntries(kind: .date, sorted: [(.date(Date(timeIntervalSinceReferenceDate: 12.5)), 1)])
        XCTAssertEqual(dates[0].value, .date(Date(timeIntervalSinceReferenceDate: 12.5)))
    }
}
