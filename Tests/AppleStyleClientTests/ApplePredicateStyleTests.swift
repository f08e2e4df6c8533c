// Predicates, expressions and sort descriptors written the way Apple-platform code writes them:
// Foundation, XCTest and CoreData imported side by side, Apple's spellings.
import Foundation
import XCTest
import CoreData

// What such a file must add. Foundation on Linux declares its own NSPredicate, NSComparisonPredicate,
// NSCompoundPredicate, NSExpression and NSSortDescriptor (without format strings or key paths), so
// next to CoreData these names are ambiguous in type positions (`let p: NSPredicate`,
// `as? NSCompoundPredicate`, `[NSSortDescriptor]`) and in the two expressions whose initializers
// Foundation also offers, `NSPredicate(value:)` and `NSPredicate(block:)`. Everything else in this
// file (`NSPredicate(format:)`, `NSCompoundPredicate(andPredicateWithSubpredicates:)`,
// `NSSortDescriptor(key:ascending:)`, …) compiles unchanged. These five lines settle all of it:
fileprivate typealias NSPredicate = CoreDataPredicate.NSPredicate
fileprivate typealias NSComparisonPredicate = CoreDataPredicate.NSComparisonPredicate
fileprivate typealias NSCompoundPredicate = CoreDataPredicate.NSCompoundPredicate
fileprivate typealias NSExpression = CoreDataPredicate.NSExpression
fileprivate typealias NSSortDescriptor = CoreDataPredicate.NSSortDescriptor
// (`CoreData.NSPredicate` is ambiguous too, because CoreData re-exports both Foundation and the
// module that declares the classes; it resolves once CoreData declares these typealiases itself.)

private final class Author: NSObject, KeyValueReadable {
    let name: String
    let age: Int16
    let books: [String]

    init(name: String, age: Int16, books: [String]) {
        self.name = name
        self.age = age
        self.books = books
    }

    func value(forKey key: String) -> Any? {
        switch key {
        case "name": return name
        case "age": return age
        case "books": return books
        default: return nil
        }
    }
}

final class ApplePredicateStyleTests: XCTestCase {
    private let authors = [
        Author(name: "Ada", age: 36, books: ["Notes"]),
        Author(name: "bob", age: 17, books: []),
        Author(name: "Émile", age: 52, books: ["Émile", "Julie"]),
    ]

    func testPredicatesTheAppleWay() {
        let name = "Ada"
        let byName = NSPredicate(format: "name == %@", name)
        let adults = NSPredicate(format: "age >= %d", 18)
        let both = NSCompoundPredicate(andPredicateWithSubpredicates: [byName, adults])
        let either = NSCompoundPredicate(orPredicateWithSubpredicates: [byName, NSPredicate(format: "ANY books BEGINSWITH[cd] %@", "e")])
        let notAdults = NSCompoundPredicate(notPredicateWithSubpredicate: adults)

        XCTAssertEqual(authors.filter { both.evaluate(with: $0) }.map(\.name), ["Ada"])
        XCTAssertEqual(authors.filter { either.evaluate(with: $0) }.map(\.name), ["Ada", "Émile"])
        XCTAssertEqual(authors.filter { notAdults.evaluate(with: $0) }.map(\.name), ["bob"])
        XCTAssertEqual(both.predicateFormat, "name == \"Ada\" AND age >= 18")
        XCTAssertEqual((authors as NSArray).filtered(using: adults).count, 2)
    }

    func testTypedDeclarationsAndCasts() {
        let predicate: NSPredicate = NSPredicate(format: "age > 20 AND name BEGINSWITH[c] %@", "a")
        guard let compound = predicate as? NSCompoundPredicate else { return XCTFail("not compound") }
        XCTAssertEqual(compound.compoundPredicateType, .and)
        guard let first = compound.subpredicates.first as? NSComparisonPredicate else { return XCTFail("not a comparison") }
        XCTAssertEqual(first.predicateOperatorType, .greaterThan)
        let left: NSExpression = first.leftExpression
        XCTAssertEqual(left.expressionType, .keyPath)
        XCTAssertEqual(left.keyPath, "age")
        let optional: NSPredicate? = nil
        XCTAssertNil(optional)
    }

    func testPredicateFromExpressionsTheAppleWay() {
        let predicate = NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: "age"),
            rightExpression: NSExpression(forConstantValue: 40),
            modifier: .direct, type: .lessThan, options: [])
        XCTAssertEqual(authors.filter { predicate.evaluate(with: $0) }.map(\.name), ["Ada", "bob"])
        let template = NSPredicate(format: "age > $minimum")
        let bound = template.withSubstitutionVariables(["minimum": 40])
        XCTAssertEqual(authors.filter { bound.evaluate(with: $0) }.map(\.name), ["Émile"])
        XCTAssertTrue(NSPredicate(value: true).evaluate(with: nil))
        XCTAssertTrue(NSPredicate(block: { object, _ in object != nil }).evaluate(with: 1))
    }

    func testSortDescriptorsTheAppleWay() {
        let byName = NSSortDescriptor(key: "name", ascending: true)
        let byNameIgnoringCase = NSSortDescriptor(key: "name", ascending: true, selector: "caseInsensitiveCompare:")
        let descriptors: [NSSortDescriptor] = [NSSortDescriptor(key: "age", ascending: false)]
        // `compare:` is case-sensitive (upper case first) and puts "É" with "E", as NSString does.
        XCTAssertEqual(((authors as NSArray).sortedArray(using: [byName]) as? [Author])?.map(\.name), ["Ada", "Émile", "bob"])
        XCTAssertEqual(((authors as NSArray).sortedArray(using: [byNameIgnoringCase]) as? [Author])?.map(\.name), ["Ada", "bob", "Émile"])
        XCTAssertEqual(((authors as NSArray).sortedArray(using: descriptors) as? [Author])?.map(\.name), ["Émile", "Ada", "bob"])
        XCTAssertEqual(byName.compare(authors[0], to: authors[1]), .orderedAscending)
    }

    func testMalformedFormatsFromUsersThrow() {
        XCTAssertThrowsError(try NSPredicate(validatingFormat: "name ==")) { error in
            XCTAssertEqual((error as? NSPredicateSyntaxError)?.offset, 7)
        }
    }
}
