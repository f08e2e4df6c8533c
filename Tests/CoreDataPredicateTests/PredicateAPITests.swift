// NSPredicate, NSComparisonPredicate and NSCompoundPredicate as Apple declares them: raw values,
// initializers, accessors, equality, substitution, printing of constructed trees.
import Foundation
import XCTest
@testable import CoreDataPredicate

final class PredicateAPITests: XCTestCase {
    func testRawValuesAreApples() {
        let operators: [(NSComparisonPredicate.Operator, UInt)] = [
            (.lessThan, 0), (.lessThanOrEqualTo, 1), (.greaterThan, 2), (.greaterThanOrEqualTo, 3), (.equalTo, 4), (.notEqualTo, 5),
            (.matches, 6), (.like, 7), (.beginsWith, 8), (.endsWith, 9), (.in, 10), (.customSelector, 11), (.contains, 99), (.between, 100),
        ]
        for (op, raw) in operators { XCTAssertEqual(op.rawValue, raw, "\(op)") }
        XCTAssertEqual(NSComparisonPredicate.Modifier.direct.rawValue, 0)
        XCTAssertEqual(NSComparisonPredicate.Modifier.all.rawValue, 1)
        XCTAssertEqual(NSComparisonPredicate.Modifier.any.rawValue, 2)
        XCTAssertEqual(NSComparisonPredicate.Options.caseInsensitive.rawValue, 1)
        XCTAssertEqual(NSComparisonPredicate.Options.diacriticInsensitive.rawValue, 2)
        XCTAssertEqual(NSComparisonPredicate.Options.normalized.rawValue, 4)
        XCTAssertEqual(NSCompoundPredicate.LogicalType.not.rawValue, 0)
        XCTAssertEqual(NSCompoundPredicate.LogicalType.and.rawValue, 1)
        XCTAssertEqual(NSCompoundPredicate.LogicalType.or.rawValue, 2)
    }

    func testComparisonAccessors() throws {
        let predicate = try XCTUnwrap(NSPredicate(format: "ANY tags ==[cd] %@", "x") as? NSComparisonPredicate)
        XCTAssertEqual(predicate.leftExpression, key("tags"))
        XCTAssertEqual(predicate.rightExpression, const("x"))
        XCTAssertEqual(predicate.predicateOperatorType, .equalTo)
        XCTAssertEqual(predicate.comparisonPredicateModifier, .any)
        XCTAssertEqual(predicate.options, [.caseInsensitive, .diacriticInsensitive])
        let direct = NSComparisonPredicate(leftExpression: key("a"), rightExpression: const(1), modifier: .direct, type: .lessThan, options: [])
        XCTAssertEqual(direct.predicateFormat, "a < 1")
    }

    func testCompoundAccessorsAndConstructors() throws {
        let compound = try XCTUnwrap(NSPredicate(format: "a == 1 OR b == 2") as? NSCompoundPredicate)
        XCTAssertEqual(compound.compoundPredicateType, .or)
        XCTAssertEqual(compound.subpredicates.count, 2)
        XCTAssertEqual(NSCompoundPredicate(type: .and, subpredicates: compound.subpredicates).predicateFormat, "a == 1 AND b == 2")
        XCTAssertEqual(NSCompoundPredicate(notPredicateWithSubpredicate: compound).predicateFormat, "NOT (a == 1 OR b == 2)")
    }

