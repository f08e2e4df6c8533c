import CoreData
import Foundation
import XCTest

private typealias NSPredicate = CoreData.NSPredicate

/// Fetches built from `#Predicate` and `SortDescriptor` over typed subclasses, run against every
/// store (``StoreKind``): each must select exactly what the equivalent format string selects.
final class TypedFetchConformanceTests: XCTestCase {
    /// Authors Ada (5), Alan (2), Grace (4); books Notes (Ada, 120, 10.0), Engines (Ada, 400),
    /// Computing (Alan, 30, 5.5), the novel Story (Grace, 350, 12.0).
    private func seed(_ context: NSManagedObjectContext) throws {
        let ada = context.make("Author", ["name": "Ada", "rating": Int16(5)])
        let alan = context.make("Author", ["name": "Alan", "rating": Int16(2)])
        let grace = context.make("Author", ["name": "Grace", "rating": Int16(4)])
        context.make("Book", ["title": "Notes", "pages": Int32(120), "price": 10.0, "author": ada])
        context.make("Book", ["title": "Engines", "pages": Int32(400), "author": ada])
        context.make("Book", ["title": "Computing", "pages": Int32(30), "price": 5.5, "author": alan])
        context.make("Novel", ["title": "Story", "pages": Int32(350), "price": 12.0, "author": grace, "genre": "fiction"])
        try context.save()
    }

    func testTypedFetchReturnsTypedObjectsInOrder() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seed(context)
            context.reset()
            let request = try NSFetchRequest<BookObject>(
                predicate: #Predicate { $0.pages > 100 && $0.author?.rating != 2 },
                sortBy: [SortDescriptor(\.title, order: .reverse)])
            let books = try context.fetch(request)
            XCTAssertEqual(books.map(\.title), ["Story", "Notes", "Engines"], "[\(kind)]")
            XCTAssertEqual(books.first?.author?.name, "Grace", "[\(kind)] typed relationships")
            XCTAssertTrue(books.first is NovelObject, "[\(kind)] subentity objects have their class")
            XCTAssertEqual((books.first as? NovelObject)?.genre, "fiction", "[\(kind)]")

            let byAuthor = try NSFetchRequest<BookObject>(sortBy: [SortDescriptor(\.author?.name), SortDescriptor(\.pages, order: .reverse)])
            XCTAssertEqual(try context.fetch(byAuthor).map(\.title), ["Engines", "Notes", "Computing", "Story"], "[\(kind)] sorted through a to-one relationship")
            let compared = try NSFetchRequest<AuthorObject>(sortBy: [KeyPathComparator(\AuthorObject.rating, order: .reverse)])
            XCTAssertEqual(try context.fetch(compared).map(\.rating), [5, 4, 2], "[\(kind)] KeyPathComparator")
        }
    }

    func testTypedPredicatesSelectWhatTheirFormatStringsSelect() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seed(context)
            let titles = ["Notes", "Story", "Missing"]
            let cases: [(Predicate<BookObject>, String, Int)] = [
                (#Predicate { $0.pages >= 120 }, "pages >= 120", #line),
                (#Predicate { $0.price == nil }, "price == nil", #line),
                (#Predicate { $0.price != nil && $0.price! > 6 }, "price != nil AND price > 6", #line),
                (#Predicate { ($0.price ?? 0) < 11 }, "TERNARY(price != nil, price, 0) < 11", #line),
                (#Predicate { $0.author?.name == "Ada" || $0.pages < 50 }, "author.name == 'Ada' OR pages < 50", #line),
                (#Predicate { !($0.author?.rating ?? 0 > 3) }, "NOT TERNARY(author.rating != nil, author.rating, 0) > 3", #line),
                (#Predicate { $0.title.contains("in") }, "title CONTAINS 'in'", #line),
                (#Predicate { $0.title.starts(with: "E") }, "title BEGINSWITH 'E'", #line),
                (#Predicate { titles.contains($0.title) }, "title IN %@", #line),
                (#Predicate { (100...360).contains($0.pages) }, "pages BETWEEN {100, 360}", #line),
                (#Predicate { $0.pages * 2 - 100 > 500 }, "pages * 2 - 100 > 500", #line),
                (#Predicate { $0.pages % 100 == 20 }, "modulus(pages, 100) == 20", #line),
                (#Predicate { $0.title.count == 5 }, "title.length == 5", #line),
                (#Predicate { $0.author?.books.count == 2 }, "author.books.@count == 2", #line),
            ]
            for (predicate, format, line) in cases {
                let typed = try NSFetchRequest<BookObject>(predicate: predicate, sortBy: [SortDescriptor(\.title)])
                let formatted = NSFetchRequest<NSManagedObject>(entityName: "Book")
                formatted.predicate = NSPredicate(format: format, argumentArray: [titles])
                formatted.sortDescriptors = typed.sortDescriptors
                let expected = names(try context.fetch(formatted), "title")
                XCTAssertEqual(try context.fetch(typed).map(\.title), expected, "[\(kind)] \(format)", line: UInt(line))
                XCTAssertFalse(expected.isEmpty, "[\(kind)] every case selects something: \(format)", line: UInt(line))
            }
        }
    }

    func testToManyTestsBecomeSubqueries() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seed(context)
            func authors(_ predicate: Predicate<AuthorObject>) throws -> [String] {
                try context.fetch(try NSFetchRequest<AuthorObject>(predicate: predicate, sortBy: [SortDescriptor(\.rating, order: .reverse)])).compactMap(\.name)
            }
            XCTAssertEqual(try authors(#Predicate { $0.books.contains { $0.pages > 380 } }), ["Ada"], "[\(kind)]")
            XCTAssertEqual(try authors(#Predicate { $0.books.contains { $0.pages > 300 } }), ["Ada", "Grace"], "[\(kind)]")
            XCTAssertEqual(try authors(#Predicate { $0.books.allSatisfy { $0.pages > 100 } }), ["Ada", "Grace"], "[\(kind)]")
            XCTAssertEqual(try authors(#Predicate { $0.books.contains { $0.price == nil } && $0.rating > 4 }), ["Ada"], "[\(kind)]")
            XCTAssertEqual(try authors(#Predicate { $0.books.filter { $0.pages > 100 }.count >= 2 }), ["Ada"], "[\(kind)]")
            XCTAssertEqual(try authors(#Predicate { $0.books.isEmpty }), [], "[\(kind)]")
            XCTAssertEqual(try authors(#Predicate { $0.name == "Alan" }), ["Alan"], "[\(kind)] a hand-written accessor")
        }
    }

    func testTypedFetchSeesPendingChangesLikeAnyFetch() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seed(context)
            let draft = try XCTUnwrap(NSEntityDescription.insertNewObject(forEntityName: "Book", into: context) as? BookObject)
            draft.title = "Draft"
            draft.pages = 999
            let request = try NSFetchRequest<BookObject>(predicate: #Predicate { $0.pages > 390 }, sortBy: [SortDescriptor(\.title)])
            XCTAssertEqual(try context.fetch(request).map(\.title), ["Draft", "Engines"], "[\(kind)]")
            XCTAssertEqual(try context.count(for: request), 2, "[\(kind)]")
        }
    }
}
