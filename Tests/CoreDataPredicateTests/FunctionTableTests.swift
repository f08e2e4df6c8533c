// The whole function and operator table of Apple's format syntax: for each function (by Apple's
// selector name) and operator, a format string, the form it prints as, and the value it evaluates
// to; then the inputs Apple rejects when parsing, and those it raises on when evaluating.
import Foundation
import XCTest
@testable import CoreDataPredicate

final class FunctionTableTests: XCTestCase {
    /// What an expression must evaluate to.
    enum Expected {
        /// An NSNumber that reads as this Int, and as the same Double.
        case int(Int)
        /// An NSNumber that reads as this Double (to within 1e-9).
        case double(Double)
        case string(String)
        /// A collection whose elements print as these, in order.
        case elements([String])
        /// A Date within a minute of now.
        case aboutNow
        /// An integer NSNumber in this range.
        case integer(in: ClosedRange<Int>)
        case date(Date)
        case none
    }

    struct Row {
        let format: String
        let printed: String
        /// Apple's selector name (`NSExpression.function`) when the expression is a function.
        let function: String?
        let expected: Expected
        let line: UInt

        init(_ format: String, _ printed: String, _ function: String?, _ expected: Expected, line: UInt = #line) {
            self.format = format
            self.printed = printed
            self.function = function
            self.expected = expected
            self.line = line
        }
    }

    /// The object every row is evaluated against.
    private var object: [String: Any] {
        [
            "n": 12, "x": 2.5, "s": "Hello", "list": [3, 1, 2, 3], "words": ["b", "a", "b"], "empty": [Int](),
            "nested": [[1, 2], [2, 3]], "sets": [Set([1]), Set([1, 2])], "type": "public.jpeg", "types": ["public.jpeg", "public.png"],
            "pngs": ["public.png", "PUBLIC.PNG"],
            "table": ["k": "v"],
        ]
    }

