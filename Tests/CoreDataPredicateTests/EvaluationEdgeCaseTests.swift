// The evaluator at its edges: nil, numeric kinds and widths, string folding, regex anchoring,
// LIKE, BETWEEN bounds, empty collections under ANY/ALL/NONE, IN/CONTAINS containers, object
// identity, type mismatches, arithmetic overflow, and the kinds of objects it can read.
import Foundation
import XCTest
@testable import CoreDataPredicate

final class EvaluationEdgeCaseTests: XCTestCase {
    private func check(
        _ format: String, _ arguments: [Any?] = [], on object: Any? = nil, is expected: Bool,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let predicate = try NSPredicate(validatingFormat: format, argumentArray: arguments)
            XCTAssertEqual(predicate.evaluate(with: object), expected, format, file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    // MARK: nil

    func testNilComparesEqualOnlyToNil() {
        let object: [String: Any] = ["present": "x", "null": NSNull(), "optional": String?.none as Any]
        check("missing == nil", on: object, is: true)
        check("null == nil", on: object, is: true)
        check("optional == nil", on: object, is: true)
        check("present == nil", on: object, is: false)
        check("missing != nil", on: object, is: false)
        check("present != nil", on: object, is: true)
        check("nil == nil", is: true)
        check("missing == 'x'", on: object, is: false)
        check("missing != 'x'", on: object, is: true)
    }

    func testOrderingWithNilIsFalse() {
        let object: [String: Any] = ["n": 1]
        for op in ["<", "<=", ">", ">="] {
            check("missing \(op) 1", on: object, is: false)
            check("n \(op) nil", on: object, is: false)
            check("nil \(op) nil", is: false)
        }
        check("missing BETWEEN {0, 2}", on: object, is: false)
        check("n BETWEEN {nil, 2}", on: object, is: false)
        check("missing BEGINSWITH 'a'", on: object, is: false)
        check("missing IN {1, 2}", on: object, is: false)
        check("nil IN {1, nil}", is: true)
    }

    func testNestedOptionalsAreUnwrapped() {
        let value: Int?? = .some(.some(3))
        check("SELF == 3", on: value as Any, is: true)
        check("x == 3", on: ["x": value as Any], is: true)
    }

    // MARK: Numbers

    func testNumbersOfEveryWidthCompareByValue() {
        let values: [Any] = [Int8(5), Int16(5), Int32(5), Int64(5), Int(5), UInt8(5), UInt16(5), UInt32(5), UInt64(5), UInt(5),
                             Float(5), Double(5), Decimal(5), NSNumber(value: 5), NSDecimalNumber(value: 5), CGFloat(5)]
        for a in values {
            for b in values {
                check("SELF == %@", [b], on: a, is: true)
                check("SELF < %@", [b], on: a, is: false)
                check("SELF <= %@", [b], on: a, is: true)
            }
        }
    }

    func testLargeIntegersCompareExactly() {
        check("SELF == %@", [Double(Int64.max)], on: Int64.max, is: false)  // 2^63 is not 2^63 - 1
        check("SELF < %@", [Double(Int64.max)], on: Int64.max, is: true)
        check("SELF > %@", [Int64.max], on: UInt64.max, is: true)
        check("SELF < %@", [UInt64(0)], on: Int64.min, is: true)
        check("SELF == %@", [9007199254740993.0], on: Int64(9007199254740993), is: false)  // 2^53 + 1 has no Double
        check("SELF > %@", [-1.5], on: Int64.min, is: false)
        check("SELF > 1.5", on: UInt64(2), is: true)
    }

    func testBoolsAreNumbers() {
        check("SELF == 1", on: true, is: true)
        check("SELF == YES", on: NSNumber(value: true), is: true)
        check("SELF < 1", on: false, is: true)
        check("SELF == 'true'", on: true, is: false)
    }

    func testDecimalsAndNaN() {
        check("SELF == 0.1", on: Decimal(string: "0.1") ?? 0, is: true)
        check("SELF > %@", [Decimal(string: "0.1") ?? 0], on: Decimal(string: "0.2") ?? 0, is: true)
        check("SELF == %@", [Double.nan], on: Double.nan, is: false)
        check("SELF != %@", [Double.nan], on: Double.nan, is: true)
        check("SELF < %@", [Double.nan], on: 1, is: false)
        check("SELF >= %@", [Double.nan], on: 1, is: false)
    }

    func testArithmeticNeverTraps() {
        check("9223372036854775807 + 1 > 9223372036854775807", is: true)
        check("-9223372036854775807 - 2 < 0", is: true)
        check("9223372036854775807 * 2 > 0", is: true)
        check("modulus(5, 0) == nil", is: true)
        check("modulus(-9223372036854775807 - 1, -1) == 0", is: true)
        check("1 / 0 == CAST('inf', 'NSNumber')", is: true)
        check("abs(-9223372036854775807 - 1) > 0", is: true)
        check("leftshift(1, 200) == 0", is: true)
        check("rightshift(-1, -3) == -8", is: true)
        check("onesComplement(1.5) == -2", is: true)  // Read as NSInteger, as Apple's bitwise functions read numbers.
        check("onesComplement(CAST('inf', 'NSNumber')) == nil", is: true)
        check("random(0) == nil", is: true)
        check("sqrt(-1) == sqrt(-1)", is: false)  // NaN
        check("'a' + 1 == nil", is: true)
        check("sum({1, 'a'}) == nil", is: true)
        check("CAST('x', 'NSNumber') == nil", is: true)
    }

    // MARK: Strings

    func testDiacriticAndCaseFolding() {
        let decomposed = "Cafe\u{301}"
        let precomposed = "Caf\u{E9}"
        check("SELF == %@", [precomposed], on: decomposed, is: false)  // literal, as Apple's NSString ==
        check("SELF ==[d] 'cafe'", on: "café", is: true)
        check("SELF ==[d] 'cafe'", on: "CAFÉ", is: false)
        check("SELF ==[cd] 'cafe'", on: "CAFÉ", is: true)
        check("SELF ==[d] 'Cafe'", on: decomposed, is: true)
        check("SELF ==[c] %@", [precomposed.lowercased()], on: decomposed, is: true)
        check("SELF BEGINSWITH[cd] 'e'", on: "Élan", is: true)
        check("SELF ENDSWITH[d] 'e'", on: decomposed, is: true)
        check("SELF CONTAINS[cd] 'uber'", on: "Über", is: true)
        check("SELF ==[c] 'STRASSE'", on: "straße", is: true)
        check("SELF ==[n] 'A'", on: "a", is: false)
        check("SELF ==[cn] 'A'", on: "a", is: false)  // [n] supersedes folding
    }

    func testRegexIsAnchoredToTheWholeString() {
        check("SELF MATCHES 'b'", on: "abc", is: false)
        check("SELF MATCHES '.*b.*'", on: "abc", is: true)
        check("SELF MATCHES 'abc'", on: "abc\n", is: false)
        check("SELF MATCHES 'a.b'", on: "a\nb", is: false)
        check("SELF MATCHES 'a|ab'", on: "ab", is: true)
        check("SELF MATCHES '^abc$'", on: "abc", is: true)
        check("SELF MATCHES '('", on: "(", is: false)  // invalid pattern matches nothing
        check("SELF MATCHES %@", ["\\Qa+b"], on: "a+b", is: true)
        check("SELF MATCHES %@", ["\\Qa+b"], on: "a+bc", is: false)
        check("SELF MATCHES %@", ["(?x) a b # comment"], on: "ab", is: true)
        check("SELF MATCHES[c] 'ABC'", on: "abc", is: true)
        check("SELF MATCHES[d] 'cafe'", on: "café", is: true)
        check("SELF MATCHES '[0-9]+'", on: 123, is: false)  // not a string
    }

    func testLikeWildcardsAndEscapes() {
        check("SELF LIKE '*'", on: "", is: true)
        check("SELF LIKE ''", on: "", is: true)
        check("SELF LIKE ''", on: "a", is: false)
        check("SELF LIKE '?'", on: "é", is: true)
        check("SELF LIKE '?'", on: "e\u{301}", is: true)  // one character
        check("SELF LIKE 'a\\\\*b'", on: "a*b", is: true)
        check("SELF LIKE 'a\\\\*b'", on: "axb", is: false)
        check("SELF LIKE 'a*b*c'", on: "aXXbYYc", is: true)
        check("SELF LIKE 'a*b*c'", on: "aXXbYY", is: false)
        check("SELF LIKE[c] 'A?C'", on: "abc", is: true)
        let started = Date()
        check("SELF LIKE %@", [String(repeating: "a*", count: 30) + "b"], on: String(repeating: "a", count: 2000), is: false)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "LIKE must not backtrack exponentially")
    }

    func testStringOrderIsByUnicodeScalars() {
        check("SELF < 'a'", on: "Z", is: true)
        check("SELF <[c] 'a'", on: "Z", is: false)
        check("SELF < 'ab'", on: "a", is: true)
    }

    // MARK: BETWEEN

    func testBetweenIsInclusive() {
        check("SELF BETWEEN {5, 10}", on: 5, is: true)
        check("SELF BETWEEN {5, 10}", on: 10, is: true)
        check("SELF BETWEEN {5, 10}", on: 7.5, is: true)
        check("SELF BETWEEN {5, 10}", on: 4.999, is: false)
        check("SELF BETWEEN {5, 10}", on: 11, is: false)
        check("SELF BETWEEN {10, 5}", on: 7, is: false)
        check("SELF BETWEEN {5}", on: 5, is: false)
        check("SELF BETWEEN {5, 6, 7}", on: 6, is: false)
        check("SELF BETWEEN %@", [[Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 10)]],
              on: Date(timeIntervalSinceReferenceDate: 10), is: true)
        check("SELF BETWEEN {'b', 'd'}", on: "c", is: true)
        check("SELF BETWEEN[c] {'b', 'd'}", on: "C", is: true)
        check("SELF BETWEEN 5", on: 5, is: false)
    }

