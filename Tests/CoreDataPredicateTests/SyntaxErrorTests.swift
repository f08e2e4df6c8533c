// Malformed format strings: the throwing initializer reports exactly where and what.
import XCTest
@testable import CoreDataPredicate

final class SyntaxErrorTests: XCTestCase {
    private struct Malformed {
        let format: String
        let arguments: [Any?]
        let offset: Int
        let message: String
        let line: UInt

        init(_ format: String, _ arguments: [Any?] = [], at offset: Int, _ message: String, line: UInt = #line) {
            self.format = format
            self.arguments = arguments
            self.offset = offset
            self.message = message
            self.line = line
        }
    }

    private let cases: [Malformed] = [
        Malformed("", at: 0, "expected an expression, found end of input"),
        Malformed("   ", at: 3, "expected an expression, found end of input"),
        Malformed("age >", at: 5, "expected an expression, found end of input"),
        Malformed("age > 30 AND", at: 12, "expected an expression, found end of input"),
        Malformed("age 30", at: 4, "expected a comparison operator, found '30'"),
        Malformed("age", at: 3, "expected a comparison operator, found end of input"),
        Malformed("(age > 30", at: 9, "expected ')' to close the '(' at offset 0, found end of input"),
        Malformed("age > 30)", at: 8, "expected end of input after the predicate, found ')'"),
        Malformed("name == 'Ada", at: 8, "unterminated string literal"),
        Malformed("name == \"Ada", at: 8, "unterminated string literal"),
        Malformed("name == 'a\\u12'", at: 8, "invalid \\u escape: expected 4 hexadecimal digits"),
        Malformed("name == 'a\\uD800'", at: 8, "invalid \\u escape: unpaired surrogate"),
        // `&` and `|` are Apple's bitwise operators: `30 & age` is one operand.
        Malformed("age > 30 & age < 40", at: 15, "unexpected '<' after a complete predicate (join comparisons with AND or OR)"),
        Malformed("age > 30 | age < 40", at: 15, "unexpected '<' after a complete predicate (join comparisons with AND or OR)"),
        Malformed("age ~ 3", at: 4, "expected a comparison operator, found '~'"),
        Malformed("age # 3", at: 4, "expected a name after '#'"),
        Malformed("age ` 3", at: 4, "unexpected character '`'"),
        Malformed("1 & == 1", at: 4, "expected an expression, found '=='"),
        Malformed("~ == 1", at: 2, "expected an expression, found '=='"),
        Malformed("$x := 5", at: 0, "variable assignment ($x := …) is not supported"),
        Malformed("FETCH($r, $c, NO) == 1", at: 0,
                  "FETCH(…) is not supported in format strings (build it with NSFetchRequestExpression); write #FETCH for a key of that name"),
        Malformed("a UTI-EQUALS[c] 'x'", at: 2, "'UTI-EQUALS' takes no comparison options"),
        Malformed("a UTI-CONFORMS-TO", at: 17, "expected an expression, found end of input"),
        Malformed("size == 38", at: 0, "'size' is only meaningful as an index, as in tags[SIZE]; write #size for a key of that name"),
        Malformed("IN == 3", at: 0, "expected an expression, found the reserved word 'IN' (write #IN for a key of that name)"),
        Malformed("age == %@", at: 7, "missing argument for %@: argument 1 is needed, 0 given"),
        Malformed("age == %2$@", ["x"], at: 7, "missing argument for %2$@: argument 2 is needed, 1 given"),
        Malformed("%K == 1", [5], at: 0, "%K needs a String key path, got Int"),
        Malformed("%K == 1", [nil], at: 0, "%K needs a String key path, got nil"),
        Malformed("age > %d", ["x"], at: 6, "%d needs an integer, got String"),
        Malformed("age > %d", [1.5], at: 6, "%d needs an integer, got Double"),
        Malformed("age > %f", ["x"], at: 6, "%f needs a number, got String"),
        Malformed("name == %s", [5], at: 8, "%s needs a String, got Int"),
        Malformed("a == %y", [1], at: 5, "unsupported format specifier '%y'"),
        Malformed("a == %5d", [1], at: 5, "unsupported format specifier (field widths are not supported)"),
        Malformed("a == %%", at: 5, "'%%' is only meaningful inside a quoted string"),
        Malformed("a == %0$@", [1], at: 5, "argument positions start at 1, as in %1$@"),
        Malformed("a == 1 == 2", at: 7, "unexpected '==' after a complete predicate (join comparisons with AND or OR)"),
        Malformed("TRUEPREDICATE == 1", at: 14, "unexpected '==' after a complete predicate (join comparisons with AND or OR)"),
        Malformed("ANY tags", at: 8, "expected a comparison operator, found end of input"),
        Malformed("ALL tags AND x == 1", at: 9, "expected a comparison operator, found 'AND'"),
        Malformed("NOT age", at: 7, "expected a comparison operator, found end of input"),
        Malformed("age > 30 AND name", at: 17, "expected a comparison operator, found end of input"),
        Malformed("foo(1) == 2", at: 0, "unknown function 'foo'"),
        Malformed("sqrt(1, 2) == 1", at: 0, "wrong number of arguments (2) for function 'sqrt'"),
        Malformed("sum() == 0", at: 0, "wrong number of arguments (0) for function 'sum'"),
        Malformed("bar:baz:(1) == 2", at: 0, "unknown function 'bar:baz:'"),
        Malformed("sqrt:(1, 2) == 1", at: 0, "wrong number of arguments (2) for function 'sqrt:'"),
        Malformed("SUBQUERY(books, b, b.pages > 1).@count > 0", at: 16,
                  "expected the SUBQUERY iterator variable such as $x, found 'b'"),
        Malformed("SUBQUERY(books, $b, $b.pages).@count > 0", at: 28, "expected a comparison operator, found ')'"),
        Malformed("SUBQUERY(books, $b)", at: 18, "expected ',' after the SUBQUERY variable, found ')'"),
        Malformed("FUNCTION(SELF) == 1", at: 0, "FUNCTION needs a receiver and a selector name string, as in FUNCTION(SELF, 'name:', x)"),
        Malformed("TERNARY(a, 1, 2) == 1", at: 9, "expected a comparison operator, found ','"),
        Malformed("TERNARY(a == 1, 2) == 1", at: 17, "expected ',' after the TERNARY true value, found ')'"),
        Malformed("age ==[x] 3", at: 7, "unknown comparison option 'x' (expected c, d or n)"),
        Malformed("age ==[c 3", at: 9, "expected ']' after comparison options, found '3'"),
        Malformed("age ==[] 3", at: 7, "expected comparison options such as c, d or cd, found ']'"),
        Malformed("{1, 2 == 3", at: 6, "expected ',' or '}', found '=='"),
        Malformed("tags[1 == 2", at: 7, "expected ']' to close the index, found '=='"),
        Malformed("0x == 1", at: 0, "expected digits after '0x'"),
        Malformed("0xFFFFFFFFFFFFFFFFF == 1", at: 0, "integer literal does not fit in 64 bits"),
        Malformed("$ == 1", at: 0, "expected a variable name after '$'"),
        Malformed("# == 1", at: 0, "expected a name after '#'"),
        Malformed("@ == 1", at: 0, "expected an operator name after '@'"),
        Malformed("a.1 == 2", at: 2, "expected a key after '.', found '1'"),
        Malformed("a.b. == 1", at: 5, "expected a key after '.', found '=='"),
        Malformed("(a == 1) + 2 == 3", at: 0, "expected an expression, found a predicate"),
        Malformed("a + (b == 1) == 2", at: 4, "expected an expression, found a predicate"),
        Malformed("a == 1 b", at: 7, "expected end of input after the predicate, found 'b'"),
        Malformed("a == 'x' 'y'", at: 9, "expected end of input after the predicate, found 'y'"),
        Malformed("CAST(1) == 2", at: 6, "expected ',' after the CAST value, found ')'"),
        Malformed("a BETWEEN", at: 9, "expected an expression, found end of input"),
        Malformed("first == 1", at: 0, "'first' is only meaningful as an index, as in tags[FIRST]; write #first for a key of that name"),
        Malformed(String(repeating: "(", count: 300) + "a == 1" + String(repeating: ")", count: 300), at: 208,
                  "parentheses and operators nested deeper than 208 levels"),
        Malformed(String(repeating: "NOT ", count: 200) + "a == 1", at: 404, "nesting deeper than 100 levels"),
        Malformed(String(repeating: "1 + ", count: 200) + "1 == 1", at: 398, "nesting deeper than 100 levels"),
        Malformed(String(repeating: "-", count: 150) + "a == 1", at: 50, "nesting deeper than 100 levels"),
        Malformed("name == 'ok' AND name == 'unterminated", at: 25, "unterminated string literal"),
        Malformed("age == == 'unterminated", at: 7, "expected an expression, found '=='"),
    ]

