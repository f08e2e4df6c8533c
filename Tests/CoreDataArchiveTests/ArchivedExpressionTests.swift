import CoreDataArchive
import CoreDataPredicate
import Foundation
import XCTest

private typealias NSExpression = CoreDataPredicate.NSExpression
private typealias NSPredicate = CoreDataPredicate.NSPredicate

/// Archived expressions and predicates built the way Foundation lays them out
/// (Formats/keyed-archive.md §6), decoded and compared with the same trees parsed from format
/// strings.
final class ArchivedExpressionTests: XCTestCase {
    private func expression(root: Int, _ builder: ArchiveBuilder, hook: ArchivedExpressionDecoder.Hook? = nil) throws -> NSExpression {
        let archive = try KeyedArchive(bytes: builder.build(top: ["root": root]))
        return try ArchivedExpressionDecoder(archive: archive, hook: hook).expression(at: archive.rootReference())
    }

    private func predicate(root: Int, _ builder: ArchiveBuilder) throws -> NSPredicate {
        try ArchivedExpressionDecoder.predicate(fromArchive: Data(builder.build(top: ["root": root])))
    }

    /// Decodes `root` and checks it equals `format` parsed, and prints as `printed` (`format` by default).
    private func assertExpression(
        _ root: Int, _ builder: ArchiveBuilder, _ format: String, printed: String? = nil, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let decoded = try expression(root: root, builder)
        XCTAssertEqual(decoded, NSExpression(format: format), file: file, line: line)
        XCTAssertEqual(decoded.description, printed ?? format, file: file, line: line)
    }

    // MARK: - Expressions

    func testConstantsVariablesAndSelf() throws {
        var b = ArchiveBuilder()
        try assertExpression(b.constant(string: "Ada"), b, "\"Ada\"")
        try assertExpression(b.constant(number: 42), b, "42")
        try assertExpression(b.constant(0), b, "nil")
        try assertExpression(b.variable("manager"), b, "$manager")
        try assertExpression(b.evaluatedObject(), b, "SELF")
        try assertExpression(b.keyPathSpecifier("owner.name"), b, "owner.name")
        let date = b.object(["NSDate", "NSObject"], [("NS.time", .real(0))])
        try assertExpression(b.constant(date), b, "CAST(0.0, \"NSDate\")")
        let list = b.array([b.add(.int(1)), b.string("two")])
        let decoded = try expression(root: b.constant(list), b)
        XCTAssertEqual(decoded.expressionType, .constantValue)
        XCTAssertEqual((decoded.constantValue as? [Any])?.count, 2)
        let anyKey = b.object(["NSAnyKeyExpression", "NSExpression", "NSObject"], [("NSExpressionType", .int(15))])
        XCTAssertEqual(try expression(root: anyKey, b).expressionType, .anyKey)
    }

    func testKeyPaths() throws {
        var b = ArchiveBuilder()
        // On the evaluated object: a plain key path.
        try assertExpression(b.keyPath("author.name"), b, "author.name")
        // On a variable: read from the variable's value, printed with it.
        let owner = b.keyPath("owner", operand: b.variable("source"))
        try assertExpression(owner, b, "$source.owner")
        let decoded = try expression(root: owner, b)
        XCTAssertEqual(decoded.expressionValue(with: nil, context: ["source": ["owner": "Ada"]]) as? String, "Ada")
        // A string constant as the key path argument also reads.
        let selector = b.string("valueForKeyPath:")
        let arguments = b.array([b.constant(string: "title")])
        let viaConstant = b.object(
            ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"],
            [("NSOperand", .uid(b.evaluatedObject())), ("NSSelectorName", .uid(selector)), ("NSArguments", .uid(arguments))])
        try assertExpression(viaConstant, b, "title")
    }

    func testFunctions() throws {
        var b = ArchiveBuilder()
        let mapping = b.function(
            "destinationInstancesForEntityMappingNamed:sourceInstances:", operand: b.variable("manager"),
            arguments: [b.constant(string: "PersonToPerson"), b.keyPath("owner", operand: b.variable("source"))])
        try assertExpression(
            mapping, b, "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PersonToPerson\", $source.owner)")
        // Built-ins stand on the class _NSPredicateUtilities.
        try assertExpression(b.builtin("sum:", arguments: [b.keyPath("pages")]), b, "sum:(pages)")
        try assertExpression(b.builtin("add:to:", arguments: [b.constant(number: 1), b.keyPath("pages")]), b, "1 + pages")
        try assertExpression(b.builtin("now", arguments: []), b, "now()")
        // A function without an operand is a built-in too.
        let selector = b.string("count:")
        let arguments = b.array([b.keyPath("books")])
        let bare = b.object(["NSFunctionExpression", "NSExpression", "NSObject"], [("NSSelectorName", .uid(selector)), ("NSArguments", .uid(arguments))])
        try assertExpression(bare, b, "count:(books)")
    }

