import CoreData
import Foundation

/// The object-graph scenarios' model, built in code as Apple allows:
/// Author 1—* Book (cascade from Author, nullify from Book), Book *—* Tag, Book 1—* Chapter
/// (ordered, cascade), Person 1—1 Person (spouse), Publisher 1—* Author (deny),
/// and Novel, a subentity of Book. Author has the fetched property `longBooks` (its books of 300
/// pages or more); the model has the fetch request template `AuthorsRatedAtLeast` (`$MIN`).
enum TestModel {
    static func make() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, default value: Any? = nil, rules: [AttributeValidationRule] = []) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = optional
            attribute.defaultValue = value
            attribute.validationRules = rules
            return attribute
        }
        func relationship(_ name: String, toMany: Bool, optional: Bool = true, rule: NSDeleteRule = .nullifyDeleteRule, ordered: Bool = false, min: Int = 0, max: Int? = nil) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.maxCount = max ?? (toMany ? 0 : 1)
            relationship.minCount = min
            relationship.isOptional = optional
            relationship.deleteRule = rule
            relationship.isOrdered = ordered
            return relationship
        }
        func entity(_ name: String, _ properties: [NSPropertyDescription], className: String? = nil) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = className ?? "NSManagedObject"
            entity.properties = properties
            return entity
        }
        func link(_ a: NSRelationshipDescription, _ aEntity: NSEntityDescription, _ b: NSRelationshipDescription, _ bEntity: NSEntityDescription) {
            a.destinationEntity = bEntity
            b.destinationEntity = aEntity
            a.inverseRelationship = b
            b.inverseRelationship = a
        }

        let authorBooks = relationship("books", toMany: true, rule: .cascadeDeleteRule)
        let authorPublisher = relationship("publisher", toMany: false)
        let author = entity("Author", [
            attribute("name", .stringAttributeType, optional: false, rules: [.minimumLength(1), .maximumLength(40)]),
            attribute("born", .dateAttributeType),
            attribute("rating", .integer16AttributeType, default: Int16(3), rules: [.minimumValue(0), .maximumValue(5)]),
            authorBooks, authorPublisher,
        ], className: "AuthorObject")
        author.uniquenessConstraints = [["name"]]

        let bookAuthor = relationship("author", toMany: false)
        let bookTags = relationship("tags", toMany: true)
        let bookChapters = relationship("chapters", toMany: true, rule: .cascadeDeleteRule, ordered: true)
        let book = entity("Book", [
            attribute("title", .stringAttributeType, optional: false),
            attribute("pages", .integer32AttributeType, default: Int32(0)),
            attribute("price", .doubleAttributeType),
            attribute("isbn", .stringAttributeType, rules: [.regularExpression("[0-9]{3}-[0-9]{10}")]),
            attribute("id", .UUIDAttributeType),
            attribute("draftNote", .stringAttributeType),
            bookAuthor, bookTags, bookChapters,
        ], className: "BookObject")
        book.properties.first { $0.name == "draftNote" }?.isTransient = true
        // Persistent history keeps a deleted book's title (and a deleted novel's: inherited).
        (book.properties.first { $0.name == "title" } as? NSAttributeDescription)?.preservesValueInHistoryOnDeletion = true

        let novel = entity("Novel", [attribute("genre", .stringAttributeType)], className: "NovelObject")
        book.subentities = [novel]

        let tagBooks = relationship("books", toMany: true)
        let tag = entity("Tag", [attribute("label", .stringAttributeType, optional: false), tagBooks])

        let chapterBook = relationship("book", toMany: false, optional: false)
        let chapter = entity("Chapter", [attribute("heading", .stringAttributeType, optional: false), chapterBook])

        let spouseA = relationship("spouse", toMany: false)
        let person = entity("Person", [attribute("name", .stringAttributeType, optional: false), spouseA])
        spouseA.destinationEntity = person
        spouseA.inverseRelationship = spouseA

        let publisherAuthors = relationship("authors", toMany: true, rule: .denyDeleteRule, max: 3)
        let publisher = entity("Publisher", [attribute("name", .stringAttributeType, optional: false), publisherAuthors])

        link(authorBooks, author, bookAuthor, book)
        link(bookTags, book, tagBooks, tag)
        link(bookChapters, book, chapterBook, chapter)
        link(publisherAuthors, publisher, authorPublisher, author)

        let longBooks = NSFetchedPropertyDescription()
        longBooks.name = "longBooks"
        let longBooksRequest = NSFetchRequest<NSFetchRequestResult>(entityName: "Book")
        longBooksRequest.predicate = NSPredicate(format: "author == $FETCH_SOURCE AND pages >= 300")
        longBooks.fetchRequest = longBooksRequest
        author.properties.append(longBooks)

        let model = NSManagedObjectModel()
        model.entities = [author, book, novel, tag, chapter, person, publisher]
        let ratedAtLeast = NSFetchRequest<NSFetchRequestResult>(entityName: "Author")
        ratedAtLeast.predicate = NSPredicate(format: "rating >= $MIN")
        model.setFetchRequestTemplate(ratedAtLeast, forName: "AuthorsRatedAtLeast")
        return model
    }
}

/// A typed subclass, found through the entity's class name. `name` is a hand-written accessor
/// (through `value(forKey:)`), the others are `@Managed`.
final class AuthorObject: NSManagedObject {
    var name: String? {
        get { value(forKey: "name") as? String }
        set { setValue(newValue, forKey: "name") }
    }
    @Managed var rating: Int16
    @Managed var born: Date?
    @Managed var books: Set<BookObject>
    @Managed var publisher: NSManagedObject?
    /// A plain Swift property, not a Core Data one.
    private(set) var awakeFromInsertCalls = 0
    override func awakeFromInsert() {
        super.awakeFromInsert()
        awakeFromInsertCalls += 1
        Self.awakeFromInsertHook?(self)
    }
    /// Called by every `awakeFromInsert` while set (tests that set values there, as apps do).
    nonisolated(unsafe) static var awakeFromInsertHook: ((AuthorObject) -> Void)?
    /// Called by every `awakeFromFetch` while set (tests that act in the middle of a fetch).
    nonisolated(unsafe) static var awakeFromFetchHook: (() -> Void)?
    override func awakeFromFetch() {
        super.awakeFromFetch()
        Self.awakeFromFetchHook?()
    }
}

/// The typed subclass of Book.
class BookObject: NSManagedObject {
    @Managed var title: String
    @Managed var pages: Int32
    @Managed var price: Double?
    @Managed var isbn: String?
    @Managed var id: UUID?
    @Managed var author: AuthorObject?
    @Managed var tags: Set<NSManagedObject>
}

/// The typed subclass of Novel, a subentity of Book.
final class NovelObject: BookObject {
    @Managed var genre: String?
}
