// NSExpression: Apple's constructors and accessors, raw values, format parsing of expressions,
// expressionValue(with:context:), built-in functions.
import Foundation
import XCTest
@testable import CoreDataPredicate

final class ExpressionTests: XCTestCase {
    func testExpressionTypeRawValuesAreApples() {
        let expected: [(NSExpression.ExpressionType, UInt)] = [
            (.constantValue, 0), (.evaluatedObject, 1), (.variable, 2), (.keyPath, 3), (.function, 4), (.unionSet, 5),
            (.intersectSet, 6), (.minusSet, 7), (.subquery, 13), (.aggregate, 14), (.anyKey, 15), (.block, 19), (.conditional, 20),
        ]
        for (type, raw) in expected { XCTAssertEqual(type.rawValue, raw, "\(type)") }
    }

    func testConstructorsAndAccessors() {
        XCTAssertEqual(const(3).expressionType, .constantValue)
        XCTAssertEqual(const(3).constantValue as? Int, 3)
        XCTAssertNil(const(nil).constantValue)
        XCTAssertEqual(selfExpression.expressionType, .evaluatedObject)
        XCTAssertEqual(variable("x").variable, "x")
        XCTAssertEqual(key("a.b").keyPath, "a.b")
        XCTAssertEqual(key("a.b").operand.expressionType, .evaluatedObject)

        let sum = fn("sum:", const(1), const(2))
        XCTAssertEqual(sum.expressionType, .function)
        XCTAssertEqual(sum.function, "sum:")
        XCTAssertEqual(sum.arguments?.count, 2)
        XCTAssertEqual(sum.operand.expressionType, .constantValue)
        XCTAssertNil(key("a").arguments)

        let call = NSExpression(forFunction: key("x"), selectorName: "foo:", arguments: [1])
        XCTAssertEqual(call.operand, key("x"))
        XCTAssertEqual(call.arguments, [const(1)])

        let aggregate = NSExpression(forAggregate: [const(1), 2])
        XCTAssertEqual(aggregate.expressionType, .aggregate)
        XCTAssertEqual((aggregate.collection as? [NSExpression])?.count, 2)

        let union = NSExpression(forUnionSet: key("a"), with: key("b"))
        XCTAssertEqual(union.expressionType, .unionSet)
        XCTAssertEqual(union.left, key("a"))
        XCTAssertEqual(union.right, key("b"))
        XCTAssertEqual(NSExpression(forIntersectSet: key("a"), with: key("b")).expressionType, .intersectSet)
        XCTAssertEqual(NSExpression(forMinusSet: key("a"), with: key("b")).expressionType, .minusSet)

        let filter = cmp(variable("x"), .greaterThan, const(1))
        let subquery = NSExpression(forSubquery: key("items"), usingIteratorVariable: "x", predicate: filter)
        XCTAssertEqual(subquery.expressionType, .subquery)
        XCTAssertEqual(subquery.variable, "x")
        XCTAssertEqual(subquery.collection as? NSExpression, key("items"))
        XCTAssertEqual(subquery.predicate, filter)

        let conditional = NSExpression(forConditional: filter, trueExpression: const("y"), falseExpression: const("n"))
        XCTAssertEqual(conditional.expressionType, .conditional)
        XCTAssertEqual(conditional.predicate, filter)
        XCTAssertEqual(conditional.trueExpression, const("y"))
        XCTAssertEqual(conditional.falseExpression, const("n"))

        XCTAssertEqual(NSExpression.expressionForAnyKey().expressionType, .anyKey)
    }

    func testExpressionFormats() throws {
        XCTAssertEqual(NSExpression(format: "4 + 5 - 2**3").expressionValue(with: nil, context: nil) as? Int, 1)
        XCTAssertEqual(NSExpression(format: "%K", "name").keyPath, "name")
        XCTAssertEqual(NSExpression(format: "$x").expressionType, .variable)
        XCTAssertEqual(NSExpression(format: "name").description, "name")
        XCTAssertEqual(NSExpression(format: "{1, 'a', nil}").description, "{1, \"a\", nil}")
        XCTAssertEqual(try NSExpression(validatingFormat: "a.b[FIRST].c").description, "a.b[FIRST].c")
        XCTAssertEqual(try NSExpression(validatingFormat: "(-5).x").description, "(-5).x")
        XCTAssertEqual(try NSExpression(validatingFormat: "-(5).x").description, "0 - 5.x")
        XCTAssertEqual(try NSExpression(validatingFormat: "'s'.length").description, "\"s\".length")
        XCTAssertEqual(try NSExpression(validatingFormat: "2 ** -1").expressionValue(with: nil, context: nil) as? Double, 0.5)
    }

    func testStatisticsFunctions() {
        let numbers = const([1, 2, 3, 4, 4, 5, 9, 11])
        func value(_ name: String) -> Any? { fn(name, numbers).expressionValue(with: nil, context: nil) }
        XCTAssertEqual(value("sum:") as? Int, 39)
        XCTAssertEqual(value("count:") as? Int, 8)
        XCTAssertEqual(value("min:") as? Int, 1)
        XCTAssertEqual(value("max:") as? Int, 11)
        XCTAssertEqual(value("average:") as? Double, 4.875)
        XCTAssertEqual(value("median:") as? Double, 4)
        XCTAssertEqual((value("mode:") as? [Any])?.compactMap { $0 as? Int }, [4])
        XCTAssertEqual(value("stddev:") as? Double ?? 0, 3.21859, accuracy: 0.00001)
        XCTAssertNil(fn("median:", const([Int]())).expressionValue(with: nil, context: nil))
        XCTAssertNil(fn("noSuchFunction:", const(1)).expressionValue(with: nil, context: nil))
        XCTAssertNil(fn("distanceToLocation:fromLocation:", const(1), const(2)).expressionValue(with: nil, context: nil))
    }