    private var rows: [Row] {
        [
            // Arithmetic: infix operators, and the selector spellings Apple prints them as.
            Row("n + 3", "n + 3", "add:to:", .int(15)),
            Row("add:to:(n, 3)", "n + 3", "add:to:", .int(15)),
            Row("n - 3", "n - 3", "from:subtract:", .int(9)),
            Row("from:subtract:(n, 3)", "n - 3", "from:subtract:", .int(9)),
            Row("n * 3", "n * 3", "multiply:by:", .int(36)),
            Row("multiply:by:(n, 3)", "n * 3", "multiply:by:", .int(36)),
            Row("n / 8", "n / 8", "divide:by:", .double(1.5)),
            Row("divide:by:(n, 8)", "n / 8", "divide:by:", .double(1.5)),
            Row("modulus:by:(n, 5)", "modulus:by:(n, 5)", "modulus:by:", .int(2)),
            Row("modulus(-7, 2)", "modulus:by:(-7, 2)", "modulus:by:", .int(-1)),
            Row("2 ** 3", "2 ** 3", "raise:toPower:", .double(8)),
            Row("raise:toPower:(2, 10)", "2 ** 10", "raise:toPower:", .double(1024)),
            Row("2 ** 3 ** 2", "2 ** 3 ** 2", "raise:toPower:", .double(512)),
            Row("-n", "0 - n", "from:subtract:", .int(-12)),
            Row("-x * 2", "(0 - x) * 2", "multiply:by:", .double(-5)),
            Row("sqrt(16)", "sqrt:(16)", "sqrt:", .double(4)),
            Row("sqrt:(2.25)", "sqrt:(2.25)", "sqrt:", .double(1.5)),
            Row("log(100)", "log:(100)", "log:", .double(2)),
            Row("ln(1)", "ln:(1)", "ln:", .double(0)),
            Row("exp(0)", "exp:(0)", "exp:", .double(1)),
            Row("floor(x)", "floor:(x)", "floor:", .double(2)),
            Row("floor(-2.5)", "floor:(-2.5)", "floor:", .double(-3)),
            Row("ceiling(x)", "ceiling:(x)", "ceiling:", .double(3)),
            Row("trunc(-2.5)", "trunc:(-2.5)", "trunc:", .double(-2)),
            Row("abs(-3)", "abs:(-3)", "abs:", .int(3)),
            Row("abs(-n)", "abs:(0 - n)", "abs:", .int(12)),
            // Bitwise: operators (Apple's printed form) and selector calls.
            Row("12 & 10", "12 & 10", "bitwiseAnd:with:", .int(8)),
            Row("bitwiseAnd:with:(12, 10)", "12 & 10", "bitwiseAnd:with:", .int(8)),
            Row("bitwiseAnd(n, 10)", "n & 10", "bitwiseAnd:with:", .int(8)),
            Row("12 | 3", "12 | 3", "bitwiseOr:with:", .int(15)),
            Row("bitwiseOr:with:(12, 3)", "12 | 3", "bitwiseOr:with:", .int(15)),
            Row("12 ^ 10", "12 ^ 10", "bitwiseXor:with:", .int(6)),
            Row("bitwiseXor:with:(12, 10)", "12 ^ 10", "bitwiseXor:with:", .int(6)),
            Row("1 << 4", "1 << 4", "leftshift:by:", .int(16)),
            Row("leftshift:by:(1, 4)", "1 << 4", "leftshift:by:", .int(16)),
            Row("256 >> 4", "256 >> 4", "rightshift:by:", .int(16)),
            Row("rightshift:by:(256, 4)", "256 >> 4", "rightshift:by:", .int(16)),
            Row("-16 >> 2", "-16 >> 2", "rightshift:by:", .int(-4)),
            Row("~0", "~0", "onesComplement:", .int(-1)),
            Row("onesComplement:(0)", "~0", "onesComplement:", .int(-1)),
            Row("onesComplement(n)", "~n", "onesComplement:", .int(-13)),
            Row("~(n + 1)", "~(n + 1)", "onesComplement:", .int(-14)),
            Row("~~n", "~~n", "onesComplement:", .int(12)),
            Row("~-1", "~-1", "onesComplement:", .int(0)),
            // Bitwise precedence, as in C: | below ^ below & below shifts below + and *.
            Row("1 | 2 ^ 3 & 4 << 1 + 1", "1 | 2 ^ 3 & 4 << 1 + 1", "bitwiseOr:with:", .int(3)),
            Row("(1 | 2) & 3", "(1 | 2) & 3", "bitwiseAnd:with:", .int(3)),
            Row("(1 << 2) + 1", "(1 << 2) + 1", "add:to:", .int(5)),
            Row("~2 ** 2", "~2 ** 2", "raise:toPower:", .double(9)),
            Row("7.9 & 3", "7.9 & 3", "bitwiseAnd:with:", .int(3)),  // Apple reads numbers as NSInteger.
            // Aggregates: one collection argument, or the values as arguments.
            Row("sum(list)", "sum:(list)", "sum:", .int(9)),
            Row("sum:({1, 2, 3})", "sum:({1, 2, 3})", "sum:", .int(6)),
            Row("sum(1, 2, 3.5)", "sum:(1, 2, 3.5)", "sum:", .double(6.5)),
            Row("count(list)", "count:(list)", "count:", .int(4)),
            Row("min(list)", "min:(list)", "min:", .int(1)),
            Row("max(list)", "max:(list)", "max:", .int(3)),
            Row("max(words)", "max:(words)", "max:", .string("b")),
            Row("average(list)", "average:(list)", "average:", .double(2.25)),
            Row("median(list)", "median:(list)", "median:", .double(2.5)),
            Row("mode(list)", "mode:(list)", "mode:", .elements(["3"])),
            Row("stddev({2, 4, 4, 4, 5, 5, 7, 9})", "stddev:({2, 4, 4, 4, 5, 5, 7, 9})", "stddev:", .double(2)),
            Row("distinct(words)", "distinct:(words)", "distinct:", .elements(["b", "a"])),
            Row("count(distinct(list))", "count:(distinct:(list))", "count:", .int(3)),
            // Strings.
            Row("uppercase(s)", "uppercase:(s)", "uppercase:", .string("HELLO")),
            Row("lowercase:(s)", "lowercase:(s)", "lowercase:", .string("hello")),
            // Core Data's derived-attribute function (not in NSExpression's list): case and diacritics folded.
            Row("canonical:(s)", "canonical:(s)", "canonical:", .string("hello")),
            Row("length(s)", "length:(s)", "length:", .int(5)),
            Row("length(list)", "length:(list)", "length:", .int(4)),
            // Everything else in Apple's list.
            Row("noindex(n)", "noindex:(n)", "noindex:", .int(12)),
            Row("now()", "now()", "now", .aboutNow),
            Row("random()", "random()", "random", .integer(in: 0...Int(Int32.max))),
            Row("random(10)", "random:(10)", "random:", .integer(in: 0...9)),
            Row("random:(10)", "random:(10)", "random:", .integer(in: 0...9)),
            Row("randomn:(10)", "randomn:(10)", "randomn:", .integer(in: 0...9)),
            Row("CAST(n, 'NSString')", "CAST(n, \"NSString\")", "castObject:toType:", .string("12")),
            Row("castObject:toType:(s, 'NSString')", "CAST(s, \"NSString\")", "castObject:toType:", .string("Hello")),
            Row("CAST('2.5', 'NSNumber')", "2.5", nil, .double(2.5)),
            Row("CAST(0, 'NSDate')", "CAST(0.0, \"NSDate\")", nil, .date(Date(timeIntervalSinceReferenceDate: 0))),
            Row("CAST(s, 'Person')", "CAST(s, \"Person\")", "castObject:toType:", .string("Hello")),
            Row("list[0]", "list[0]", "objectFrom:withIndex:", .int(3)),
            Row("objectFrom:withIndex:(list, 1)", "list[1]", "objectFrom:withIndex:", .int(1)),
            Row("list[FIRST]", "list[FIRST]", "objectFrom:withIndex:", .int(3)),
            Row("list[LAST]", "list[LAST]", "objectFrom:withIndex:", .int(3)),
            Row("list[SIZE]", "list[SIZE]", "objectFrom:withIndex:", .int(4)),
            Row("table['k']", "table[\"k\"]", "objectFrom:withIndex:", .string("v")),
            Row("table['missing']", "table[\"missing\"]", "objectFrom:withIndex:", .none),
            Row("FUNCTION(s, 'valueForKey:', 'length')", "FUNCTION(s, \"valueForKey:\", \"length\")", "valueForKey:", .int(5)),
            Row("FUNCTION(SELF, 'valueForKeyPath:', 'list.@count')", "FUNCTION(SELF, \"valueForKeyPath:\", \"list.@count\")",
                "valueForKeyPath:", .int(4)),
            Row("FUNCTION(nil, 'anything')", "FUNCTION(nil, \"anything\")", "anything", .none),
            Row("TERNARY(n > 10, 'big', 'small')", "TERNARY(n > 10, \"big\", \"small\")", nil, .string("big")),
            Row("SUBQUERY(list, $v, $v > 1)", "SUBQUERY(list, $v, $v > 1)", nil, .elements(["3", "2", "3"])),
            Row("SUBQUERY(list, $v, $v > 1).@count", "SUBQUERY(list, $v, $v > 1).@count", nil, .int(3)),
            Row("{n, 'a', nil}", "{n, \"a\", nil}", nil, .elements(["12", "a", "nil"])),
            Row("list UNION {4}", "list UNION {4}", nil, .elements(["3", "1", "2", "4"])),
            Row("list INTERSECT {1, 3}", "list INTERSECT {1, 3}", nil, .elements(["3", "1"])),
            Row("list MINUS {3}", "list MINUS {3}", nil, .elements(["1", "2"])),
            Row("list UNION {1 << 2}", "list UNION {1 << 2}", nil, .elements(["3", "1", "2", "4"])),
            Row("(list UNION {4}).@count & 6", "(list UNION {4}).@count & 6", "bitwiseAnd:with:", .int(4)),
            // Collection operators.
            Row("list.@count", "list.@count", nil, .int(4)),
            Row("list.@sum", "list.@sum", nil, .int(9)),
            Row("list.@avg", "list.@avg", nil, .double(2.25)),
            Row("list.@min", "list.@min", nil, .int(1)),
            Row("list.@max", "list.@max", nil, .int(3)),
            Row("words.@unionOfObjects", "words.@unionOfObjects", nil, .elements(["b", "a", "b"])),
            Row("words.@distinctUnionOfObjects", "words.@distinctUnionOfObjects", nil, .elements(["b", "a"])),
            Row("nested.@unionOfArrays", "nested.@unionOfArrays", nil, .elements(["1", "2", "2", "3"])),
            Row("nested.@distinctUnionOfArrays", "nested.@distinctUnionOfArrays", nil, .elements(["1", "2", "3"])),
            Row("count(sets.@distinctUnionOfSets)", "count:(sets.@distinctUnionOfSets)", "count:", .int(2)),
        ]
    }

