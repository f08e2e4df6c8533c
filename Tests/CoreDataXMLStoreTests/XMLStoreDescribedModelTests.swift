import CoreDataModel
import CoreDataStorage
import CoreDataXMLFormat
import Foundation
import XCTest

/// The model an XML file describes by itself, and the schema listing every problem of a file
/// (what `coredata` reads XML stores with when it has no model).
final class XMLStoreDescribedModelTests: XCTestCase {
    private func document(_ objects: String, hashes: [String] = ["Item", "Owner"]) throws -> XMLStoreDocument {
        let keys = hashes.map { "<key>\($0)</key><data>AAEC</data>" }.joined()
        let text = """
            <?xml version="1.0" standalone="yes"?>
            <database>
                <databaseInfo>
                    <version>134481920</version>
                    <UUID>6F1D8F7E-2C55-4E0B-9A43-5D4C0E1B2A39</UUID>
                    <nextObjectID>3</nextObjectID>
                    <metadata><plist version="1.0"><dict><key>NSStoreModelVersionHashes</key><dict>\(keys)</dict></dict></plist></metadata>
                </databaseInfo>
            \(objects)
            </database>
            """
        return try XMLStoreReader.decode(Array(text.utf8))
    }

    /// The example of Formats/xml-store.md §13, without its model.
    private let example = """
            <object type="OWNER" id="z1">
                <attribute name="name" type="string">Ann &amp; Bob</attribute>
                <relationship name="items" type="0/0" destination="ITEM" idrefs="z3 z2"></relationship>
            </object>
            <object type="ITEM" id="z2">
                <attribute name="count" type="int16">-3</attribute>
                <attribute name="price" type="decimal">12.25</attribute>
                <relationship name="owner" type="1/1" destination="OWNER" idrefs="z1"></relationship>
            </object>
            <object type="ITEM" id="z3">
                <attribute name="count" type="int16">7</attribute>
                <relationship name="owner" type="1/1" destination="OWNER" idrefs="z1"></relationship>
            </object>
        """

    func testTheExampleDescribesItsEntitiesTypesAndRelationships() throws {
        let document = try document(example)
        let (model, problems) = XMLStoreDescribedModel.describe(document)
        XCTAssertEqual(problems, [])
        XCTAssertEqual(model.entitiesByName.keys.sorted(), ["Item", "Owner"], "entity names come from the version hashes")
        let item = try XCTUnwrap(model.entitiesByName["Item"])
        XCTAssertEqual(item.attributesByName["count"]?.attributeType, .integer16AttributeType)
        XCTAssertEqual(item.attributesByName["price"]?.attributeType, .decimalAttributeType)
        XCTAssertEqual(item.relationshipsByName["owner"]?.isToMany, false)
        XCTAssertEqual(model.entitiesByName["Owner"]?.relationshipsByName["items"]?.destinationEntity?.name, "Item")
        let rows = try XMLStoreSchema(model: model).rows(from: document)
        let owner = try XCTUnwrap(rows.first { $0.objectID.entityName == "Owner" })
        XCTAssertEqual(owner["name"], .string("Ann & Bob"))
        XCTAssertEqual(owner["items"], .references([StoreObjectID(entityName: "Item", primaryKey: 3), StoreObjectID(entityName: "Item", primaryKey: 2)]))
        XCTAssertEqual(rows.first { $0.objectID.primaryKey == 2 }?["count"], .integer(-3))
    }

    func testAReferenceToAnotherEntityMakesItASubentity() throws {
        let document = try document("""
                <object type="SHELF" id="z1">
                    <relationship name="things" type="0/0" destination="ITEM" idrefs="z2 z3"></relationship>
                </object>
                <object type="ITEM" id="z2"><attribute name="count" type="int16">1</attribute></object>
                <object type="BOOK" id="z3"><attribute name="count" type="int16">2</attribute><attribute name="title" type="string">T</attribute></object>
            """, hashes: [])
        let (model, problems) = XMLStoreDescribedModel.describe(document)
        XCTAssertEqual(problems, [])
        XCTAssertEqual(model.entitiesByName["BOOK"]?.superentity?.name, "ITEM")
        XCTAssertEqual(model.entitiesByName["BOOK"]?.declaredProperties.map(\.name), ["title"], "count is inherited")
        XCTAssertEqual(try XMLStoreSchema(model: model).rows(from: document).count, 3)
    }

    func testConflictsAndUnlistedEntitiesAreProblemsWithTheirLines() throws {
        let document = try document("""
                <object type="ITEM" id="z1"><attribute name="count" type="int16">1</attribute></object>
                <object type="ITEM" id="z2"><attribute name="count" type="string">x</attribute></object>
                <object type="ITEMS" id="z3"></object>
            """)
        let (_, problems) = XMLStoreDescribedModel.describe(document)
        XCTAssertEqual(problems.map(\.line), [10, 11])
        XCTAssertTrue(problems[0].message.contains("'count' of 'Item' is an attribute of type string here, but an attribute of type int16 at line 9"), problems[0].message)
        XCTAssertTrue(problems[1].message.contains("object z3 has type 'ITEMS', which is no entity the metadata's NSStoreModelVersionHashes lists (Item, Owner)"), problems[1].message)
    }

    func testTheSchemaListsEveryProblemAndRowsThrowsTheFirst() throws {
        let damaged = example
            .replacingOccurrences(of: ">-3<", with: ">-3x<")
            .replacingOccurrences(of: "idrefs=\"z3 z2\"", with: "idrefs=\"z3 z9\"")
            .replacingOccurrences(of: "type=\"int16\">7<", with: "type=\"int99\">7<")
        let document = try document(damaged)
        let (model, _) = XMLStoreDescribedModel.describe(document)
        let schema = try XMLStoreSchema(model: model)
        let problems = schema.problems(in: document)
        XCTAssertEqual(problems.map(\.line), [11, 14, 19])
        XCTAssertTrue(problems[0].message.contains("refers to z9, which is no object in the file"), problems[0].message)
        XCTAssertTrue(problems[1].message.contains("'-3x' is not a valid int16"), problems[1].message)
        XCTAssertTrue(problems[2].message.contains("unknown type 'int99'"), problems[2].message)
        XCTAssertThrowsError(try schema.rows(from: document)) { error in
            XCTAssertEqual((error as? XMLStoreError)?.line, 11)
        }
    }
}
