import CoreData
import Foundation
import XCTest

/// The parts of the model API that carry predicates: fetch request templates, fetched
/// properties and validation predicates.
final class ModelPredicateTests: XCTestCase {
    private var libraryModelURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/coredata-demo/Resources/Library.xcdatamodeld")
    }

    func testFetchRequestTemplateFromAModelFile() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: libraryModelURL)
        let template = try XCTUnwrap(model.fetchRequestTemplate(forName: "LongBooks"))
        XCTAssertEqual(template.entityName, "Book")
        XCTAssertEqual(template.predicate?.predicateFormat, "pages > 500")
        XCTAssertNil(model.fetchRequestTemplate(forName: "Nope"))
        XCTAssertEqual(model.fetchRequestTemplatesByName.keys.sorted(), ["LongBooks"])
    }

    func testTemplateWithSubstitutionVariablesFetches() throws {
        let model = TestModel.make()
        model.fetchRequestDescriptionsByName["ByName"] = FetchRequestDescription(entityName: "Author", predicateFormat: "name == $NAME")
        let container = NSPersistentContainer(name: "Templates", managedObjectModel: model)
        container.persistentStoreDescriptions.first?.type = NSInMemoryStoreType
        container.loadPersistentStores { _, error in XCTAssertNil(error) }
        let context = container.viewContext
        context.make("Author", ["name": "Ada"])
        context.make("Author", ["name": "Alan"])
        try context.save()
        let request = try XCTUnwrap(model.fetchRequestFromTemplate(withName: "ByName", substitutionVariables: ["NAME": "Alan"]))
        XCTAssertEqual(request.predicate?.predicateFormat, "name == \"Alan\"")
        let found = try context.fetch(request) as? [NSManagedObject]
        XCTAssertEqual(found.map { names($0) }, ["Alan"])
    }

    func testValidationPredicatesFollowTheModelRules() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: libraryModelURL)
        let pages = try XCTUnwrap(model.entitiesByName["Book"]?.attributesByName["pages"])
        XCTAssertEqual(pages.validationPredicates.map(\.predicateFormat), ["SELF >= 0"])
        XCTAssertTrue(pages.validationPredicates[0].evaluate(with: Int32(3)))
        XCTAssertFalse(pages.validationPredicates[0].evaluate(with: Int32(-1)))
        let name = try XCTUnwrap(model.entitiesByName["Author"]?.attributesByName["name"])
        XCTAssertEqual(name.validationPredicates.map(\.predicateFormat), ["length >= 1", "length <= 200"])
        let isbn = try XCTUnwrap(model.entitiesByName["Book"]?.attributesByName["isbn"])
        XCTAssertTrue(isbn.validationPredicates[0].evaluate(with: "978-0201896831"))
        XCTAssertFalse(isbn.validationPredicates[0].evaluate(with: "ISBN?"))
    }

    func testCustomValidationPredicateFailsTheSaveWithItsWarning() throws {
        let model = TestModel.make()
        let title = try XCTUnwrap(model.entitiesByName["Book"]?.attributesByName["title"])
        title.setValidationPredicates([NSPredicate(format: "SELF != %@", "Untitled")], withValidationWarnings: ["a book needs a real title"])
        let container = NSPersistentContainer(name: "Validation", managedObjectModel: model)
        container.persistentStoreDescriptions.first?.type = NSInMemoryStoreType
        container.loadPersistentStores { _, error in XCTAssertNil(error) }
        let context = container.viewContext
        context.make("Book", ["title": "Untitled"])
        XCTAssertThrowsError(try context.save()) { error in
            let nsError = error as NSError
            XCTAssertEqual(nsError.code, NSManagedObjectValidationError)
            XCTAssertEqual(nsError.localizedDescription, "a book needs a real title")
        }
    }
}