    struct PredicateRow {
        let format: String
        let printed: String
        let type: NSComparisonPredicate.Operator?
        let result: Bool
        let line: UInt

        init(_ format: String, _ printed: String, _ type: NSComparisonPredicate.Operator?, _ result: Bool, line: UInt = #line) {
            self.format = format
            self.printed = printed
            self.type = type
            self.result = result
            self.line = line
        }
    }

    private var predicateRows: [PredicateRow] {
        [
            PredicateRow("n = 12", "n == 12", .equalTo, true),
            PredicateRow("n == 12", "n == 12", .equalTo, true),
            PredicateRow("n != 12", "n != 12", .notEqualTo, false),
            PredicateRow("n <> 12", "n != 12", .notEqualTo, false),
            PredicateRow("n < 13", "n < 13", .lessThan, true),
            PredicateRow("n <= 12", "n <= 12", .lessThanOrEqualTo, true),
            PredicateRow("n =< 11", "n <= 11", .lessThanOrEqualTo, false),
            PredicateRow("n > 11", "n > 11", .greaterThan, true),
            PredicateRow("n >= 13", "n >= 13", .greaterThanOrEqualTo, false),
            PredicateRow("n => 12", "n >= 12", .greaterThanOrEqualTo, true),
            PredicateRow("n BETWEEN {10, 20}", "n BETWEEN {10, 20}", .between, true),
            PredicateRow("3 IN list", "3 IN list", .in, true),
            PredicateRow("'ell' IN s", "\"ell\" IN s", .in, true),
            PredicateRow("list CONTAINS 2", "list CONTAINS 2", .contains, true),
            PredicateRow("s CONTAINS 'ELL'", "s CONTAINS \"ELL\"", .contains, false),
            PredicateRow("s CONTAINS[c] 'ELL'", "s CONTAINS[c] \"ELL\"", .contains, true),
            PredicateRow("s BEGINSWITH 'He'", "s BEGINSWITH \"He\"", .beginsWith, true),
            PredicateRow("s ENDSWITH 'lo'", "s ENDSWITH \"lo\"", .endsWith, true),
            PredicateRow("s LIKE 'H*l?'", "s LIKE \"H*l?\"", .like, true),
            PredicateRow("s like[c] 'h*'", "s LIKE[c] \"h*\"", .like, true),
            PredicateRow("s MATCHES 'H.l+o'", "s MATCHES \"H.l+o\"", .matches, true),
            PredicateRow("s ==[d] 'Hellö'", "s ==[d] \"Hellö\"", .equalTo, true),
            PredicateRow("s ==[cd] 'HÉLLO'", "s ==[cd] \"HÉLLO\"", .equalTo, true),
            PredicateRow("s ==[n] 'Hello'", "s ==[n] \"Hello\"", .equalTo, true),
            PredicateRow("s ==[c] 'hello'", "s ==[c] \"hello\"", .equalTo, true),
            PredicateRow("s ==[l] 'Hello'", "s == \"Hello\"", .equalTo, true),  // The locale flag has no effect here.
            PredicateRow("s ==[cl] 'hello'", "s ==[c] \"hello\"", .equalTo, true),
            PredicateRow("type UTI-EQUALS 'PUBLIC.JPEG'", "type UTI-EQUALS \"PUBLIC.JPEG\"", .utiEquals, true),
            PredicateRow("type uti-equals 'public.png'", "type UTI-EQUALS \"public.png\"", .utiEquals, false),
            PredicateRow("type UTI-CONFORMS-TO 'public.jpeg'", "type UTI-CONFORMS-TO \"public.jpeg\"", .utiConformsTo, true),
            PredicateRow("ANY types UTI-CONFORMS-TO 'public.jpeg'", "ANY types UTI-CONFORMS-TO \"public.jpeg\"", .utiConformsTo, true),
            PredicateRow("nil UTI-EQUALS 'public.png'", "nil UTI-EQUALS \"public.png\"", .utiEquals, false),
            PredicateRow("ANY list == 2", "ANY list == 2", .equalTo, true),
            PredicateRow("SOME list > 2", "ANY list > 2", .greaterThan, true),
            PredicateRow("ALL list > 0", "ALL list > 0", .greaterThan, true),
            PredicateRow("NONE list > 5", "NOT ANY list > 5", nil, true),
            PredicateRow("n & 4 == 4", "n & 4 == 4", .equalTo, true),
            PredicateRow("n | 1 == 13 AND n ^ 12 == 0 AND n << 1 == 24 AND n >> 2 == 3 AND ~n == -13",
                         "n | 1 == 13 AND n ^ 12 == 0 AND n << 1 == 24 AND n >> 2 == 3 AND ~n == -13", nil, true),
            PredicateRow("n>>1==6", "n >> 1 == 6", .equalTo, true),
            PredicateRow("SUBQUERY(list, $v, $v == 3).@count == 2", "SUBQUERY(list, $v, $v == 3).@count == 2", .equalTo, true),
            PredicateRow("TRUEPREDICATE", "TRUEPREDICATE", nil, true),
            PredicateRow("FALSEPREDICATE", "FALSEPREDICATE", nil, false),
            PredicateRow("NOT n == 12", "NOT n == 12", nil, false),
            PredicateRow("!(n == 12)", "NOT n == 12", nil, false),
            PredicateRow("n == 12 && s == 'x'", "n == 12 AND s == \"x\"", nil, false),
            PredicateRow("n == 1 || s == 'Hello'", "n == 1 OR s == \"Hello\"", nil, true),
            // Apple's NSExtensionActivationRule idiom.
            PredicateRow("SUBQUERY(pngs, $t, $t UTI-CONFORMS-TO 'public.png').@count == 2",
                         "SUBQUERY(pngs, $t, $t UTI-CONFORMS-TO \"public.png\").@count == 2", .equalTo, true),
        ]
    }