    func testThereAreAtLeastThirtyMalformedStrings() {
        XCTAssertGreaterThanOrEqual(cases.count, 30)
    }

    func testMalformedStringsReportOffsetAndMessage() {
        for malformed in cases {
            do {
                let predicate = try NSPredicate(validatingFormat: malformed.format, argumentArray: malformed.arguments)
                XCTFail("\(malformed.format) parsed as \(predicate)", line: malformed.line)
            } catch {
                XCTAssertEqual(error.offset, malformed.offset, "offset for \(malformed.format)", line: malformed.line)
                XCTAssertEqual(error.message, malformed.message, "message for \(malformed.format)", line: malformed.line)
                XCTAssertEqual(error.formatString, malformed.format, line: malformed.line)
            }
        }
    }

    func testDescriptionStatesStringOffsetAndReason() {
        let expected = NSPredicateSyntaxError(formatString: "age >", offset: 5, message: "expected an expression, found end of input")
        XCTAssertThrowsError(try NSPredicate(validatingFormat: "age >")) { error in
            XCTAssertEqual(error as? NSPredicateSyntaxError, expected)
            XCTAssertEqual(
                "\(error)", "Unable to parse the format string \"age >\" at offset 5: expected an expression, found end of input")
        }
    }

    func testAskingForTheWrongSubclassThrows() {
        XCTAssertThrowsError(try NSCompoundPredicate(validatingFormat: "a == 1")) { error in
            XCTAssertEqual((error as? NSPredicateSyntaxError)?.message, "the string describes NSComparisonPredicate, not NSCompoundPredicate")
        }
        XCTAssertNoThrow(try NSComparisonPredicate(validatingFormat: "a == 1"))
        XCTAssertNoThrow(try NSCompoundPredicate(validatingFormat: "a == 1 OR b == 2"))
    }