    // MARK: Collections

    func testModifiersOnEmptyAndMissingCollections() {
        let object: [String: Any] = ["empty": [Int](), "numbers": [1, 2, 3]]
        check("ANY empty == 1", on: object, is: false)
        check("ALL empty == 1", on: object, is: true)
        check("NONE empty == 1", on: object, is: true)
        check("ANY missing == 1", on: object, is: false)
        check("ALL missing == 1", on: object, is: true)
        check("ANY numbers > 2", on: object, is: true)
        check("ALL numbers > 0", on: object, is: true)
        check("ALL numbers > 1", on: object, is: false)
        check("NONE numbers > 3", on: object, is: true)
        check("empty.@count == 0", on: object, is: true)
        check("empty.@sum == 0", on: object, is: true)
        check("empty.@avg == nil", on: object, is: true)
        check("empty.@max == nil", on: object, is: true)
        check("ANY SELF == 2", on: Set([1, 2]), is: true)
        check("ANY SELF == 2", on: 2, is: true)  // a single value is a collection of one
    }

    func testInAndContainsAcceptEveryContainer() {
        check("SELF IN %@", [["a": 1, "b": 2]], on: 2, is: true)  // dictionary values
        check("SELF IN %@", [["a": 1, "b": 2]], on: "a", is: false)
        check("SELF IN %@", [NSDictionary(dictionary: ["k": "v"])], on: "v", is: true)
        check("SELF IN %@", [Set(["x", "y"])], on: "y", is: true)
        check("SELF IN %@", [NSSet(array: [1, 2])], on: 2.0, is: true)
        check("SELF IN %@", [NSOrderedSet(array: [1, 2])], on: 1, is: true)
        check("SELF IN %@", [NSArray(array: ["a"])], on: "a", is: true)
        check("SELF IN 'concatenate'", on: "cat", is: true)
        check("SELF IN[c] 'CONCATENATE'", on: "cat", is: true)
        check("SELF IN[c] {'A', 'B'}", on: "a", is: true)
        check("SELF CONTAINS 2", on: ["k": 2], is: true)
        check("SELF CONTAINS 'x'", on: 5, is: false)
        check("SELF IN 5", on: 5, is: false)
    }

