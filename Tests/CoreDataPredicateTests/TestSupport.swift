// Shared fixtures: a small object graph of people and books, and tree-building shorthands.
import Foundation
import XCTest
@testable import CoreDataPredicate

// XCTest re-exports Foundation, which declares its own (unusable) classes of these names; in type
// positions they are ambiguous unless the module's are named (see the README of the module).
typealias NSPredicate = CoreDataPredicate.NSPredicate
typealias NSComparisonPredicate = CoreDataPredicate.NSComparisonPredicate
typealias NSCompoundPredicate = CoreDataPredicate.NSCompoundPredicate
typealias NSExpression = CoreDataPredicate.NSExpression
typealias NSSortDescriptor = CoreDataPredicate.NSSortDescriptor

// Sendable: immutable once the data set is built.
final class Book: KeyValueReadable, CustomStringConvertible, @unchecked Sendable {
    let title: String
    let pages: Int32

    init(_ title: String, _ pages: Int32) {
        self.title = title
        self.pages = pages
    }

    func value(forKey key: String) -> Any? {
        switch key {
        case "title": return title
        case "pages": return pages
        default: return nil
        }
    }

    var description: String { "Book(\(title))" }
}

/// A person as a managed object would present itself: values by key, ages stored with a different
/// numeric type for each person so that comparisons across widths are exercised everywhere.
// Sendable: `spouse` is set only while the data set is built.
final class Person: NSObject, KeyValueReadable, PredicateFunctionReceiver, @unchecked Sendable {
    let name: String
    let age: Any
    let birthday: Date
    let nickname: String?
    let tags: [String]
    let books: [Book]
    var spouse: Person?
    let height: Double
    let isActive: Bool
    let city: String?
    let id: UUID
    let homepage: URL?
    let size: Int

    init(
        _ name: String, age: Any, birthday: Double, nickname: String?, tags: [String], books: [Book],
        height: Double, isActive: Bool, city: String?, id: Int, homepage: String? = nil, size: Int
    ) {
        self.name = name
        self.age = age
        self.birthday = Date(timeIntervalSinceReferenceDate: birthday)
        self.nickname = nickname
        self.tags = tags
        self.books = books
        self.height = height
        self.isActive = isActive
        self.city = city
        self.id = UUID(uuidString: "00000000-0000-0000-0000-00000000000\(id)") ?? UUID()
        self.homepage = homepage.flatMap(URL.init(string:))
        self.size = size
    }

    func value(forKey key: String) -> Any? {
        switch key {
        case "name": return name
        case "age": return age
        case "birthday": return birthday
        case "nickname": return nickname
        case "tags": return tags
        case "books": return books
        case "spouse": return spouse
        case "height": return height
        case "isActive": return isActive
        case "city": return city
        case "id": return id
        case "homepage": return homepage
        case "size": return size
        default: return nil
        }
    }

    func predicateFunction(_ selector: String, arguments: [Any?]) -> Any? {
        switch selector {
        case "initial": return name.first.map(String.init)
        case "greet:": return "\(arguments.first.flatMap { $0 } ?? "hello"), \(name)"
        default: return nil
        }
    }

    override var description: String { "Person(\(name))" }
}