    func testOffsetsCountUnicodeScalars() {
        // "é" precomposed is one scalar; the error is after it.
        XCTAssertThrowsError(try NSPredicate(validatingFormat: "é ~")) { error in
            XCTAssertEqual((error as? NSPredicateSyntaxError)?.offset, 2)
        }
    }

    /// Regression (fuzzer, FuzzPredicateParser): 114 unary minuses parsed within the recursion limit
    /// but printed as `0 - (0 - (…))`, which needs two levels of recursion per minus, and the printed
    /// form no longer parsed. The recursion limit is now above what any accepted tree prints to.
    func testDeepUnaryMinusChainPrintsToAParseableString() throws {
        for count in [50, 97, 98] {
            let format = String(repeating: "-", count: count) + "a == 1"
            let predicate = try NSPredicate(validatingFormat: format)
            let reparsed = try NSPredicate(validatingFormat: predicate.predicateFormat)
            XCTAssertEqual(reparsed, predicate, "\(count) minuses")
        }
    }

    /// Whatever the shape, a tree the parser accepts prints to a string it accepts again.
    func testTreesAtTheHeightLimitRoundTrip() throws {
        let shapes = [
            String(repeating: "NOT (a == 1 OR ", count: 49) + "b == 2" + String(repeating: ")", count: 49),
            "x == " + String(repeating: "abs(", count: 97) + "1" + String(repeating: ")", count: 97),
            "x == " + String(repeating: "(1 - ", count: 97) + "1" + String(repeating: ")", count: 97),
            String(repeating: "SUBQUERY(a, $v, ", count: 32) + "b == 1" + String(repeating: ").@count == 1", count: 32),
        ]
        for format in shapes {
            let predicate = try NSPredicate(validatingFormat: format)
            let reparsed = try NSPredicate(validatingFormat: predicate.predicateFormat)
            XCTAssertEqual(reparsed, predicate, String(format.prefix(40)))
        }
    }

    func testExpressionFormatErrors() {
        XCTAssertThrowsError(try NSExpression(validatingFormat: "a == 1")) { error in
            XCTAssertEqual((error as? NSPredicateSyntaxError)?.message, "expected end of input after the expression, found '=='")
            XCTAssertEqual((error as? NSPredicateSyntaxError)?.offset, 2)
        }
        XCTAssertThrowsError(try NSExpression(validatingFormat: "1 +"))
    }
}
