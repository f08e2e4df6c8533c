import CoreData

/// The benchmark's model: one entity `User(name, email, age, score, created)`, optionally with a
/// fetch index on `age` (the "with an index" variant of the query workload).
enum UserModel {
    static func make(indexOnAge: Bool) -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let user = NSEntityDescription()
        user.name = "User"
        user.managedObjectClassName = "NSManagedObject"
        user.properties = [
            attribute("name", .stringAttributeType), attribute("email", .stringAttributeType),
            attribute("age", .integer64AttributeType), attribute("score", .doubleAttributeType),
            attribute("created", .dateAttributeType),
        ]
        if indexOnAge {
            user.indexes = [NSFetchIndexDescription(name: "byAge", elements: [
                NSFetchIndexElementDescription(propertyName: "age", collationType: .binary),
            ])]
        }
        let model = NSManagedObjectModel()
        model.entities = [user]
        return model
    }
}