enum People {
    /// Eight people. Spouses: Bob–Carol and frank–Grace.
    static let all: [Person] = {
        let ada = Person("Ada", age: Int16(36), birthday: -5_000_000_000, nickname: "Countess", tags: ["math", "poetry"],
                         books: [Book("Notes", 60), Book("Analytical Engine", 250)], height: 1.65, isActive: true,
                         city: "London", id: 1, homepage: "https://example.com/ada", size: 37)
        let bob = Person("Bob", age: Int32(25), birthday: -500_000_000, nickname: nil, tags: ["music"],
                         books: [Book("Swift", 500)], height: 1.80, isActive: false, city: "Paris", id: 2, size: 44)
        let carol = Person("Carol", age: Int64(52), birthday: -900_000_000, nickname: "Caz", tags: [], books: [],
                           height: 1.70, isActive: true, city: "paris", id: 3, size: 39)
        let dan = Person("Dan", age: UInt8(17), birthday: 250_000_000, nickname: nil, tags: ["math"],
                         books: [Book("Comics", 30), Book("Atlas", 90), Book("Swift", 500)], height: 1.75, isActive: true,
                         city: "Berlin", id: 4, size: 42)
        let eva = Person("Éva", age: NSNumber(value: 41), birthday: -800_000_000, nickname: "Evie", tags: ["art", "math"],
                         books: [Book("Écrits", 200)], height: 1.60, isActive: false, city: nil, id: 5, size: 38)
        let frank = Person("frank", age: 64, birthday: -1_200_000_000, nickname: nil, tags: ["music", "art"],
                           books: [Book("Notes", 80)], height: 1.90, isActive: true, city: "London", id: 6, size: 45)
        let grace = Person("Grace", age: 85.0, birthday: -2_500_000_000, nickname: "Amazing Grace", tags: ["navy", "math", "code"],
                           books: [Book("COBOL", 300), Book("Compilers", 420)], height: 1.55, isActive: false,
                           city: "New York", id: 7, size: 36)
        let hana = Person("Hana", age: Decimal(29), birthday: -300_000_000, nickname: "", tags: ["code"],
                          books: [Book("Notes", 10)], height: 1.68, isActive: true, city: "Tōkyō", id: 8, size: 38)
        bob.spouse = carol
        carol.spouse = bob
        frank.spouse = grace
        grace.spouse = frank
        return [ada, bob, carol, dan, eva, frank, grace, hana]
    }()

    static func named(_ name: String) -> Person {
        guard let person = all.first(where: { $0.name == name }) else { preconditionFailure("no person \(name)") }
        return person
    }

    /// The names of the people `predicate` selects, in data-set order.
    static func selected(by predicate: NSPredicate, variables: [String: Any]? = nil) -> [String] {
        all.filter { predicate.evaluate(with: $0, substitutionVariables: variables) }.map(\.name)
    }
}

// MARK: - Tree shorthands

func key(_ path: String) -> NSExpression { NSExpression(forKeyPath: path) }
func const(_ value: Any?) -> NSExpression { NSExpression(forConstantValue: value) }
func variable(_ name: String) -> NSExpression { NSExpression(forVariable: name) }
func aggregate(_ elements: NSExpression...) -> NSExpression { NSExpression(forAggregate: elements) }
func fn(_ name: String, _ arguments: NSExpression...) -> NSExpression { NSExpression(forFunction: name, arguments: arguments) }
var selfExpression: NSExpression { NSExpression.expressionForEvaluatedObject() }

func cmp(
    _ left: NSExpression, _ type: NSComparisonPredicate.Operator, _ right: NSExpression,
    _ modifier: NSComparisonPredicate.Modifier = .direct, _ options: NSComparisonPredicate.Options = []
) -> NSPredicate {
    NSComparisonPredicate(leftExpression: left, rightExpression: right, modifier: modifier, type: type, options: options)
}

func and(_ subpredicates: NSPredicate...) -> NSPredicate { NSCompoundPredicate(andPredicateWithSubpredicates: subpredicates) }
func or(_ subpredicates: NSPredicate...) -> NSPredicate { NSCompoundPredicate(orPredicateWithSubpredicates: subpredicates) }
func not(_ predicate: NSPredicate) -> NSPredicate { NSCompoundPredicate(notPredicateWithSubpredicate: predicate) }

/// `operand.key` for an operand other than the evaluated object (`$b.pages`, `books[0].title`).
func member(_ operand: NSExpression, _ key: String) -> NSExpression { NSExpression.keyPath(key, operand: operand) }
func countOf(_ operand: NSExpression) -> NSExpression { member(operand, "@count") }
func subquery(_ collection: NSExpression, _ variable: String, _ predicate: NSPredicate) -> NSExpression {
    NSExpression(forSubquery: collection, usingIteratorVariable: variable, predicate: predicate)
}
