import CoreDataBinaryStore
import CoreDataModel
import CoreDataStorage
import CoreDataTestSupport

/// The model the top-k scan tests share (`PageSortBoundsTests`, `PersistedPageBoundsTests`):
/// one entity, Person, with two string attributes to sort by and an integer to filter on.
enum PersonModel {
    static let model: NSManagedObjectModel = {
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [
            AllTypesModel.attribute("name", .stringAttributeType), AllTypesModel.attribute("age", .integer32AttributeType),
            AllTypesModel.attribute("note", .stringAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [person]
        try? model.freeze()
        return model
    }()

    /// A store of the model at `path`, checkpointed only when a test asks.
    static func open(_ path: String) throws -> BinaryStore {
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        return try BinaryStore(path: path, model: model, metadata: StoreMetadata(), options: options)
    }
}
