// Derived and composite attributes built in code the way Apple-platform code builds them
// (NSDerivedAttributeDescription with an NSExpression, NSCompositeAttributeDescription with
// elements, iOS 17), saved and fetched through a container. Foundation, XCTest and CoreData are
// imported side by side with no type aliases.
import Foundation
import XCTest
import CoreData

final class AppleDerivedCompositeStyleTests: XCTestCase {
    private func makeModel() -> NSManagedObjectModel {
        let owner = NSEntityDescription()
        owner.name = "Owner"
        let pet = NSEntityDescription()
        pet.name = "Pet"

        let ownerName = NSAttributeDescription()
        ownerName.name = "name"
        ownerName.attributeType = .stringAttributeType
        let petCount = NSDerivedAttributeDescription()
        petCount.name = "petCount"
        petCount.type = .integer64
        petCount.derivationExpression = NSExpression(format: "pets.@count")

        let city = NSAttributeDescription()
        city.name = "city"
        city.type = .string
        let street = NSAttributeDescription()
        street.name = "street"
        street.type = .string
        let address = NSCompositeAttributeDescription()
        address.name = "address"
        address.elements = [city, street]

        let petName = NSAttributeDescription()
        petName.name = "name"
        petName.attributeType = .stringAttributeType
        let derivedOwnerName = NSDerivedAttributeDescription()
        derivedOwnerName.name = "ownerName"
        derivedOwnerName.attributeType = .stringAttributeType
        derivedOwnerName.derivationExpression = NSExpression(format: "owner.name")
        let searchName = NSDerivedAttributeDescription()
        searchName.name = "searchName"
        searchName.attributeType = .stringAttributeType
        searchName.derivationExpression = NSExpression(format: "canonical:(name)")

        let pets = NSRelationshipDescription()
        pets.name = "pets"
        pets.destinationEntity = pet
        pets.maxCount = 0
        let petOwner = NSRelationshipDescription()
        petOwner.name = "owner"
        petOwner.destinationEntity = owner
        petOwner.maxCount = 1
        pets.inverseRelationship = petOwner
        petOwner.inverseRelationship = pets

        owner.properties = [ownerName, petCount, address, pets]
        pet.properties = [petName, derivedOwnerName, searchName, petOwner]
        let model = NSManagedObjectModel()
        model.entities = [owner, pet]
        return model
    }

    func testDerivedAndCompositeAttributesAsAppleCodeUsesThem() throws {
        let container = NSPersistentContainer(name: "Pets", managedObjectModel: makeModel())
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        XCTAssertNil(loadError)

        let context = container.viewContext
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
        owner.setValue("Zoë", forKey: "name")
        owner.setValue(["city": "Oslo", "street": "Karl Johans gate"], forKey: "address")
        for name in ["Rex", "Fífí"] {
            let pet = NSEntityDescription.insertNewObject(forEntityName: "Pet", into: context)
            pet.setValue(name, forKey: "name")
            pet.setValue(owner, forKey: "owner")
        }
        try context.save()
        XCTAssertEqual(owner.value(forKey: "petCount") as? Int64, 2)

        let request = NSFetchRequest<NSManagedObject>(entityName: "Pet")
        request.predicate = NSPredicate(format: "ownerName == %@ AND searchName == %@", "Zoë", "fifi")
        let found = try context.fetch(request)
        XCTAssertEqual(found.count, 1)

        let owners = NSFetchRequest<NSManagedObject>(entityName: "Owner")
        owners.predicate = NSPredicate(format: "address.city == %@", "Oslo")
        owners.sortDescriptors = [NSSortDescriptor(key: "address.street", ascending: true)]
        let result = try context.fetch(owners)
        XCTAssertEqual(result.count, 1)
        let address = result.first?.value(forKey: "address") as? [String: Any]
        XCTAssertEqual(address?["street"] as? String, "Karl Johans gate")
        XCTAssertEqual(result.first?.value(forKeyPath: "address.city") as? String, "Oslo")
    }
}
