// Subclasses written the way Apple-platform Core Data code writes them, found through the
// entity's class name alone: no registration call anywhere. Foundation, XCTest and CoreData are
// imported side by side, as in a file shared with an iOS or macOS app (where @Managed reads
// @NSManaged). The accessors of `Ingredient.name` are Apple's documented custom accessor pattern.
import Foundation
import XCTest
import CoreData

final class Recipe: NSManagedObject {
    @Managed var title: String
    @Managed var createdAt: Date?
    @Managed var ingredients: Set<Ingredient>

    /// Apple's advice: set initial values with the primitive accessor, which is no change.
    override func awakeFromInsert() {
        super.awakeFromInsert()
        setPrimitiveValue(Date(timeIntervalSince1970: 1_000_000), forKey: "createdAt")
    }
}

final class Ingredient: NSManagedObject {
    var name: String {
        get {
            willAccessValue(forKey: "name")
            defer { didAccessValue(forKey: "name") }
            return primitiveValue(forKey: "name") as? String ?? ""
        }
        set {
            willChangeValue(forKey: "name")
            setPrimitiveValue(newValue, forKey: "name")
            didChangeValue(forKey: "name")
        }
    }
    @Managed var recipe: Recipe?
}

/// Shares its name with a class of CoreDataTests; SubclassLookupTests uses the pair, registering
/// the marker to make this module one of registered classes.
final class LookupSharedName: NSManagedObject {}
final class LookupAppleModuleMarker: NSManagedObject {}

final class AppleSubclassStyleTests: XCTestCase {
    private func makeContainer() throws -> NSPersistentContainer {
        let recipe = NSEntityDescription()
        recipe.name = "Recipe"
        recipe.managedObjectClassName = "Recipe"
        let ingredient = NSEntityDescription()
        ingredient.name = "Ingredient"
        ingredient.managedObjectClassName = "Ingredient"

        let title = NSAttributeDescription()
        title.name = "title"
        title.attributeType = .stringAttributeType
        title.isOptional = false
        let createdAt = NSAttributeDescription()
        createdAt.name = "createdAt"
        createdAt.attributeType = .dateAttributeType
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false

        let ingredients = NSRelationshipDescription()
        ingredients.name = "ingredients"
        ingredients.destinationEntity = ingredient
        ingredients.minCount = 0
        ingredients.maxCount = 0
        ingredients.deleteRule = .cascadeDeleteRule
        let owner = NSRelationshipDescription()
        owner.name = "recipe"
        owner.destinationEntity = recipe
        owner.minCount = 0
        owner.maxCount = 1
        owner.deleteRule = .nullifyDeleteRule
        ingredients.inverseRelationship = owner
        owner.inverseRelationship = ingredients

        recipe.properties = [title, createdAt, ingredients]
        ingredient.properties = [name, owner]
        let model = NSManagedObjectModel()
        model.entities = [recipe, ingredient]

        let container = NSPersistentContainer(name: "Cookbook", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        return container
    }

    func testInsertedAndFetchedObjectsAreTheSubclassesTheModelNames() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let recipe = NSEntityDescription.insertNewObject(forEntityName: "Recipe", into: context) as! Recipe
        recipe.title = "Pancakes"
        for item in ["flour", "milk", "eggs"] {
            let ingredient = NSEntityDescription.insertNewObject(forEntityName: "Ingredient", into: context) as! Ingredient
            ingredient.name = item
            ingredient.recipe = recipe
        }
        XCTAssertEqual(recipe.createdAt, Date(timeIntervalSince1970: 1_000_000), "set in awakeFromInsert")
        try context.save()

        let background = container.newBackgroundContext()
        try background.performAndWait {
            let request = NSFetchRequest<Recipe>(entityName: "Recipe")
            let recipes = try background.fetch(request)
            XCTAssertEqual(recipes.count, 1)
            XCTAssertEqual(recipes.first?.title, "Pancakes")
            XCTAssertEqual(recipes.first?.createdAt, Date(timeIntervalSince1970: 1_000_000), "a primitive value of an inserted object is saved")
            XCTAssertEqual(Set(recipes.first?.ingredients.map(\.name) ?? []), ["flour", "milk", "eggs"])
            let anyRequest = NSFetchRequest<NSManagedObject>(entityName: "Ingredient")
            XCTAssertTrue(try background.fetch(anyRequest).allSatisfy { $0 is Ingredient })
        }
    }

    func testCustomAccessorsBracketingPrimitiveAccessorsRecordChanges() throws {
        let container = try makeContainer()
        let context = container.viewContext
        context.undoManager = UndoManager()
        let ingredient = NSEntityDescription.insertNewObject(forEntityName: "Ingredient", into: context) as! Ingredient
        ingredient.name = "sugar"
        try context.save()
        XCTAssertFalse(context.hasChanges)

        ingredient.name = "honey"
        XCTAssertTrue(ingredient.hasChanges)
        XCTAssertEqual(ingredient.changedValues()["name"] as? String, "honey")
        context.undo()
        XCTAssertEqual(ingredient.name, "sugar", "willChangeValue recorded the value undo puts back")
        context.redo()
        try context.save()

        let background = container.newBackgroundContext()
        background.performAndWait {
            let names = (try? background.fetch(NSFetchRequest<Ingredient>(entityName: "Ingredient")))?.map(\.name)
            XCTAssertEqual(names, ["honey"])
        }
    }

    func testAPrimitiveAccessorAloneIsNoChange() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let recipe = NSEntityDescription.insertNewObject(forEntityName: "Recipe", into: context) as! Recipe
        recipe.title = "Soup"
        try context.save()

        recipe.setPrimitiveValue("Stew", forKey: "title")
        XCTAssertEqual(recipe.title, "Stew")
        XCTAssertFalse(recipe.hasChanges)
        XCTAssertFalse(context.hasChanges)
        XCTAssertTrue(recipe.changedValues().isEmpty)
        try context.save()
        context.refresh(recipe, mergeChanges: false)
        XCTAssertEqual(recipe.title, "Soup", "a save with only primitive changes saves nothing")
    }
}
