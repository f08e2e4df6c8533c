import CoreDataModel
import CoreDataStorage
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation
import XCTest

/// An XML store Apple wrote (Xcode's `xcmapping.xml` of the CoreDataPlus conformance models,
/// Formats/xml-store.md): it opens with a model built from the file's own types, every object,
/// attribute and relationship is read, and what we write back matches it element by element.
final class AppleXMLStoreInteropTests: XCTestCase {
    /// The fixture; opened read-only or copied, never modified.
    static let fixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CoreDataModelTests/Fixtures/models/CoreDataPlus/V2toV3.xcmappingmodel/xcmapping.xml")

    /// Xcode's mapping-model entities as the file shows them: names from the metadata's version
    /// hashes, properties from the `<attribute>`/`<relationship>` elements (Apple writes them
    /// lower-cased, so the camel case here is a guess that the reader must match regardless).
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            return attribute
        }
        func relationship(_ name: String, toMany: Bool, ordered: Bool = false) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.maxCount = toMany ? 0 : 1
            relationship.isOrdered = ordered
            return relationship
        }
        func entity(_ name: String, _ properties: [NSPropertyDescription], abstract: Bool = false) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.isAbstract = abstract
            entity.properties = properties
            return entity
        }
        let attributeOwner = relationship("entityMapping", toMany: false)
        let relationshipOwner = relationship("entityMapping", toMany: false)
        let attributeMappings = relationship("attributeMappings", toMany: true)
        let relationshipMappings = relationship("relationshipMappings", toMany: true)
        let entityModel = relationship("mappingModel", toMany: false)
        let entityMappings = relationship("entityMappings", toMany: true, ordered: true)
        let property = entity("XDDevPropertyMapping", [
            attribute("name", .stringAttributeType), attribute("valueExpressionData", .binaryDataAttributeType),
            attribute("autoGenerateExpression", .booleanAttributeType),
        ], abstract: true)
        let attributeMapping = entity("XDDevAttributeMapping", [attributeOwner])
        let relationshipMapping = entity("XDDevRelationshipMapping", [relationshipOwner])
        property.subentities = [attributeMapping, relationshipMapping]
        let entityMapping = entity("XDDevEntityMapping", [
            attribute("migrationPolicyClassName", .stringAttributeType), attribute("sourceName", .stringAttributeType),
            attribute("mappingTypeName", .stringAttributeType), attribute("mappingNumber", .integer16AttributeType),
            attribute("destinationName", .stringAttributeType), attribute("autoGenerateExpression", .booleanAttributeType),
            entityModel, attributeMappings, relationshipMappings,
        ])
        let mappingModel = entity("XDDevMappingModel", [
            attribute("sourceModelPath", .stringAttributeType), attribute("sourceModelData", .binaryDataAttributeType),
            attribute("destinationModelPath", .stringAttributeType), attribute("destinationModelData", .binaryDataAttributeType),
            entityMappings,
        ])
        for (a, aEntity, b, bEntity) in [
            (attributeOwner, attributeMapping, attributeMappings, entityMapping),
            (relationshipOwner, relationshipMapping, relationshipMappings, entityMapping),
            (entityModel, entityMapping, entityMappings, mappingModel),
        ] {
            a.destinationEntity = bEntity
            b.destinationEntity = aEntity
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        let model = NSManagedObjectModel()
        model.entities = [property, attributeMapping, relationshipMapping, entityMapping, mappingModel]
        try? model.freeze()
        return model
    }()

    private func openFixture() throws -> XMLStore {
        var options = XMLStoreOptions()
        options.readOnly = true
        return try XMLStore(path: Self.fixture.path, model: Self.model, metadata: StoreMetadata(), options: options)
    }

    private func rows(_ store: XMLStore) throws -> [StoreObjectID: StoreRow] {
        var found: [StoreObjectID: StoreRow] = [:]
        for entity in Self.model.entities where !entity.isAbstract {
            guard case .rows(let rows) = try store.execute(StoreFetchRequest(entity: entity, includesSubentities: false)) else { continue }
            for row in rows { found[row.objectID] = row }
        }
        return found
    }

    private func id(_ entity: String, _ key: Int64) -> StoreObjectID { StoreObjectID(entityName: entity, primaryKey: key) }

    func testEveryObjectAttributeAndRelationshipIsRead() throws {
        let before = try Data(contentsOf: Self.fixture)
        let store = try openFixture()
        let rows = try rows(store)
        let counts = Dictionary(grouping: rows.keys, by: \.entityName).mapValues(\.count)
        XCTAssertEqual(counts, ["XDDevAttributeMapping": 14, "XDDevEntityMapping": 5, "XDDevMappingModel": 1, "XDDevRelationshipMapping": 12])
        XCTAssertEqual(Set(rows.keys.map(\.primaryKey)), Set(102...133))
        // Every <attribute> (73) and <relationship> (42) element of the file became a value.
        let values = rows.values.flatMap(\.values.values)
        let relationshipValues = values.filter { if case .reference = $0 { return true }; if case .references = $0 { return true }; return false }
        XCTAssertEqual(values.count - relationshipValues.count, 73)
        XCTAssertEqual(relationshipValues.count, 42)

        let sport = try XCTUnwrap(rows[id("XDDevEntityMapping", 103)])
        XCTAssertEqual(sport["migrationPolicyClassName"], .string("REPLACE_AT_RUNTIME.V2to3MakerPolicy"))
        XCTAssertEqual(sport["sourceName"], .string("SportCar"))
        XCTAssertEqual(sport["mappingTypeName"], .string("Undefined"))
        XCTAssertEqual(sport["mappingNumber"], .integer(4))
        XCTAssertEqual(sport["autoGenerateExpression"], .bool(true))
        XCTAssertEqual(sport["mappingModel"], .reference(id("XDDevMappingModel", 129)))
        XCTAssertEqual(sport["attributeMappings"], .references([114, 113, 133].map { id("XDDevAttributeMapping", $0) }))
        XCTAssertEqual(sport["relationshipMappings"], .references([105, 126, 108].map { id("XDDevRelationshipMapping", $0) }))
        let model = try XCTUnwrap(rows[id("XDDevMappingModel", 129)])
        XCTAssertEqual(model["sourceModelPath"], .string("Tests/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"))
        XCTAssertEqual(model["entityMappings"], .references([
            id("XDDevEntityMapping", 115), id("XDDevEntityMapping", 119), id("XDDevEntityMapping", 111),
            id("XDDevEntityMapping", 103), id("XDDevEntityMapping", 104),
        ]))
        for key in ["sourceModelData", "destinationModelData"] {
            guard case .data(let data) = model[key] else { return XCTFail("\(key) is \(model[key])") }
            XCTAssertEqual(Array(data.prefix(8)), Array("bplist00".utf8), key)
            XCTAssertGreaterThan(data.count, 1_000, key)
        }
        let expression = try XCTUnwrap(rows[id("XDDevRelationshipMapping", 116)])
        XCTAssertEqual(expression["name"], .string("previousOwners"))
        XCTAssertEqual(expression["entityMapping"], .reference(id("XDDevEntityMapping", 119)))
        guard case .data(let archived) = expression["valueExpressionData"] else { return XCTFail("no valueExpressionData") }
        XCTAssertEqual(Array(archived.prefix(8)), Array("bplist00".utf8))
        XCTAssertEqual(rows[id("XDDevAttributeMapping", 120)]?.values, [
            "name": .string("updatedAt"), "entityMapping": .reference(id("XDDevEntityMapping", 111)),
        ])

        let metadata = try store.metadata()
        XCTAssertEqual(metadata["NSStoreUUID"] as? String, "498313E6-D672-4887-A947-08765F4F1012")
        XCTAssertEqual(metadata["NSPersistenceFrameworkVersion"] as? Int, 1044)
        XCTAssertEqual(metadata["NSStoreModelVersionHashesVersion"] as? Int, 3)
        let hashes = try XCTUnwrap(metadata["NSStoreModelVersionHashes"] as? [String: Any])
        XCTAssertEqual(hashes.keys.sorted(), ["XDDevAttributeMapping", "XDDevEntityMapping", "XDDevMappingModel", "XDDevPropertyMapping", "XDDevRelationshipMapping"])
        XCTAssertEqual(Set(hashes.values.map { ($0 as? Data)?.count }), [32])
        XCTAssertEqual(metadata["NSStoreModelVersionIdentifiers"] as? [String], [""])
        // Keys continue after nextObjectID (133).
        XCTAssertEqual(try store.newPrimaryKeys(entityName: "XDDevMappingModel", count: 1), [134])
        XCTAssertEqual(try Data(contentsOf: Self.fixture), before, "the fixture must not change")
    }

    /// A copy rewritten by us reads back to the same rows and has the same elements as Apple's.
    func testWhatWeWriteMatchesApplesLayoutElementByElement() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("xml-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("xcmapping.xml")
        try FileManager.default.copyItem(at: Self.fixture, to: copy)
        let original = try rows(try openFixture())
        let store = try XMLStore(path: copy.path, model: Self.model, metadata: StoreMetadata())
        try store.setMetadata(try store.metadata())
        try store.close()
        let rewritten = try rows(try XMLStore(path: copy.path, model: Self.model, metadata: StoreMetadata()))
        // Unordered to-many relationships are written in id order (Apple's order is its own).
        func unordered(_ rows: [StoreObjectID: StoreRow]) -> [StoreObjectID: StoreRow] {
            rows.mapValues { row in
                var copy = row
                copy.values = row.values.mapValues { value in
                    if case .references(let ids) = value { return .references(ids.sorted()) }
                    return value
                }
                return copy
            }
        }
        XCTAssertEqual(unordered(rewritten), unordered(original))

        let apple = try XMLStoreReader.decode(Array(try Data(contentsOf: Self.fixture)))
        let ours = try XMLStoreReader.decode(Array(try Data(contentsOf: copy)))
        XCTAssertEqual(ours.info, apple.info)
        XCTAssertEqual(ours.objects.count, apple.objects.count)
        let appleByID = Dictionary(uniqueKeysWithValues: apple.objects.map { ($0.id, $0) })
        for object in ours.objects {
            guard let theirs = appleByID[object.id] else { XCTFail("z\(object.id) is not in Apple's file"); continue }
            XCTAssertEqual(object.type, theirs.type)
            XCTAssertEqual(object.version, theirs.version)
            XCTAssertEqual(Set(object.attributes.map { "\($0.name) \($0.type)" }), Set(theirs.attributes.map { "\($0.name) \($0.type)" }), "z\(object.id)")
            for attribute in object.attributes where attribute.type != "binary" {
                XCTAssertEqual(attribute.text, theirs.attributes.first { $0.name == attribute.name }?.text, "z\(object.id).\(attribute.name)")
            }
            XCTAssertEqual(
                Set(object.relationships.map { "\($0.name) \($0.minCount)/\($0.maxCount) \($0.destination) \($0.idrefs.sorted())" }),
                Set(theirs.relationships.map { "\($0.name) \($0.minCount)/\($0.maxCount) \($0.destination) \($0.idrefs.sorted())" }), "z\(object.id)")
        }
        let text = try String(contentsOf: copy, encoding: .utf8)
        let appleText = try String(contentsOf: Self.fixture, encoding: .utf8)
        for line in [#"<object type="XDDEVENTITYMAPPING" id="z103">"#, #"<attribute name="mappingnumber" type="int16">4</attribute>"#,
                     #"<attribute name="autogenerateexpression" type="bool">1</attribute>"#,
                     #"<relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z129"></relationship>"#,
                     #"<relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z115 z119 z111 z103 z104"></relationship>"#,
                     "<nextObjectID>133</nextObjectID>", "<version>134481920</version>"] {
            XCTAssertTrue(appleText.contains(line), "Apple's file lacks \(line)")
            XCTAssertTrue(text.contains(line), "our file lacks \(line)")
        }
        XCTAssertEqual(text.split(separator: "\n").prefix(2), appleText.split(separator: "\n").prefix(2))
    }
}