    func testDegenerateCompoundsEvaluateAndPrint() {
        let emptyAnd = NSCompoundPredicate(andPredicateWithSubpredicates: [])
        let emptyOr = NSCompoundPredicate(orPredicateWithSubpredicates: [])
        XCTAssertTrue(emptyAnd.evaluate(with: nil))
        XCTAssertFalse(emptyOr.evaluate(with: nil))
        XCTAssertEqual(emptyAnd.predicateFormat, "TRUEPREDICATE")
        XCTAssertEqual(emptyOr.predicateFormat, "FALSEPREDICATE")
        let single = NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "a == 1")])
        XCTAssertEqual(single.predicateFormat, "a == 1")
        XCTAssertTrue(single.evaluate(with: ["a": 1]))
        let notOfTwo = NSCompoundPredicate(type: .not, subpredicates: [NSPredicate(format: "a == 1"), NSPredicate(format: "b == 1")])
        XCTAssertEqual(notOfTwo.predicateFormat, "NOT (a == 1 AND b == 1)")
        XCTAssertTrue(notOfTwo.evaluate(with: ["a": 1, "b": 2]))
        XCTAssertFalse(NSCompoundPredicate(type: .not, subpredicates: []).evaluate(with: nil))
    }

    func testValueAndBlockPredicates() {
        XCTAssertTrue(NSPredicate(value: true).evaluate(with: nil))
        XCTAssertFalse(NSPredicate(value: false).evaluate(with: 3))
        XCTAssertEqual(NSPredicate(value: true), NSPredicate(format: "TRUEPREDICATE"))
        XCTAssertEqual(NSPredicate(value: false).description, "FALSEPREDICATE")
        let block = NSPredicate { object, _ in (object as? Int) == 3 }
        XCTAssertTrue(block.evaluate(with: 3))
        XCTAssertEqual(block, block)
        XCTAssertNotEqual(block, NSPredicate { object, _ in (object as? Int) == 3 })
        XCTAssertEqual(block.predicateFormat, "BLOCKPREDICATE")
    }

    func testFormatInitializersTakeApplesArguments() {
        let name: String? = "Ada"
        let missing: String? = nil
        XCTAssertEqual(NSPredicate(format: "name == %@", name), NSPredicate(format: "name == 'Ada'"))
        XCTAssertEqual(NSPredicate(format: "name == %@", missing), NSPredicate(format: "name == nil"))
        XCTAssertEqual(NSPredicate(format: "name == %@", nil), NSPredicate(format: "name == nil"))
        XCTAssertEqual(NSPredicate(format: "age IN %@", [1, 2]), NSPredicate(format: "age IN {1, 2}"))
        XCTAssertEqual(NSPredicate(format: "a == 1", argumentArray: nil).predicateFormat, "a == 1")
        XCTAssertTrue(NSPredicate(format: "a == 1") is NSComparisonPredicate)
        XCTAssertTrue(NSPredicate(format: "a == 1 AND b == 1") is NSCompoundPredicate)
        XCTAssertTrue(NSPredicate(format: "TRUEPREDICATE").evaluate(with: nil))
        let comparison: NSComparisonPredicate = NSComparisonPredicate(format: "a == %d", 1)
        XCTAssertEqual(comparison.rightExpression, const(1))
    }

    func testEqualityAndHashing() {
        let a = NSPredicate(format: "age > 30 AND name BEGINSWITH[c] 'a'")
        let b = NSPredicate(format: "age > 30.0 && name beginswith[c] \"a\"")
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.hash, b.hash)
        XCTAssertNotEqual(a, NSPredicate(format: "age > 30 AND name BEGINSWITH 'a'"))
        XCTAssertNotEqual(NSPredicate(format: "ANY a == 1"), NSPredicate(format: "ALL a == 1"))
        XCTAssertNotEqual(NSPredicate(format: "a == 1 AND b == 2"), NSPredicate(format: "a == 1 OR b == 2"))
        XCTAssertNotEqual(NSPredicate(format: "(a == 1 AND b == 2) AND c == 3"), NSPredicate(format: "a == 1 AND b == 2 AND c == 3"))
        XCTAssertEqual(Set([a, b, NSPredicate(value: true)]).count, 2)
        XCTAssertFalse(a.isEqual("age > 30"))
    }

    func testSubstitutionVariables() throws {
        let template = NSPredicate(format: "age > $min AND SUBQUERY(books, $min, $min.pages > 0).@count > 0")
        let bound = template.withSubstitutionVariables(["min": 60])
        XCTAssertTrue(bound is NSCompoundPredicate)
        XCTAssertEqual(bound.predicateFormat, "age > 60 AND SUBQUERY(books, $min, $min.pages > 0).@count > 0")
        XCTAssertEqual(People.selected(by: bound), ["frank", "Grace"])
        let comparison = try XCTUnwrap(NSPredicate(format: "name == $name") as? NSComparisonPredicate)
        let substituted: NSComparisonPredicate = comparison.withSubstitutionVariables(["name": "Bob"])
        XCTAssertEqual(substituted.rightExpression, const("Bob"))
        XCTAssertEqual(comparison.withSubstitutionVariables([:]), comparison)
        XCTAssertEqual(People.selected(by: comparison, variables: ["name": "Bob"]), ["Bob"])
    }

    /// Regression: a NaN date (`CAST(CAST('nan', 'NSNumber'), 'NSDate')`) did not equal itself, so
    /// its printed form did not parse back to an equal predicate.
    func testNonFiniteConstantsRoundTrip() throws {
        for format in ["x == CAST(CAST('nan', 'NSNumber'), 'NSDate')", "x == CAST('-inf', 'NSNumber')", "x == CAST('nan', 'NSNumber')",
                       "x IN {CAST('nan', 'NSNumber'), CAST(CAST('inf', 'NSNumber'), 'NSDate')}"] {
            let predicate = try NSPredicate(validatingFormat: format)
            let reparsed = try NSPredicate(validatingFormat: predicate.predicateFormat)
            XCTAssertEqual(reparsed, predicate, format)
            XCTAssertEqual(reparsed.hash, predicate.hash, format)
        }
        XCTAssertFalse(NSPredicate(format: "x == CAST(CAST('nan', 'NSNumber'), 'NSDate')").evaluate(with: ["x": Date(timeIntervalSinceReferenceDate: .nan)]))
    }

    func testPrintingOfConstructedTrees() {
        XCTAssertEqual(cmp(const(Date(timeIntervalSinceReferenceDate: 1.25)), .equalTo, const(nil)).predicateFormat,
                       "CAST(1.25, \"NSDate\") == nil")
        XCTAssertEqual(cmp(key("a"), .in, const(Set(["b", "a"]))).predicateFormat, "a IN {\"a\", \"b\"}")
        XCTAssertEqual(cmp(key("first"), .equalTo, const(1)).predicateFormat, "#first == 1")
        XCTAssertEqual(cmp(fn("now"), .greaterThan, fn("add:to:", const(1), fn("multiply:by:", const(2), const(3)))).predicateFormat,
                       "now() > 1 + 2 * 3")
        XCTAssertEqual(cmp(fn("multiply:by:", fn("add:to:", const(1), const(2)), const(3)), .equalTo, const(9)).predicateFormat,
                       "(1 + 2) * 3 == 9")
        XCTAssertEqual(cmp(fn("sqrt:", const(1), const(2)), .equalTo, const(1)).predicateFormat, "sqrt:(1, 2) == 1")
        XCTAssertEqual(cmp(key("s"), .equalTo, const("a\u{7F}b\u{2028}")).predicateFormat, "s == \"a\\u007Fb\\u2028\"")
        XCTAssertEqual(cmp(key("s"), .equalTo, const("\u{1F600}")).predicateFormat, "s == \"😀\"")
        XCTAssertEqual(cmp(key("d"), .equalTo, const(Decimal(string: "1.50"))).predicateFormat, "d == CAST(\"1.5\", \"NSDecimalNumber\")")
    }
}
