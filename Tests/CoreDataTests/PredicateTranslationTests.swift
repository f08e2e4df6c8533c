import CoreData
import Foundation
import XCTest

private typealias NSPredicate = CoreData.NSPredicate
private typealias NSSortDescriptor = CoreData.NSSortDescriptor

/// `#Predicate`, `SortDescriptor` and `KeyPathComparator` over typed subclasses, translated into
/// the tree `NSPredicate(format:)` builds: each case must equal the parsed format string
/// (structural equality) and print as it.
final class PredicateTranslationTests: XCTestCase {
    /// The models' entities are found through a coordinator, as in an app.
    private static let coordinator = NSPersistentStoreCoordinator(managedObjectModel: StoreKind.sharedModel)

    override func setUp() {
        super.setUp()
        _ = Self.coordinator
    }

    private func assertTranslates<T: NSManagedObject>(
        _ predicate: Predicate<T>, _ format: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let translated = try NSPredicate(translating: predicate)
            let expected = NSPredicate(format: format)
            XCTAssertEqual(translated, expected, "translated \(translated.predicateFormat), expected \(expected.predicateFormat)", file: file, line: line)
            XCTAssertEqual(translated.predicateFormat, expected.predicateFormat, file: file, line: line)
            XCTAssertNotNil(NSPredicate(predicate), "Apple's failable spelling", file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    private func assertFails<T: NSManagedObject>(
        _ predicate: Predicate<T>, mentioning words: [String], file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try NSPredicate(translating: predicate), file: file, line: line) { error in
            let message = "\(error)"
            XCTAssertTrue(error is PredicateTranslationError, message, file: file, line: line)
            for word in words { XCTAssertTrue(message.contains(word), "'\(word)' not in: \(message)", file: file, line: line) }
        }
        XCTAssertNil(NSPredicate(predicate), "Apple's failable spelling returns nil", file: file, line: line)
    }

    func testComparisonsOfAttributes() {
        assertTranslates(#Predicate<BookObject> { $0.pages > 300 }, "pages > 300")
        assertTranslates(#Predicate<BookObject> { $0.pages >= 300 }, "pages >= 300")
        assertTranslates(#Predicate<BookObject> { $0.pages < 300 }, "pages < 300")
        assertTranslates(#Predicate<BookObject> { $0.pages <= 300 }, "pages <= 300")
        assertTranslates(#Predicate<BookObject> { $0.title == "Notes" }, "title == 'Notes'")
        assertTranslates(#Predicate<BookObject> { $0.title != "Notes" }, "title != 'Notes'")
        assertTranslates(#Predicate<BookObject> { 300 < $0.pages }, "300 < pages")
    }

    func testConjunctionDisjunctionAndNegation() {
        assertTranslates(#Predicate<BookObject> { $0.pages >= 100 && $0.pages < 400 && $0.title != "x" }, "pages >= 100 AND pages < 400 AND title != 'x'")
        assertTranslates(#Predicate<BookObject> { $0.pages < 10 || !($0.title == "a") }, "pages < 10 OR NOT title == 'a'")
        assertTranslates(#Predicate<BookObject> { ($0.pages < 10 || $0.pages > 20) && $0.title == "a" }, "(pages < 10 OR pages > 20) AND title == 'a'")
    }

    func testCapturedValues() {
        let minimum: Int32 = 5
        let title = "Notes"
        let id = UUID(uuidString: "6C2E3D2B-2F40-4B46-9D3A-1D8E1F1C7A10") ?? UUID()
        let date = Date(timeIntervalSinceReferenceDate: 1000)
        assertTranslates(#Predicate<BookObject> { $0.pages > minimum }, "pages > 5")
        assertTranslates(#Predicate<BookObject> { $0.title == title }, "title == 'Notes'")
        XCTAssertEqual(try NSPredicate(translating: #Predicate<BookObject> { $0.id == id }), NSPredicate(format: "id == %@", id))
        XCTAssertEqual(try NSPredicate(translating: #Predicate<AuthorObject> { $0.born == date }), NSPredicate(format: "born == %@", date as NSDate))
    }

    func testOptionalsAndToOneRelationships() {
        assertTranslates(#Predicate<BookObject> { $0.price == nil }, "price == nil")
        assertTranslates(#Predicate<BookObject> { $0.author != nil }, "author != nil")
        assertTranslates(#Predicate<BookObject> { $0.author?.name == "Ada" }, "author.name == 'Ada'")
        assertTranslates(#Predicate<BookObject> { $0.author!.rating > 3 }, "author.rating > 3")
        assertTranslates(#Predicate<BookObject> { ($0.price ?? 0) > 10 }, "TERNARY(price != nil, price, 0.0) > 10.0")
        assertTranslates(#Predicate<BookObject> { $0.author.flatMap { $0.name } == "Ada" }, "author.name == 'Ada'")
    }

    func testObjectIDsStandForTheirObjects() {
        // A #Predicate cannot capture an object ID (its values must be Codable), but it can test one.
        assertTranslates(#Predicate<BookObject> { $0.author?.objectID == nil }, "author == nil")
    }

    func testHandWrittenAccessorsAreNamedToo() {
        assertTranslates(#Predicate<AuthorObject> { $0.name == "Ada" }, "name == 'Ada'")
        assertTranslates(#Predicate<AuthorObject> { $0.name?.starts(with: "A") == true }, "TERNARY(name BEGINSWITH 'A', YES, NO) == YES")
    }

    func testArithmetic() {
        assertTranslates(#Predicate<BookObject> { $0.pages * 2 + 1 > 100 }, "pages * 2 + 1 > 100")
        assertTranslates(#Predicate<BookObject> { $0.pages - 10 < 100 }, "pages - 10 < 100")
        assertTranslates(#Predicate<BookObject> { $0.pages % 2 == 0 }, "modulus(pages, 2) == 0")
        assertTranslates(#Predicate<BookObject> { $0.pages / 7 == 2 }, "trunc(pages / 7) == 2")
        assertTranslates(#Predicate<BookObject> { ($0.price ?? 0) / 2 > 1 }, "TERNARY(price != nil, price, 0.0) / 2.0 > 1.0")
        assertTranslates(#Predicate<BookObject> { -$0.pages < -100 }, "pages * -1 < -100")
    }

    func testStringsAndCollectionsOfValues() {
        let titles = ["Notes", "Engines"]
        assertTranslates(#Predicate<BookObject> { $0.title.contains("ot") }, "title CONTAINS 'ot'")
        assertTranslates(#Predicate<BookObject> { $0.title.starts(with: "No") }, "title BEGINSWITH 'No'")
        assertTranslates(#Predicate<BookObject> { titles.contains($0.title) }, "title IN {'Notes', 'Engines'}")
        assertTranslates(#Predicate<BookObject> { $0.title.isEmpty }, "title.length == 0")
        assertTranslates(#Predicate<BookObject> { $0.title.count > 3 }, "title.length > 3")
    }

    func testRanges() {
        let pages: ClosedRange<Int32> = 100...400
        let halfOpen: Range<Int32> = 100..<400
        assertTranslates(#Predicate<BookObject> { (100...400).contains($0.pages) }, "pages BETWEEN {100, 400}")
        assertTranslates(#Predicate<BookObject> { pages.contains($0.pages) }, "pages BETWEEN {100, 400}")
        assertTranslates(#Predicate<BookObject> { halfOpen.contains($0.pages) }, "pages >= 100 AND pages < 400")
        assertTranslates(#Predicate<BookObject> { (100..<400).contains($0.pages) }, "pages >= 100 AND pages < 400")
    }

    func testToManyRelationships() {
        assertTranslates(#Predicate<AuthorObject> { $0.books.contains { $0.pages > 300 } }, "SUBQUERY(books, $_local_1, $_local_1.pages > 300).@count != 0")
        assertTranslates(
            #Predicate<AuthorObject> { $0.books.allSatisfy { $0.pages > 300 && $0.price != nil } },
            "SUBQUERY(books, $_local_1, NOT ($_local_1.pages > 300 AND $_local_1.price != nil)).@count == 0")
        assertTranslates(#Predicate<AuthorObject> { $0.books.count == 2 }, "books.@count == 2")
        assertTranslates(#Predicate<AuthorObject> { $0.books.isEmpty }, "books.@count == 0")
        assertTranslates(#Predicate<AuthorObject> { $0.books.filter { $0.pages > 100 }.count >= 1 }, "SUBQUERY(books, $_local_1, $_local_1.pages > 100).@count >= 1")
        assertTranslates(
            #Predicate<AuthorObject> { $0.books.contains { book in book.tags.count > 1 && book.author?.books.contains { $0.pages > 300 } == true } },
            "SUBQUERY(books, $_local_1, $_local_1.tags.@count > 1 AND TERNARY(SUBQUERY($_local_1.author.books, $_local_2, $_local_2.pages > 300).@count != 0, YES, NO) == YES).@count != 0")
    }

    func testConditional() {
        assertTranslates(#Predicate<BookObject> { ($0.pages > 100 ? 1 : 0) == 1 }, "TERNARY(pages > 100, 1, 0) == 1")
    }

    func testUnsupportedConstructsNameThemselves() {
        let lookup = ["Notes": 1]
        assertFails(#Predicate<BookObject> { lookup[$0.title] == 1 }, mentioning: ["PredicateExpressions.DictionaryKeySubscript"])
        assertFails(#Predicate<BookObject> { ($0 as? NovelObject) != nil }, mentioning: ["PredicateExpressions.ConditionalCast"])
        assertFails(#Predicate<AuthorObject> { $0.awakeFromInsertCalls > 0 }, mentioning: ["awakeFromInsertCalls", "reads no property", "Author"])
        assertFails(#Predicate<BookObject> { $0.title.utf8.count > 0 }, mentioning: ["String", "no Core Data equivalent"])
    }

    func testSortDescriptorsAndKeyPathComparators() throws {
        let byTitle = try NSSortDescriptor(translating: SortDescriptor(\BookObject.title))
        XCTAssertEqual(byTitle.key, "title")
        XCTAssertTrue(byTitle.ascending)
        let byPagesDescending = NSSortDescriptor(SortDescriptor(\BookObject.pages, order: .reverse))
        XCTAssertEqual(byPagesDescending.key, "pages")
        XCTAssertFalse(byPagesDescending.ascending)
        XCTAssertEqual(try NSSortDescriptor(translating: SortDescriptor(\BookObject.author?.name)).key, "author.name", "through a to-one relationship")
        XCTAssertEqual(try NSSortDescriptor(translating: SortDescriptor(\BookObject.author?.rating, order: .reverse)).key, "author.rating")
        let comparator = try NSSortDescriptor(translating: KeyPathComparator(\BookObject.price, order: .reverse))
        XCTAssertEqual(comparator.key, "price")
        XCTAssertFalse(comparator.ascending)
        XCTAssertThrowsError(try NSSortDescriptor(translating: SortDescriptor(\AuthorObject.awakeFromInsertCalls))) { error in
            XCTAssertTrue("\(error)".contains("awakeFromInsertCalls"), "\(error)")
        }
    }

    func testTypedFetchRequestCarriesTheTranslation() throws {
        let request = try NSFetchRequest<BookObject>(predicate: #Predicate { $0.pages > 100 }, sortBy: [SortDescriptor(\.title, order: .reverse)])
        XCTAssertEqual(request.entityName, "Book")
        XCTAssertEqual(request.predicate?.predicateFormat, "pages > 100")
        XCTAssertEqual(request.sortDescriptors?.map(\.key), ["title"])
        XCTAssertEqual(request.sortDescriptors?.map(\.ascending), [false])
        let compared = try NSFetchRequest<BookObject>(sortBy: [KeyPathComparator(\BookObject.pages)])
        XCTAssertNil(compared.predicate)
        XCTAssertEqual(compared.sortDescriptors?.map(\.key), ["pages"])
    }
}