    func testAggregatesSetsSubqueriesAndTernaries() throws {
        var b = ArchiveBuilder()
        try assertExpression(b.aggregate([b.constant(number: 1), b.constant(number: 2)]), b, "{1, 2}")
        let union = b.object(
            ["NSSetExpression", "NSExpression", "NSObject"],
            [("NSExpressionType", .int(5)), ("NSLeftExpression", .uid(b.keyPath("tags"))), ("NSRightExpression", .uid(b.keyPath("labels")))])
        try assertExpression(union, b, "tags UNION labels")
        let long = b.comparison(b.keyPath("pages", operand: b.variable("b")), 2, b.constant(number: 300))
        let subquery = b.object(
            ["NSSubqueryExpression", "NSExpression", "NSObject"],
            [("NSExpression", .uid(b.keyPath("books"))), ("NSVariable", .uid(b.string("b"))), ("NSSubpredicate", .uid(long)), ("NSExpressionType", .int(13))])
        try assertExpression(subquery, b, "SUBQUERY(books, $b, $b.pages > 300)")
        let condition = b.comparison(b.keyPath("age"), 3, b.constant(number: 18))
        let ternary = b.object(
            ["NSTernaryExpression", "NSExpression", "NSObject"],
            [("NSPredicate", .uid(condition)), ("NSTrueExpression", .uid(b.constant(string: "adult"))),
             ("NSFalseExpression", .uid(b.constant(string: "minor"))), ("NSExpressionType", .int(20))])
        try assertExpression(ternary, b, "TERNARY(age >= 18, \"adult\", \"minor\")")
    }

    // MARK: - Predicates

    func testComparisonPredicates() throws {
        let cases: [(Int64, Int64, Int64, String)] = [
            // type, modifier, options, format
            (4, 0, 1, "name ==[c] \"Ada\""),
            (5, 0, 0, "name != \"Ada\""),
            (0, 0, 0, "name < \"Ada\""),
            (8, 0, 3, "name BEGINSWITH[cd] \"Ada\""),
            (9, 0, 0, "name ENDSWITH \"Ada\""),
            (7, 0, 1, "name LIKE[c] \"Ada\""),
            (6, 0, 0, "name MATCHES \"Ada\""),
            (99, 0, 1, "name CONTAINS[c] \"Ada\""),
            (10, 0, 0, "name IN \"Ada\""),
            (4, 2, 0, "ANY name == \"Ada\""),
            (4, 1, 4, "ALL name ==[n] \"Ada\""),
            (4, 0, 9, "name ==[c] \"Ada\""),  // the locale bit (8) has no syntax and is dropped
        ]
        for (type, modifier, options, format) in cases {
            var b = ArchiveBuilder()
            let root = b.comparison(b.keyPath("name"), type, b.constant(string: "Ada"), modifier: modifier, options: options)
            let decoded = try predicate(root: root, b)
            XCTAssertEqual(decoded.predicateFormat, format)
            XCTAssertEqual(decoded, NSPredicate(format: format), format)
        }
    }

    func testCompoundAndConstantPredicates() throws {
        var b = ArchiveBuilder()
        let young = b.comparison(b.keyPath("age"), 0, b.constant(number: 30))
        let named = b.comparison(b.keyPath("name"), 4, b.constant(string: "Ada"))
        let and = b.compound(1, [young, named])
        let not = b.compound(0, [named])
        let or = b.compound(2, [and, not, b.truePredicate(), b.object(["NSFalsePredicate", "NSPredicate", "NSObject"])])
        let decoded = try predicate(root: or, b)
        let format = "(age < 30 AND name == \"Ada\") OR NOT name == \"Ada\" OR TRUEPREDICATE OR FALSEPREDICATE"
        XCTAssertEqual(decoded.predicateFormat, format)
        XCTAssertEqual(decoded, NSPredicate(format: format))
        XCTAssertTrue(decoded.evaluate(with: ["age": 40, "name": "Bob"]))
    }

    func testBetweenAndCustomSelectorOperators() throws {
        var b = ArchiveBuilder()
        let bounds = b.aggregate([b.constant(number: 1), b.constant(number: 10)])
        let between = b.comparison(b.keyPath("pages"), 100, bounds)
        XCTAssertEqual(try predicate(root: between, b).predicateFormat, "pages BETWEEN {1, 10}")
        let custom = b.object(
            ["NSCustomPredicateOperator", "NSPredicateOperator", "NSObject"],
            [("NSOperatorType", .int(11)), ("NSModifier", .int(0)), ("NSSelectorName", .uid(b.string("isEqual:")))])
        let comparison = b.object(
            ["NSComparisonPredicate", "NSPredicate", "NSObject"],
            [("NSLeftExpression", .uid(b.keyPath("a"))), ("NSRightExpression", .uid(b.keyPath("b"))), ("NSPredicateOperator", .uid(custom))])
        let decoded = try XCTUnwrap(try predicate(root: comparison, b) as? CoreDataPredicate.NSComparisonPredicate)
        XCTAssertEqual(decoded.predicateOperatorType, .customSelector)
        XCTAssertFalse(decoded.evaluate(with: ["a": 1, "b": 1]))
    }