    // MARK: - Expressions

    func testEveryFunctionParsesPrintsAndEvaluates() throws {
        for row in rows {
            let expression: NSExpression
            do {
                expression = try NSExpression(validatingFormat: row.format)
            } catch {
                XCTFail("\(row.format) does not parse: \(error)", line: row.line)
                continue
            }
            XCTAssertEqual(expression.description, row.printed, "printed form of \(row.format)", line: row.line)
            if let function = row.function {
                XCTAssertEqual(expression.expressionType, .function, row.format, line: row.line)
                if expression.expressionType == .function {
                    XCTAssertEqual(expression.function, function, "Apple's selector name for \(row.format)", line: row.line)
                }
            }
            do {
                let reparsed = try NSExpression(validatingFormat: expression.description)
                XCTAssertEqual(reparsed, expression, "round trip of \(row.format)", line: row.line)
                XCTAssertEqual(reparsed.description, row.printed, "printing is stable for \(row.format)", line: row.line)
            } catch {
                XCTFail("printed form \(expression.description) does not parse: \(error)", line: row.line)
            }
            do {
                let value = try expression.validatedExpressionValue(with: object, context: nil)
                check(value, row.expected, row.format, line: row.line)
                check(expression.expressionValue(with: object, context: nil), row.expected, "\(row.format) (plain)", line: row.line)
            } catch {
                XCTFail("\(row.format) does not evaluate: \(error)", line: row.line)
            }
        }
    }

