import CoreDataModel
import Foundation

extension NSEntityDescription {
    /// The entity named `entityName` in the model of `context`'s coordinator, or `nil`.
    public class func entity(forEntityName entityName: String, in context: NSManagedObjectContext) -> NSEntityDescription? {
        context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[entityName]
    }

    /// Creates an object of the named entity in `context`, with its class (see
    /// ``NSManagedObject/registerSubclasses(_:)``). An unknown name traps, as Apple's raises.
    public class func insertNewObject(forEntityName entityName: String, into context: NSManagedObjectContext) -> NSManagedObject {
        guard let entity = entity(forEntityName: entityName, in: context) else {
            preconditionFailure("CoreData: +entityForName: could not locate an entity named '\(entityName)' in this model")
        }
        let type = EntityClassRegistry.objectClass(for: entity)
        return type.init(entity: entity, insertInto: context)
    }
}