    // MARK: - Hooks

    /// Core Data's `NSFetchRequestExpression` (type 50) as a mapping model holds it.
    private func fetchRequestExpression(_ b: inout ArchiveBuilder) -> Int {
        let request = b.function(
            "fetchRequestForSourceEntityNamed:predicateString:", operand: b.variable("manager"),
            arguments: [b.constant(string: "Car"), b.constant(string: "TRUEPREDICATE")])
        let context = b.keyPath("sourceContext", operand: b.variable("manager"))
        return b.object(
            ["NSFetchRequestExpression", "NSExpression", "NSObject"],
            [("NSMOCExpression", .uid(context)), ("NSCountOnlyFlag", .bool(false)), ("NSExpressionType", .int(50)), ("NSFRExpression", .uid(request))])
    }

    func testUnknownClassesGoToTheHook() throws {
        var b = ArchiveBuilder()
        let root = fetchRequestExpression(&b)
        XCTAssertThrowsError(try expression(root: root, b)) { error in
            XCTAssertEqual((error as? KeyedArchiveError)?.kind, .unknownClass)
            XCTAssertEqual("\(error)", "unknown expression class NSFetchRequestExpression at object \(root) (no hook decoded it)")
        }
        var seen: [String] = []
        let decoded = try expression(root: root, b) { object, decoder in
            seen.append(object.className)
            guard object.className == "NSFetchRequestExpression" else { return nil }
            XCTAssertEqual(try object.integer(forKey: "NSExpressionType"), 50)
            XCTAssertEqual(try object.bool(forKey: "NSCountOnlyFlag"), false)
            let context = try decoder.expression(forKey: "NSMOCExpression", in: object)
            XCTAssertEqual(context?.description, "$manager.sourceContext")
            return try decoder.expression(forKey: "NSFRExpression", in: object)
        }
        XCTAssertEqual(seen, ["NSFetchRequestExpression"])
        XCTAssertEqual(decoded.description, "FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Car\", \"TRUEPREDICATE\")")

        struct Refusal: Error {}
        XCTAssertThrowsError(try expression(root: root, b) { _, _ in throw Refusal() }) { error in
            XCTAssertEqual((error as? KeyedArchiveError)?.kind, .hookFailed)
            XCTAssertTrue("\(error)".hasPrefix("the hook failed on object \(root) (NSFetchRequestExpression): "), "\(error)")
        }
        XCTAssertThrowsError(try expression(root: root, b) { _, _ in nil }) { error in
            XCTAssertEqual((error as? KeyedArchiveError)?.kind, .unknownClass)
        }
    }

    // MARK: - Hostile archives

