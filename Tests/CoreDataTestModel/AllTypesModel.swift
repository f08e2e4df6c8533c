import CoreDataModel

/// The one definition of the test model with every attribute type: Owner 1—* Item (ordered),
/// Item *—* Tag, where Item has one attribute of each type. Every all-types model the store
/// suites and the fuzz targets use is built here, so an attribute type added to ``everyType()``
/// reaches all of them at once (and changes the golden store and the generated seed corpora,
/// which must then be rebuilt: `COREDATA_WRITE_GOLDEN=1 swift test --filter GoldenStoreTests`,
/// then `bash Fuzz/make-corpus.sh`).
///
/// A suite that needs more composes it on top through ``make(ownerAttributes:itemAttributes:entities:)``:
/// the crash suites add `Owner.rank` and a `Note` entity (CrashTestModel), the XML reader's fuzz
/// target a transformable `Item.archived`. The stored bytes of every fixture and corpus depend on
/// the exact names, types, order and version hashes built here; change them only together.
///
/// Its own target (`CoreDataTestModel`, on CoreDataModel and CoreDataStorage only) so that both
/// the test suites' `CoreDataTestSupport` and the fuzz targets' `FuzzBinarySupport` depend on it
/// and neither on the other.
package enum AllTypesModel {
    /// Item's attributes, one of every type, in the order the model declares them. New
    /// descriptions on each call: a property belongs to one entity of one model.
    package static func everyType() -> [NSAttributeDescription] {
        [
            attribute("i16", .integer16AttributeType), attribute("i32", .integer32AttributeType),
            attribute("i64", .integer64AttributeType), attribute("flag", .booleanAttributeType),
            attribute("double", .doubleAttributeType), attribute("float", .floatAttributeType),
            attribute("decimal", .decimalAttributeType), attribute("text", .stringAttributeType),
            attribute("date", .dateAttributeType), attribute("blob", .binaryDataAttributeType),
            attribute("uuid", .UUIDAttributeType), attribute("uri", .URIAttributeType),
        ]
    }

    /// A frozen model of Owner, Item and Tag, then `entities`.
    ///
    /// - Parameters:
    ///   - ownerAttributes: declared after `Owner.name`, before the relationship `items`.
    ///   - itemAttributes: declared after ``everyType()``, before the relationships `owner` and `tags`.
    ///   - entities: entities of the caller's own, after Tag; they may not relate to the three.
    package static func make(
        ownerAttributes: [NSAttributeDescription] = [], itemAttributes: [NSAttributeDescription] = [],
        entities: [NSEntityDescription] = []
    ) -> NSManagedObjectModel {
        let ownerItems = relationship("items", toMany: true, ordered: true)
        let itemOwner = relationship("owner", toMany: false)
        let itemTags = relationship("tags", toMany: true)
        let tagItems = relationship("items", toMany: true)
        let owner = NSEntityDescription()
        owner.name = "Owner"
        owner.properties = [attribute("name", .stringAttributeType)] + ownerAttributes + [ownerItems]
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = everyType() + itemAttributes + [itemOwner, itemTags]
        let tag = NSEntityDescription()
        tag.name = "Tag"
        tag.properties = [attribute("label", .stringAttributeType), tagItems]
        for (a, aEntity, b, bEntity) in [(ownerItems, owner, itemOwner, item), (itemTags, item, tagItems, tag)] {
            a.destinationEntity = bEntity
            b.destinationEntity = aEntity
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        let model = NSManagedObjectModel()
        model.entities = [owner, item, tag] + entities
        try? model.freeze()
        return model
    }

    /// An optional attribute, as every attribute of these models is.
    package static func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        return attribute
    }

    private static func relationship(_ name: String, toMany: Bool, ordered: Bool = false) -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.maxCount = toMany ? 0 : 1
        relationship.isOrdered = ordered
        relationship.isOptional = true
        return relationship
    }
}
