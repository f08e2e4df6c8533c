// Code written the way Apple-platform Core Data code uses transformable attributes (issue 20):
// a Transformable with no transformer name holding arrays and dictionaries, one naming
// NSSecureUnarchiveFromData, and an app's own secure-codable class behind a subclass of
// NSSecureUnarchiveFromDataTransformer registered with ValueTransformer.setValueTransformer(_:forName:)
// (the "ColorTransformer" recipe of Apple's sample code and blog posts), read through @Managed
// properties. Foundation, XCTest and CoreData are imported side by side with no type aliases.
import Foundation
import XCTest
import CoreData

/// An app's value class: secure-codable, as NSSecureUnarchiveFromDataTransformer requires.
public final class PaletteColor: NSObject, NSSecureCoding {
    public static var supportsSecureCoding: Bool { true }
    let name: String
    let hue: Double

    init(name: String, hue: Double) {
        self.name = name
        self.hue = hue
    }

    public func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "name")
        coder.encode(hue, forKey: "hue")
    }

    public init?(coder: NSCoder) {
        guard let name = coder.decodeObject(of: NSString.self, forKey: "name") as String? else { return nil }
        self.name = name
        self.hue = coder.decodeDouble(forKey: "hue")
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? PaletteColor else { return false }
        return name == other.name && hue == other.hue
    }

    public override var hash: Int { name.hashValue }
}

/// Apple's recipe, spelled as Apple apps spell it.
final class PaletteColorTransformer: NSSecureUnarchiveFromDataTransformer {
    static let name = NSValueTransformerName(rawValue: String(describing: PaletteColorTransformer.self))

    override static var allowedTopLevelClasses: [AnyClass] {
        [PaletteColor.self]
    }

    public static func register() {
        let transformer = PaletteColorTransformer()
        ValueTransformer.setValueTransformer(transformer, forName: name)
    }
}

final class Dish: NSManagedObject {
    @Managed var title: String
    @Managed var ingredients: [String]?
    @Managed var nutrition: [String: Any]?
    @Managed var accent: PaletteColor?
    @Managed var source: URL?
}

final class AppleTransformableStyleTests: XCTestCase {
    private func makeContainer() throws -> NSPersistentContainer {
        PaletteColorTransformer.register()

        let recipe = NSEntityDescription()
        recipe.name = "Dish"
        recipe.managedObjectClassName = "Dish"

        let title = NSAttributeDescription()
        title.name = "title"
        title.attributeType = .stringAttributeType
        title.isOptional = false

        // No transformer name: Core Data's default.
        let ingredients = NSAttributeDescription()
        ingredients.name = "ingredients"
        ingredients.attributeType = .transformableAttributeType
        ingredients.attributeValueClassName = "[String]"
        ingredients.isOptional = true

        let nutrition = NSAttributeDescription()
        nutrition.name = "nutrition"
        nutrition.attributeType = .transformableAttributeType
        nutrition.valueTransformerName = NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue
        nutrition.isOptional = true

        let accent = NSAttributeDescription()
        accent.name = "accent"
        accent.attributeType = .transformableAttributeType
        accent.valueTransformerName = PaletteColorTransformer.name.rawValue
        accent.attributeValueClassName = "PaletteColor"
        accent.isOptional = true

        let source = NSAttributeDescription()
        source.name = "source"
        source.attributeType = .transformableAttributeType
        source.isOptional = true

        recipe.properties = [title, ingredients, nutrition, accent, source]
        let model = NSManagedObjectModel()
        model.entities = [recipe]

        let container = NSPersistentContainer(name: "Cookbook", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        NSManagedObject.registerSubclasses(Dish.self)
        return container
    }

    func testTransformableValuesSaveAndFetch() throws {
        let container = try makeContainer()
        let context = container.viewContext

        let soup = Dish(context: context)
        soup.title = "Soup"
        soup.ingredients = ["leek", "potato", "stock"]
        soup.nutrition = ["calories": 180, "vegan": true, "salt": 1.2]
        soup.accent = PaletteColor(name: "leek green", hue: 0.3)
        soup.source = URL(string: "https://example.com/recipes/soup")
        try context.save()
        context.reset()

        let request = NSFetchRequest<Dish>(entityName: "Dish")
        let fetched = try context.fetch(request)
        XCTAssertEqual(fetched.count, 1)
        let recipe = try XCTUnwrap(fetched.first)
        XCTAssertEqual(recipe.title, "Soup")
        XCTAssertEqual(recipe.ingredients, ["leek", "potato", "stock"])
        XCTAssertEqual(recipe.nutrition?["calories"] as? Int, 180)
        XCTAssertEqual(recipe.nutrition?["vegan"] as? Bool, true)
        XCTAssertEqual(recipe.nutrition?["salt"] as? Double, 1.2)
        XCTAssertEqual(recipe.accent, PaletteColor(name: "leek green", hue: 0.3))
        XCTAssertEqual(recipe.source, URL(string: "https://example.com/recipes/soup"))
    }

    func testTheRegisteredTransformers() throws {
        XCTAssertTrue(ValueTransformer.valueTransformerNames().contains(.secureUnarchiveFromDataTransformerName))
        XCTAssertTrue(ValueTransformer.valueTransformerNames().contains(.keyedUnarchiveFromDataTransformerName))
        let transformer = try XCTUnwrap(ValueTransformer(forName: .secureUnarchiveFromDataTransformerName))
        XCTAssertTrue(transformer is NSSecureUnarchiveFromDataTransformer)

        // Apple's direction: the reverse archives, forwards unarchives.
        let data = try XCTUnwrap(transformer.reverseTransformedValue(["a": [1, 2, 3]]) as? Data)
        let unarchived = try NSKeyedUnarchiver.unarchivedObject(ofClasses: NSSecureUnarchiveFromDataTransformer.allowedTopLevelClasses, from: data)
        XCTAssertEqual((unarchived as? [String: [Int]])?["a"], [1, 2, 3])
        XCTAssertEqual((transformer.transformedValue(data) as? [String: [Int]])?["a"], [1, 2, 3])

        // Archived by the app with NSKeyedArchiver, read by the transformer.
        let archived = try NSKeyedArchiver.archivedData(withRootObject: ["x", "y"], requiringSecureCoding: true)
        XCTAssertEqual(transformer.transformedValue(archived) as? [String], ["x", "y"])
        XCTAssertNil(transformer.transformedValue(Data("not an archive".utf8)))
    }

    func testAColorTheDefaultTransformerDoesNotAllowIsNotSaved() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let recipe = Dish(context: context)
        recipe.title = "Paint"
        // PaletteColor is not among NSSecureUnarchiveFromDataTransformer's allowed classes.
        recipe.setValue(PaletteColor(name: "red", hue: 0), forKey: "source")
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as NSError).code, NSManagedObjectValidationError)
        }
        recipe.source = URL(string: "https://example.com")
        XCTAssertNoThrow(try context.save())
    }
}