    func testHostileExpressionsThrowTheirOwnMessages() throws {
        func check(_ root: Int, _ builder: ArchiveBuilder, _ kind: KeyedArchiveError.Kind, _ fragment: String, line: UInt = #line) {
            XCTAssertThrowsError(try expression(root: root, builder), line: line) { error in
                XCTAssertEqual((error as? KeyedArchiveError)?.kind, kind, "\(error)", line: line)
                XCTAssertTrue("\(error)".contains(fragment), "\(error)", line: line)
            }
        }
        var b = ArchiveBuilder()
        // A function whose operand is itself.
        let loop = b.reserve()
        let noArguments = b.array([])
        b.set(loop, ["NSFunctionExpression", "NSExpression", "NSObject"],
              [("NSOperand", .uid(loop)), ("NSSelectorName", .uid(b.string("f:"))), ("NSArguments", .uid(noArguments))])
        check(loop, b, .referenceCycle, "reference cycle at object \(loop)")
        // Arguments that are a dictionary, not an array.
        let dictionary = b.dictionary(keys: [], values: [])
        let wrongArguments = b.object(["NSFunctionExpression", "NSExpression", "NSObject"],
                                      [("NSOperand", .uid(b.variable("x"))), ("NSSelectorName", .uid(b.string("f:"))), ("NSArguments", .uid(dictionary))])
        check(wrongArguments, b, .wrongClass, "object \(dictionary) is an NSMutableDictionary, expected an NSArray, NSSet or NSOrderedSet")
        // An operand that is not an expression.
        let list = b.array([])
        let wrongOperand = b.function("f:", operand: list, arguments: [])
        check(wrongOperand, b, .wrongClass, "object \(list) is an NSArray, expected an NSExpression")
        // A variable whose name is a number.
        let badVariable = b.object(["NSVariableExpression", "NSExpression", "NSObject"], [("NSVariable", .uid(b.add(.int(3))))])
        check(badVariable, b, .malformed, "NSVariable refers to object")
        // A constant holding an object of no value class.
        let stray = b.object(["Gadget", "NSObject"])
        check(b.constant(stray), b, .wrongClass, "holds a Gadget at object \(stray), which is not a constant value")
        // A key path with two arguments.
        let pair = b.array([b.keyPathSpecifier("a"), b.keyPathSpecifier("b")])
        let twoPaths = b.object(["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"],
                                [("NSOperand", .uid(b.evaluatedObject())), ("NSArguments", .uid(pair))])
        check(twoPaths, b, .malformed, "NSArguments holds 2 arguments, expected one key path")
        // A set expression of an unknown type.
        let badSet = b.object(["NSSetExpression", "NSExpression", "NSObject"],
                              [("NSExpressionType", .int(9)), ("NSLeftExpression", .uid(b.keyPath("a"))), ("NSRightExpression", .uid(b.keyPath("b")))])
        check(badSet, b, .malformed, "NSExpressionType 9 is not 5 (union), 6 (intersect) or 7 (minus)")
        // A function target class other than _NSPredicateUtilities.
        let otherClass = b.object(["NSConstantValueExpression", "NSExpression", "NSObject"], [("NSConstantValueClassName", .uid(b.string("NSDate")))])
        check(b.function("date", operand: otherClass, arguments: []), b, .malformed, "the function's target is the class NSDate")
        // $null where an expression is expected.
        let nullOperand = b.object(["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"], [("NSOperand", .uid(b.string("$null")))])
        check(nullOperand, b, .malformed, "is $null, expected an expression")
    }

    func testHostilePredicatesThrowTheirOwnMessages() throws {
        func check(_ root: Int, _ builder: ArchiveBuilder, _ fragment: String, line: UInt = #line) {
            XCTAssertThrowsError(try predicate(root: root, builder), line: line) { error in
                XCTAssertTrue("\(error)".contains(fragment), "\(error)", line: line)
            }
        }
        var b = ArchiveBuilder()
        check(b.comparison(b.keyPath("a"), 2000, b.keyPath("b")), b, "operator type 2000 has no equivalent here")
        check(b.comparison(b.keyPath("a"), 4, b.keyPath("b"), modifier: 3), b, "NSModifier 3 is not 0 (direct), 1 (ALL) or 2 (ANY)")
        check(b.compound(5, []), b, "NSCompoundPredicateType 5 is not 0 (NOT), 1 (AND) or 2 (OR)")
        let operatorIsExpression = b.object(["NSComparisonPredicate", "NSPredicate", "NSObject"],
                                            [("NSLeftExpression", .uid(b.keyPath("a"))), ("NSRightExpression", .uid(b.keyPath("b"))),
                                             ("NSPredicateOperator", .uid(b.keyPath("c")))])
        check(operatorIsExpression, b, "is an NSKeyPathExpression, expected an NSPredicateOperator")
        let noLeft = b.object(["NSComparisonPredicate", "NSPredicate", "NSObject"], [("NSLeftExpression", .uid(0))])
        check(noLeft, b, "has no NSLeftExpression")
        check(b.object(["NSBlockPredicate", "NSPredicate", "NSObject"]), b, "unknown predicate class NSBlockPredicate")
        check(b.keyPath("a"), b, "is an NSKeyPathExpression, expected an NSPredicate")
    }

    func testNestingOverTheLimit() throws {
        var b = ArchiveBuilder()
        var inner = b.variable("x")
        for _ in 0..<150 { inner = b.function("f:", operand: inner, arguments: []) }
        XCTAssertThrowsError(try expression(root: inner, b)) { error in
            XCTAssertEqual((error as? KeyedArchiveError)?.kind, .tooDeep)
            XCTAssertTrue("\(error)".contains("expressions and predicates nested deeper than 100 levels"), "\(error)")
        }
        var shallow = ArchiveBuilder()
        var ok = shallow.variable("x")
        for _ in 0..<99 { ok = shallow.function("f:", operand: ok, arguments: []) }
        XCTAssertNoThrow(try expression(root: ok, shallow))
    }

    /// Aggregates of aggregates sharing one element, 60 levels: the budget stops the expansion.
    func testSharedExpressionsCannotBlowUp() throws {
        var b = ArchiveBuilder()
        var previous = b.constant(number: 1)
        for _ in 0..<60 { previous = b.aggregate([previous, previous]) }
        let start = Date()
        XCTAssertThrowsError(try expression(root: previous, b)) { error in
            XCTAssertEqual((error as? KeyedArchiveError)?.kind, .budgetExceeded, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
    }
}