    /// Numeric results are NSNumbers, as on Apple platforms: `as? Int` reads an integral result
    /// whatever its arithmetic (`2 ** 3` is computed in Double), `as? Double` any numeric result.
    private func check(_ value: Any?, _ expected: Expected, _ what: String, line: UInt) {
        switch expected {
        case .int(let n):
            XCTAssertTrue(value.map { type(of: $0) is NSNumber.Type } ?? false, "\(what) is an NSNumber, got \(value.map { type(of: $0) } as Any)", line: line)
            XCTAssertEqual(value as? Int, n, what, line: line)
            XCTAssertEqual(value as? Double, Double(n), what, line: line)
        case .double(let d):
            XCTAssertTrue(value.map { type(of: $0) is NSNumber.Type } ?? false, "\(what) is an NSNumber", line: line)
            XCTAssertEqual(value as? Double ?? .nan, d, accuracy: 1e-9, what, line: line)
            if d == d.rounded(), abs(d) < 1e15 { XCTAssertEqual(value as? Int, Int(d), "\(what) as Int", line: line) }
        case .string(let s):
            XCTAssertEqual(value as? String, s, what, line: line)
        case .elements(let texts):
            guard let value, let elements = ValueKinds.collection(value) else { return XCTFail("\(what) is not a collection: \(value as Any)", line: line) }
            XCTAssertEqual(elements.map { $0.map { "\($0)" } ?? "nil" }, texts, what, line: line)
        case .aboutNow:
            XCTAssertEqual((value as? Date)?.timeIntervalSinceNow ?? 1e9, 0, accuracy: 60, what, line: line)
        case .integer(let range):
            guard let integer = value as? Int else { return XCTFail("\(what) is not an integer: \(value as Any)", line: line) }
            XCTAssertTrue(range.contains(integer), "\(what): \(integer) not in \(range)", line: line)
        case .date(let date):
            XCTAssertEqual(value as? Date, date, what, line: line)
        case .none:
            XCTAssertNil(value, what, line: line)
        }
    }