    func testSetsEqualRegardlessOfOrder() {
        check("SELF == %@", [Set([1, 2, 3])], on: [3, 2, 1], is: true)
        check("SELF == {1, 2, 3}", on: [1, 2, 3], is: true)
        check("SELF == {1, 2, 3}", on: [3, 2, 1], is: false)
        check("SELF == %@", [["a": 1]], on: ["a": 1.0], is: true)
    }

    func testKeyPathsFlattenToManyRelationships() {
        let library: [String: Any] = [
            "authors": [
                ["name": "A", "books": [["title": "x"], ["title": "y"]]],
                ["name": "B", "books": [["title": "z"]]],
            ],
        ]
        check("authors.books.title.@count == 3", on: library, is: true)
        check("ANY authors.books.title == 'z'", on: library, is: true)
        check("authors.@count == 2", on: library, is: true)
        check("authors.books.@count == 3", on: library, is: true)
        // A collection operator consumes the rest of the path, read from each element (as in KVC).
        check("count(authors.@unionOfArrays.books.title) == 3", on: library, is: true)
        check("authors.@unionOfArrays.books.title CONTAINS 'z'", on: library, is: true)
        check("count(authors.@distinctUnionOfObjects.name) == 2", on: library, is: true)
        check("authors.@bogus == nil", on: library, is: true)
    }

    // MARK: Objects

    private final class Plain {}

    private struct Point: Hashable {
        var x: Int
        var y: Int
    }

