// NSSortDescriptor: keys, direction, nil placement, selectors, comparators, Swift key paths,
// reversal, several descriptors, equality.
import Foundation
import XCTest
@testable import CoreDataPredicate

final class SortDescriptorTests: XCTestCase {
    private func names(_ descriptors: [NSSortDescriptor]) -> [String] {
        NSSortDescriptor.sorted(People.all, using: descriptors).map(\.name)
    }

    func testSortsByKeyAcrossNumericWidths() {
        XCTAssertEqual(names([NSSortDescriptor(key: "age", ascending: true)]),
                       ["Dan", "Bob", "Hana", "Ada", "Éva", "Carol", "frank", "Grace"])
        XCTAssertEqual(names([NSSortDescriptor(key: "age", ascending: false)]),
                       ["Grace", "frank", "Carol", "Éva", "Ada", "Hana", "Bob", "Dan"])
    }

    func testNilSortsFirstAscendingAndLastDescending() {
        XCTAssertEqual(names([NSSortDescriptor(key: "nickname", ascending: true)]),
                       ["Bob", "Dan", "frank", "Hana", "Grace", "Carol", "Ada", "Éva"])
        XCTAssertEqual(names([NSSortDescriptor(key: "spouse.age", ascending: true)]).prefix(4), ["Ada", "Dan", "Éva", "Hana"])
        XCTAssertEqual(names([NSSortDescriptor(key: "spouse.age", ascending: false)]).suffix(4), ["Ada", "Dan", "Éva", "Hana"])
        let descriptor = NSSortDescriptor(key: "nickname", ascending: true)
        XCTAssertEqual(descriptor.compare(People.named("Bob"), to: People.named("Dan")), .orderedSame)
        XCTAssertEqual(descriptor.compare(People.named("Bob"), to: People.named("Ada")), .orderedAscending)
    }

    func testCompareSelectorIsCaseSensitiveAndNonLiteral() {
        // `compare:` as NSString does it: upper case first, "É" next to "E" (not after "z").
        XCTAssertEqual(names([NSSortDescriptor(key: "name", ascending: true)]),
                       ["Ada", "Bob", "Carol", "Dan", "Éva", "Grace", "Hana", "frank"])
    }

    func testSelectorsWithApplesSpellings() {
        let byLiteral = NSSortDescriptor(key: "name", ascending: true, selector: "caseInsensitiveCompare:")
        XCTAssertEqual(names([byLiteral]), ["Ada", "Bob", "Carol", "Dan", "Éva", "frank", "Grace", "Hana"])
        XCTAssertEqual(byLiteral.selector, .caseInsensitiveCompare)
        XCTAssertEqual(NSSortDescriptor.Selector("localizedCompare:"), .localizedCompare)

        let files = ["file10", "file2", "File1"]
        let standard = NSSortDescriptor(key: nil, ascending: true, selector: .localizedStandardCompare)
        XCTAssertEqual(NSSortDescriptor.sorted(files, using: [standard]), ["File1", "file2", "file10"])
        let plain = NSSortDescriptor(key: nil, ascending: true)
        XCTAssertEqual(NSSortDescriptor.sorted(files, using: [plain]), ["File1", "file10", "file2"])
        let localized = NSSortDescriptor(key: nil, ascending: true, selector: .localizedCaseInsensitiveCompare)
        XCTAssertEqual(NSSortDescriptor.sorted(["b", "A", "c"], using: [localized]), ["A", "b", "c"])
        let unknown = NSSortDescriptor(key: nil, ascending: true, selector: "noSuchMethod:")
        XCTAssertEqual(NSSortDescriptor.sorted([3, 1, 2], using: [unknown]), [1, 2, 3])
    }

    func testComparatorReceivesValues() {
        let byLength = NSSortDescriptor(key: "name", ascending: true) { a, b in
            let (x, y) = ((a as? String)?.count ?? 0, (b as? String)?.count ?? 0)
            return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        }
        XCTAssertEqual(names([byLength, NSSortDescriptor(key: "name", ascending: true)]),
                       ["Ada", "Bob", "Dan", "Éva", "Hana", "Carol", "Grace", "frank"])
        XCTAssertNil(byLength.selector)
        XCTAssertEqual(byLength.comparator("ab", "a"), .orderedDescending)
    }