    /// Every function Apple's `NSExpression` documents has a row, by its selector name.
    func testTheTableCoversAppleFunctionList() {
        let apple = [
            "sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:", "add:to:", "from:subtract:", "multiply:by:",
            "divide:by:", "modulus:by:", "sqrt:", "log:", "ln:", "raise:toPower:", "exp:", "floor:", "ceiling:", "abs:", "trunc:",
            "uppercase:", "lowercase:", "random", "random:", "now", "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:",
            "leftshift:by:", "rightshift:by:", "onesComplement:", "noindex:", "distinct:", "castObject:toType:", "objectFrom:withIndex:",
            "length:", "randomn:",
        ]
        let covered = Set(rows.compactMap(\.function))
        for name in apple {
            XCTAssertNotNil(BuiltinFunctions.named(name), "\(name) is a built-in function")
            XCTAssertTrue(covered.contains(name), "\(name) has a row")
        }
        // The one built-in without a row evaluates only to an error on Linux (see the error table).
        let uncovered = BuiltinFunctions.all.map(\.name).filter { !covered.contains($0) }
        XCTAssertEqual(uncovered, ["distanceToLocation:fromLocation:"])
    }

    // MARK: - Predicates

    func testEveryOperatorParsesPrintsAndEvaluates() throws {
        for row in predicateRows {
            let predicate: NSPredicate
            do {
                predicate = try NSPredicate(validatingFormat: row.format)
            } catch {
                XCTFail("\(row.format) does not parse: \(error)", line: row.line)
                continue
            }
            XCTAssertEqual(predicate.predicateFormat, row.printed, "printed form of \(row.format)", line: row.line)
            if let type = row.type {
                XCTAssertEqual((predicate as? NSComparisonPredicate)?.predicateOperatorType, type, row.format, line: row.line)
            }
            do {
                let reparsed = try NSPredicate(validatingFormat: predicate.predicateFormat)
                XCTAssertEqual(reparsed, predicate, "round trip of \(row.format)", line: row.line)
                XCTAssertEqual(reparsed.predicateFormat, row.printed, line: row.line)
            } catch {
                XCTFail("printed form \(predicate.predicateFormat) does not parse: \(error)", line: row.line)
            }
            XCTAssertEqual(predicate.evaluate(with: object), row.result, row.format, line: row.line)
            XCTAssertEqual(try predicate.validatedEvaluate(with: object), row.result, row.format, line: row.line)
        }
    }

    func testUTIOperatorsHaveFoundationsRawValues() {
        XCTAssertEqual(NSComparisonPredicate.Operator.utiEquals.rawValue, 1100)
        XCTAssertEqual(NSComparisonPredicate.Operator.utiConformsTo.rawValue, 1101)
        // Written with spaces, the same letters are a subtraction of key paths.
        XCTAssertEqual(try NSExpression(validatingFormat: "UTI - EQUALS").function, "from:subtract:")
        XCTAssertEqual(try NSExpression(validatingFormat: "UTI-EQUALSX").description, "UTI - EQUALSX")
    }

    // MARK: - Errors

    private struct ParseError {
        let format: String
        let message: String
        let line: UInt

        init(_ format: String, _ message: String, line: UInt = #line) {
            self.format = format
            self.message = message
            self.line = line
        }
    }

    /// Rejected when parsing, as Apple's parser rejects them.
    private let parseErrors: [ParseError] = [
        ParseError("foo(1)", "unknown function 'foo'"),
        ParseError("foo:bar:(1, 2)", "unknown function 'foo:bar:'"),
        ParseError("sqrt(1, 2)", "wrong number of arguments (2) for function 'sqrt'"),
        ParseError("sqrt()", "wrong number of arguments (0) for function 'sqrt'"),
        ParseError("bitwiseAnd:with:(1)", "wrong number of arguments (1) for function 'bitwiseAnd:with:'"),
        ParseError("onesComplement(1, 2)", "wrong number of arguments (2) for function 'onesComplement'"),
        ParseError("now(1)", "wrong number of arguments (1) for function 'now'"),
        ParseError("distinct:(1, 2)", "wrong number of arguments (2) for function 'distinct:'"),
        ParseError("castObject:toType:(1)", "wrong number of arguments (1) for function 'castObject:toType:'"),
        ParseError("CAST(1)", "expected ',' after the CAST value, found ')'"),
        ParseError("FUNCTION(s)", "FUNCTION needs a receiver and a selector name string, as in FUNCTION(SELF, 'name:', x)"),
        ParseError("FUNCTION(s, 5)", "FUNCTION needs a receiver and a selector name string, as in FUNCTION(SELF, 'name:', x)"),
        ParseError("SUBQUERY(list, v, v > 1)", "expected the SUBQUERY iterator variable such as $x, found 'v'"),
        ParseError("TERNARY(n, 1, 2)", "expected a comparison operator, found ','"),
        ParseError("list[0", "expected ']' to close the index, found end of input"),
        ParseError("1 &", "expected an expression, found end of input"),
        ParseError("1 <<< 2", "expected an expression, found '<'"),
        ParseError("~", "expected an expression, found end of input"),
        ParseError("$x := 5", "variable assignment ($x := …) is not supported"),
        ParseError("FETCH($r, $c, NO)", "FETCH(…) is not supported in format strings (build it with NSFetchRequestExpression); write #FETCH for a key of that name"),
    ]