    func testObjectsCompareByIdentityUnlessHashable() {
        let ada = People.named("Ada")
        let bob = People.named("Bob")
        check("SELF == %@", [ada], on: ada, is: true)
        check("SELF == %@", [bob], on: ada, is: false)
        check("SELF IN %@", [[ada, bob]], on: bob, is: true)
        check("spouse == %@", [People.named("Carol")], on: bob, is: true)
        check("ANY SELF.spouse == %@", [bob], on: People.all, is: true)
        let plain = Plain()
        check("SELF == %@", [plain], on: plain, is: true)
        check("SELF == %@", [Plain()], on: plain, is: false)
        check("SELF == %@", [Point(x: 1, y: 2)], on: Point(x: 1, y: 2), is: true)
        check("SELF == %@", [Point(x: 1, y: 3)], on: Point(x: 1, y: 2), is: false)
        check("SELF == %@", [UUID(uuidString: "00000000-0000-0000-0000-000000000001") ?? UUID()], on: People.named("Ada").id, is: true)
        check("SELF == %@", [URL(fileURLWithPath: "/tmp")], on: URL(fileURLWithPath: "/tmp"), is: true)
        check("SELF == %@", [Data([1, 2])], on: Data([1, 2]), is: true)
        check("SELF < %@", [Data([1, 3])], on: Data([1, 2]), is: true)
    }

    private struct Handle: PredicateIdentifiable {
        var id: Int
        var predicateIdentity: AnyHashable { AnyHashable(id) }
    }

    private final class Record: PredicateIdentifiable {
        let id: Int
        init(id: Int) { self.id = id }
        var predicateIdentity: AnyHashable { AnyHashable(id) }
    }

    func testPredicateIdentifiableValuesCompareByIdentity() {
        // An object and a handle to it (as a managed object and its object ID) are the same value.
        check("SELF == %@", [Handle(id: 1)], on: Record(id: 1), is: true)
        check("SELF == %@", [Handle(id: 2)], on: Record(id: 1), is: false)
        check("SELF IN %@", [[Handle(id: 3), Handle(id: 1)]], on: Record(id: 1), is: true)
        check("owner == %@", [Record(id: 5)], on: ["owner": Handle(id: 5)], is: true)
        XCTAssertEqual(const(Handle(id: 1)), const(Record(id: 1)))
        XCTAssertEqual(const(Handle(id: 1)).hash, const(Record(id: 1)).hash)
    }

    func testTypeMismatchesAreFalse() {
        check("SELF > 3", on: "abc", is: false)
        check("SELF < 'abc'", on: 3, is: false)
        check("SELF == 3", on: "3", is: false)
        check("SELF != 3", on: "3", is: true)
        check("SELF BEGINSWITH 'x'", on: 3, is: false)
        check("SELF LIKE '*'", on: 3, is: false)
        check("SELF < 3", on: [1, 2], is: false)
        check("SELF == 'x'", on: Date(), is: false)
        check("SELF > %@", [Date()], on: 3, is: false)
        check("SELF CONTAINS 1", on: "123", is: false)
        check("SELF.name == 'x'", on: 42, is: false)
    }

    // MARK: Readable objects

    private struct Row: KeyValueReadable {
        func value(forKey key: String) -> Any? { key == "n" ? 7 : nil }
    }

    private struct Stored {
        var title = "t"
        var count = 2
    }

    private class Base {
        let inherited = "base"
    }

    private final class Derived: Base {
        let own = 1
    }

    func testReadsDictionariesReadablesAndStoredProperties() {
        check("n == 7", on: Row(), is: true)
        check("n == 7", on: ["n": 7], is: true)
        check("n == 7", on: NSDictionary(dictionary: ["n": 7]), is: true)
        check("n == 7", on: [AnyHashable("n"): 7], is: true)
        check("title == 't' AND count == 2", on: Stored(), is: true)
        check("inherited == 'base' AND own == 1", on: Derived(), is: true)
        check("missing == nil", on: Stored(), is: true)
        check("self == %@", [7], on: 7, is: true)
        check("length == 5 AND SELF.length > 4", on: "héllo", is: true)
        check("name.length == 3", on: ["name": "Ada"], is: true)
        XCTAssertEqual(Row().value(forKeyPath: "n") as? Int, 7)
        XCTAssertEqual(People.named("Bob").value(forKeyPath: "spouse.name") as? String, "Carol")
    }

    func testVariablesAndSubqueryBindings() throws {
        let predicate = try NSPredicate(validatingFormat: "age > $min AND SUBQUERY(books, $book, $book.pages >= $pages).@count > 0")
        let selected = People.selected(by: predicate, variables: ["min": 50, "pages": 300])
        XCTAssertEqual(selected, ["Grace"])
        XCTAssertEqual(People.selected(by: predicate), [])
    }

    func testBlockPredicatesSeeObjectAndBindings() {
        let predicate = NSPredicate { object, bindings in
            (object as? Person)?.name == bindings?["name"] as? String
        }
        XCTAssertEqual(People.selected(by: predicate, variables: ["name": "Dan"]), ["Dan"])
        let compound = NSCompoundPredicate(andPredicateWithSubpredicates: [predicate, NSPredicate(format: "age < 20")])
        XCTAssertEqual(People.selected(by: compound, variables: ["name": "Dan"]), ["Dan"])
    }
}