    private struct Item {
        var title: String
        var rank: Int?
        var computedRank: Int? { rank }
    }

    func testSwiftKeyPaths() {
        let items = [Item(title: "b", rank: 2), Item(title: "a", rank: nil), Item(title: "c", rank: 1)]
        let byRank = NSSortDescriptor(keyPath: \Item.rank, ascending: true)
        XCTAssertEqual(byRank.key, "rank")
        XCTAssertNotNil(byRank.keyPath)
        XCTAssertEqual(NSSortDescriptor.sorted(items, using: [byRank]).map(\.title), ["a", "c", "b"])
        let byTitle = NSSortDescriptor(keyPath: \Item.title, ascending: false)
        XCTAssertEqual(NSSortDescriptor.sorted(items, using: [byTitle]).map(\.title), ["c", "b", "a"])
        // A computed property has no name; nil values still sort first.
        let byComputed = NSSortDescriptor(keyPath: \Item.computedRank, ascending: true)
        XCTAssertNil(byComputed.key)
        XCTAssertEqual(NSSortDescriptor.sorted(items, using: [byComputed]).map(\.title), ["a", "c", "b"])
        // Other kinds of objects are read by the key path's name.
        XCTAssertEqual(NSSortDescriptor.sorted([["title": "y"], ["title": "x"]], using: [byTitle]).compactMap { $0["title"] }, ["y", "x"])
    }

    func testReversedSortDescriptor() {
        let ascending = NSSortDescriptor(key: "age", ascending: true, selector: .compare)
        guard let reversed = ascending.reversedSortDescriptor as? NSSortDescriptor else { return XCTFail("not a descriptor") }
        XCTAssertFalse(reversed.ascending)
        XCTAssertEqual(reversed.key, "age")
        XCTAssertEqual(reversed.selector, .compare)
        XCTAssertEqual(names([reversed]), names([NSSortDescriptor(key: "age", ascending: false)]))
    }

    func testSeveralDescriptorsAndStability() {
        XCTAssertEqual(names([NSSortDescriptor(key: "isActive", ascending: false), NSSortDescriptor(key: "city", ascending: true)]),
                       ["Dan", "Ada", "frank", "Hana", "Carol", "Éva", "Grace", "Bob"])
        // Ties on every descriptor keep their input order.
        XCTAssertEqual(names([NSSortDescriptor(key: "isActive", ascending: true)]),
                       ["Bob", "Éva", "Grace", "Ada", "Carol", "Dan", "frank", "Hana"])
    }

    func testMixedKindsSortByKind() {
        let values: [Any] = ["b", 2, Date(timeIntervalSinceReferenceDate: 0), "a", 1]
        let sorted = NSSortDescriptor.sorted(values, using: [NSSortDescriptor(key: nil, ascending: true)])
        XCTAssertEqual(sorted.map { "\($0)" }.prefix(4), ["1", "2", "a", "b"])
        XCTAssertTrue(sorted.last is Date)
    }

    func testEqualityHashAndDescription() {
        let a = NSSortDescriptor(key: "name", ascending: true)
        XCTAssertEqual(a, NSSortDescriptor(key: "name", ascending: true, selector: .compare))
        XCTAssertEqual(a.hash, NSSortDescriptor(key: "name", ascending: true).hash)
        XCTAssertNotEqual(a, NSSortDescriptor(key: "name", ascending: false))
        XCTAssertNotEqual(a, NSSortDescriptor(key: "name", ascending: true, selector: .localizedStandardCompare))
        XCTAssertEqual(a.description, "(name, ascending, compare:)")
        XCTAssertEqual(NSSortDescriptor(key: nil, ascending: false, selector: nil).description, "(SELF, descending, compare:)")
    }

    func testNSArrayConveniences() {
        let array = NSArray(array: People.all)
        let sorted = array.sortedArray(using: [NSSortDescriptor(key: "size", ascending: true)])
        XCTAssertEqual((sorted.first as? Person)?.name, "Grace")
        let filtered = array.filtered(using: NSPredicate(format: "age < %d", 20))
        XCTAssertEqual(filtered.compactMap { ($0 as? Person)?.name }, ["Dan"])
    }
}