    func testArithmeticKeepsIntegersAndComputesDecimalsInDouble() {
        func value(_ format: String) -> Any? { NSExpression(format: format).expressionValue(with: nil, context: nil) }
        XCTAssertEqual(value("2 + 3") as? Int, 5)
        XCTAssertEqual(value("7 / 2") as? Double, 3.5)
        XCTAssertEqual(value("modulus(7, 2)") as? Int, 1)
        XCTAssertEqual(value("CAST('0.1', 'NSDecimalNumber') + CAST('0.2', 'NSDecimalNumber')") as? Double ?? 0, 0.3, accuracy: 1e-12)
        XCTAssertEqual(value("abs(-3)") as? Int, 3)
        XCTAssertEqual(value("floor(2.5)") as? Double, 2)
        XCTAssertEqual(value("trunc(-2.5)") as? Double, -2)
        XCTAssertEqual(value("uppercase('ab')") as? String, "AB")
        XCTAssertEqual(value("length('héllo')") as? Int, 5)
    }

    /// Regression: Foundation's Decimal arithmetic traps (SIGILL) on Linux for these operands, so the
    /// evaluator must never use it.
    func testDecimalArithmeticWithExtremeExponentsDoesNotTrap() {
        func value(_ format: String) -> Any? { NSExpression(format: format).expressionValue(with: nil, context: nil) }
        let big = "CAST('1e127', 'NSDecimalNumber')"
        let tiny = "CAST('-1e-128', 'NSDecimalNumber')"
        XCTAssertEqual(value("\(big) * \(big)") as? Double ?? 0, 1e254, accuracy: 1e240)
        XCTAssertEqual(value("\(tiny) - \(tiny)") as? Double, 0)
        XCTAssertNotNil(value("\(big) / \(tiny)"))
        XCTAssertNotNil(value("modulus(\(big), \(tiny))"))
        XCTAssertNotNil(value("sum({\(big), \(big), \(tiny)})"))
        XCTAssertTrue(NSPredicate(format: "\(big) > \(tiny) AND \(tiny) < 0 AND \(big) == \(big)").evaluate(with: nil))
        XCTAssertNil(value("CAST(CAST('inf', 'NSNumber'), 'NSDecimalNumber')"))
    }

    func testCasts() {
        func value(_ format: String, _ args: Any?...) -> Any? {
            NSExpression(format: format, argumentArray: args.map { $0 as Any }).expressionValue(with: nil, context: nil)
        }
        XCTAssertEqual(value("CAST(0, 'NSDate')") as? Date, Date(timeIntervalSinceReferenceDate: 0))
        XCTAssertEqual(value("CAST(%@, 'NSNumber')", Date(timeIntervalSinceReferenceDate: 5)) as? Double, 5)
        XCTAssertEqual(value("CAST('2001-01-01T00:00:10Z', 'NSDate')") as? Date, Date(timeIntervalSinceReferenceDate: 10))
        XCTAssertEqual(value("CAST(12, 'NSString')") as? String, "12")
        XCTAssertEqual(value("CAST('AAE=', 'NSData')") as? Data, Data([0, 1]))
        XCTAssertEqual(value("CAST(x, 'SomeClass')") as? String, nil)
        XCTAssertEqual(value("CAST('x', 'SomeClass')") as? String, "x")
    }

    func testExpressionValueReadsVariablesFromTheContext() {
        let context = NSMutableDictionary()
        context["limit"] = 10
        XCTAssertEqual(NSExpression(format: "$limit * 2").expressionValue(with: nil, context: context) as? Int, 20)
        XCTAssertNil(NSExpression(format: "$missing").expressionValue(with: nil, context: context))
        XCTAssertEqual(key("name").expressionValue(with: People.named("Ada"), context: nil) as? String, "Ada")
        XCTAssertEqual(selfExpression.expressionValue(with: 5, context: nil) as? Int, 5)
    }

    func testBlockExpressions() {
        let block = NSExpression(block: { object, arguments, _ in
            "\(object ?? "nil")-\(arguments.count)-\(arguments.first is NSNull)"
        }, arguments: [const(nil), const(2)])
        XCTAssertEqual(block.expressionType, .block)
        XCTAssertEqual(block.expressionValue(with: "o", context: nil) as? String, "o-2-true")
        XCTAssertEqual(block.arguments?.count, 2)
        XCTAssertEqual(block, block)
        XCTAssertNotEqual(block, NSExpression(block: block.expressionBlock, arguments: [const(nil), const(2)]))
    }

    func testStructuralEquality() {
        XCTAssertEqual(const(3), const(3.0))
        XCTAssertEqual(const(3).hash, const(3.0).hash)
        XCTAssertEqual(const(true), const(1))
        XCTAssertNotEqual(const("3"), const(3))
        XCTAssertEqual(const([1, 2]), aggregate(const(1), const(2)))
        XCTAssertEqual(const(Set([1, 2])), aggregate(const(2), const(1)))
        XCTAssertNotEqual(const([1, 2]), aggregate(const(2), const(1)))
        XCTAssertNotEqual(aggregate(key("a")), aggregate(key("b")))
        XCTAssertEqual(const(Double.nan), const(Double.nan))
        XCTAssertNotEqual(key("a"), variable("a"))
        XCTAssertEqual(Set([key("a"), key("a"), key("b")]).count, 2)
    }
}