    func testParseErrors() {
        for error in parseErrors {
            XCTAssertThrowsError(try NSExpression(validatingFormat: error.format), error.format, line: error.line) { thrown in
                XCTAssertEqual((thrown as? NSPredicateSyntaxError)?.message, error.message, error.format, line: error.line)
            }
        }
        XCTAssertThrowsError(try NSPredicate(validatingFormat: "type UTI-CONFORMS-TO[cd] 'public.image'")) { thrown in
            XCTAssertEqual((thrown as? NSPredicateSyntaxError)?.message, "'UTI-CONFORMS-TO' takes no comparison options")
        }
    }

    private struct EvaluationErrorRow {
        let expression: NSExpression
        let failing: String
        let message: String
        let line: UInt

        init(_ format: String, _ failing: String, _ message: String, line: UInt = #line) {
            self.init(NSExpression(format: format), failing, message, line: line)
        }

        init(_ expression: NSExpression, _ failing: String, _ message: String, line: UInt = #line) {
            self.expression = expression
            self.failing = failing
            self.message = message
            self.line = line
        }
    }

    /// Parsed, but raised on by Apple when evaluated: thrown by the validating evaluator, nil from
    /// the plain one.
    private var evaluationErrors: [EvaluationErrorRow] {
        [
            EvaluationErrorRow("sqrt(s)", "sqrt:(s)", "sqrt: needs a number, got String"),
            EvaluationErrorRow("uppercase(n)", "uppercase:(n)", "uppercase: needs a string, got Int"),
            EvaluationErrorRow("length(n)", "length:(n)", "length: needs a string or a collection, got Int"),
            EvaluationErrorRow("s + 1", "s + 1", "add:to: needs numbers, got String"),
            EvaluationErrorRow("1 & s", "1 & s", "bitwiseAnd:with: needs numbers, got String"),
            EvaluationErrorRow("~s", "~s", "onesComplement: needs a number, got String"),
            EvaluationErrorRow("~CAST('inf', 'NSNumber')", "~CAST(\"inf\", \"NSNumber\")", "onesComplement: needs a finite number within the range of Int"),
            EvaluationErrorRow("1 << 1e30", "1 << 1e+30", "leftshift:by: needs finite numbers within the range of Int"),
            EvaluationErrorRow("sum({1, 'a'})", "sum:({1, \"a\"})", "sum: needs numbers, got String"),
            EvaluationErrorRow("average(words)", "average:(words)", "average: needs numbers, got String"),
            EvaluationErrorRow("max({1, 'a'})", "max:({1, \"a\"})", "max: cannot order the values (Int among them)"),
            EvaluationErrorRow("modulus(n, 0)", "modulus:by:(n, 0)", "modulus:by: by zero"),
            EvaluationErrorRow("random(0)", "random:(0)", "random: needs a positive bound, got 0"),
            EvaluationErrorRow("list[9]", "list[9]", "index 9 beyond bounds [0 .. 3]"),
            EvaluationErrorRow("list[-1]", "list[-1]", "index -1 beyond bounds [0 .. 3]"),
            EvaluationErrorRow("empty[0]", "empty[0]", "index 0 beyond bounds for an empty collection"),
            EvaluationErrorRow("list['a']", "list[\"a\"]", "objectFrom:withIndex: needs an integer index, got String"),
            EvaluationErrorRow("s[0]", "s[0]", "objectFrom:withIndex: needs a collection or a dictionary, got String"),
            EvaluationErrorRow("CAST(n, 5)", "CAST(n, 5)", "castObject:toType: needs a type name string, got Int"),
            EvaluationErrorRow("FUNCTION(s, 'reversed')", "FUNCTION(s, \"reversed\")",
                               "String does not answer 'reversed' (conform to PredicateFunctionReceiver to answer it)"),
            EvaluationErrorRow("FUNCTION(s, 'valueForKey:', 5)", "FUNCTION(s, \"valueForKey:\", 5)", "valueForKey: needs one string argument"),
            EvaluationErrorRow("list.@median", "list.@median", "unknown collection operator @median"),
            EvaluationErrorRow("n + sqrt(s)", "sqrt:(s)", "sqrt: needs a number, got String"),
            EvaluationErrorRow(NSExpression(forFunction: "nope:", arguments: [1]), "nope:(1)", "unknown function 'nope:'"),
            EvaluationErrorRow(NSExpression(forFunction: "sqrt:", arguments: [1, 2]), "sqrt:(1, 2)", "sqrt: takes 1 argument, got 2"),
            EvaluationErrorRow(NSExpression(forFunction: "add:to:", arguments: [1]), "add:to:(1)", "add:to: takes 2 arguments, got 1"),
            EvaluationErrorRow(NSExpression(forFunction: "sum:", arguments: []), "sum:()", "sum: takes 1 or more arguments, got 0"),
            EvaluationErrorRow(NSExpression(forFunction: "distanceToLocation:fromLocation:", arguments: [1, 2]), "distanceToLocation:fromLocation:(1, 2)",
                               "distanceToLocation:fromLocation: needs CoreLocation, which does not exist on Linux"),
        ]
    }

