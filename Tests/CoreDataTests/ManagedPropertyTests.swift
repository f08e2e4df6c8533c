import CoreData
import Foundation
import XCTest

/// Typed subclasses with `@Managed`, the Linux stand-in for `@NSManaged`.
final class Shelf: NSManagedObject {
    @Managed var label: String?
    @Managed var capacity: Int
    @Managed var items: Set<ShelfItem>
}

final class ShelfItem: NSManagedObject {
    @Managed var name: String
    @Managed var shelf: Shelf?
}

final class ManagedPropertyTests: XCTestCase {
    private static let model: NSManagedObjectModel = {
        let shelf = NSEntityDescription()
        shelf.name = "Shelf"
        shelf.managedObjectClassName = "Shelf"
        let item = NSEntityDescription()
        item.name = "ShelfItem"
        item.managedObjectClassName = "ShelfItem"
        let label = NSAttributeDescription()
        label.name = "label"
        label.attributeType = .stringAttributeType
        let capacity = NSAttributeDescription()
        capacity.name = "capacity"
        capacity.attributeType = .integer16AttributeType
        capacity.defaultValue = Int16(10)
        capacity.isOptional = false
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false
        let items = NSRelationshipDescription()
        items.name = "items"
        let owner = NSRelationshipDescription()
        owner.name = "shelf"
        owner.maxCount = 1
        items.destinationEntity = item
        owner.destinationEntity = shelf
        items.inverseRelationship = owner
        owner.inverseRelationship = items
        shelf.properties = [label, capacity, items]
        item.properties = [name, owner]
        let model = NSManagedObjectModel()
        model.entities = [shelf, item]
        return model
    }()

    func testManagedPropertiesReadAndWriteThroughTheContext() throws {
        let container = NSPersistentContainer(name: "Shelves", managedObjectModel: Self.model)
        container.persistentStoreDescriptions.first?.type = NSInMemoryStoreType
        container.loadPersistentStores { _, error in XCTAssertNil(error) }
        let context = container.viewContext

        let shelf = Shelf(context: context)
        XCTAssertEqual(shelf.capacity, 10, "the model's default, widened from Integer 16 to Int")
        shelf.label = "Top"
        shelf.capacity = 12
        let book = ShelfItem(context: context)
        book.name = "Book"
        book.shelf = shelf
        XCTAssertEqual(shelf.items.map(\.name), ["Book"], "the inverse is kept in step through typed accessors")
        XCTAssertEqual(shelf.value(forKey: "label") as? String, "Top", "typed and key-value access see the same value")
        try context.save()

        context.reset()
        let fetched = try context.fetch(Shelf.fetchRequest())
        let reread = try XCTUnwrap(fetched.first as? Shelf)
        XCTAssertEqual(reread.label, "Top")
        XCTAssertEqual(reread.capacity, 12)
        XCTAssertEqual(reread.items.first?.shelf, reread)
        reread.label = nil
        XCTAssertNil(reread.label)
        XCTAssertTrue(reread.changedValues().keys.contains("label"))
    }
}
