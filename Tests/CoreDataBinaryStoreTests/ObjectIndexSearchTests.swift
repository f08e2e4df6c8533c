@testable import CoreDataBinaryStore
import XCTest

/// The index's key search guesses from the key's place between the ends before it bisects: it
/// must find exactly what a linear search finds, whatever the spacing of the keys.
final class ObjectIndexSearchTests: XCTestCase {
    private func table(_ keys: [Int64]) -> ObjectIndex.Table {
        var table = ObjectIndex.Table()
        for (index, key) in keys.enumerated() { table.set(key, UInt64(index + 1)) }
        return table
    }

    private func check(_ keys: [Int64], probes: [Int64], file: StaticString = #filePath, line: UInt = #line) {
        let built = table(keys)
        for probe in probes {
            XCTAssertEqual(built.position(of: probe), keys.firstIndex(of: probe), "key \(probe) among \(keys.count) keys", file: file, line: line)
        }
    }

    func testDenseKeys() {
        let keys = (1...1_000).map(Int64.init)
        check(keys, probes: [0, 1, 2, 500, 999, 1_000, 1_001, -5])
    }

    func testKeysWithHoles() {
        let keys = (1...2_000).map(Int64.init).filter { $0 % 7 != 0 && $0 % 11 != 3 }
        check(keys, probes: Array(0...2_001))
    }

    func testSkewedKeys() {
        // A few huge keys after many small ones: the guesses land far off and the bisection
        // finishes the search.
        var keys = (1...500).map(Int64.init)
        keys += [1 << 40, 1 << 50, (1 << 62) - 1, 1 << 62]
        check(keys, probes: [1, 250, 500, 501, 1 << 40, (1 << 40) + 1, 1 << 50, (1 << 62) - 1, 1 << 62, Int64.max, Int64.min])
    }

    func testOneKeyAndNone() {
        check([42], probes: [41, 42, 43])
        check([], probes: [1])
    }
}