    func testEvaluationErrors() {
        for row in evaluationErrors {
            XCTAssertNil(row.expression.expressionValue(with: object, context: nil), row.failing, line: row.line)
            XCTAssertThrowsError(try row.expression.validatedExpressionValue(with: object, context: nil), row.failing, line: row.line) { thrown in
                let error = thrown as? NSExpressionEvaluationError
                XCTAssertEqual(error?.expressionFormat, row.failing, line: row.line)
                XCTAssertEqual(error?.message, row.message, row.failing, line: row.line)
            }
        }
        let error = NSExpressionEvaluationError(expressionFormat: "sqrt(s)", message: "sqrt: needs a number, got String")
        XCTAssertEqual("\(error)", "Unable to evaluate sqrt(s): sqrt: needs a number, got String")
    }

    func testPredicateEvaluationErrors() {
        let cases: [(NSPredicate, String, String)] = [
            (NSPredicate(format: "type UTI-CONFORMS-TO 'public.image'") as NSPredicate, "type UTI-CONFORMS-TO \"public.image\"",
             "there is no Uniform Type Identifier database on Linux to tell whether \"public.jpeg\" conforms to \"public.image\""),
            (NSPredicate(format: "n UTI-EQUALS 'public.item'"), "n UTI-EQUALS \"public.item\"",
             "UTI-EQUALS compares type identifier strings, got Int and String"),
            (NSPredicate(format: "sqrt(s) > 1"), "sqrt:(s)", "sqrt: needs a number, got String"),
            (NSPredicate(format: "ANY list == list[7]"), "list[7]", "index 7 beyond bounds [0 .. 3]"),
            (NSComparisonPredicate(leftExpression: key("n"), rightExpression: const(1), modifier: .direct, type: .customSelector) as NSPredicate,
             "n CUSTOMSELECTOR 1", "a comparison by custom selector needs Objective-C messaging, which Linux does not have"),
        ]
        for (predicate, failing, message) in cases {
            XCTAssertFalse(predicate.evaluate(with: object), failing)
            XCTAssertThrowsError(try predicate.validatedEvaluate(with: object), failing) { thrown in
                XCTAssertEqual((thrown as? NSExpressionEvaluationError)?.expressionFormat, failing)
                XCTAssertEqual((thrown as? NSExpressionEvaluationError)?.message, message, failing)
            }
        }
        // OR stops at its first true subpredicate, as Apple's does: the failing one is not reached.
        XCTAssertTrue(try NSPredicate(format: "n == 12 OR sqrt(s) > 1").validatedEvaluate(with: object))
    }

    /// Values that Apple reads as nil (a missing key, messaging nil) give nil, not an error.
    func testNilOperandsAreNotErrors() throws {
        for format in ["missing + 1", "sqrt(missing)", "uppercase(missing)", "missing & 1", "~missing", "missing[0]", "list[missing]",
                       "FUNCTION(missing, 'anything')", "CAST(missing, 'NSNumber')", "average(empty)"] {
            guard let expression = try? NSExpression(validatingFormat: format) else {
                XCTAssertNoThrow(try NSPredicate(validatingFormat: format), format)
                continue
            }
            XCTAssertNil(try expression.validatedExpressionValue(with: object, context: nil), format)
        }
    }
}
