import Foundation
import XCTest

@testable import CoreDataModel
import CoreDataPredicate

/// Loading derived and composite attributes from Xcode's XML, the model check of their
/// expressions and elements, and their version hashes.
final class DerivedCompositeModelTests: XCTestCase {
    private func load(_ body: String) throws -> NSManagedObjectModel {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            \(body)
            </model>
            """
        let folder = try Fixtures.writeModel(xml, name: "Derived")
        addTeardownBlock { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        return try NSManagedObjectModel(validatingContentsOf: folder)
    }

    private static let shop = """
        <entity name="Owner" representedClassName="Owner" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="searchName" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(name)"/>
            <attribute name="itemCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="items.@count" usesScalarValueType="YES"/>
            <attribute name="home" optional="YES" attributeType="Composite" composite="Address"/>
            <relationship name="items" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Item" inverseName="owner" inverseEntity="Item"/>
        </entity>
        <entity name="Item" representedClassName="Item" syncable="YES">
            <attribute name="ownerName" optional="YES" attributeType="String" derived="YES" derivationExpression="owner.name"/>
            <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Owner" inverseName="items" inverseEntity="Owner"/>
        </entity>
        <composite name="Address">
            <attribute name="city" optional="YES" attributeType="String"/>
            <attribute name="zip" attributeType="String" defaultValueString="00000"/>
        </composite>
        """

    func testDerivedAttributesLoadFromXcodeXML() throws {
        let model = try load(Self.shop)
        let owner = try XCTUnwrap(model.entitiesByName["Owner"])
        let search = try XCTUnwrap(owner.attributesByName["searchName"] as? NSDerivedAttributeDescription)
        XCTAssertEqual(search.attributeType, .stringAttributeType)
        XCTAssertEqual(search.derivationExpression?.expressionType, .function)
        XCTAssertEqual(search.derivationExpression?.function, "canonical:")
        let count = try XCTUnwrap(owner.attributesByName["itemCount"] as? NSDerivedAttributeDescription)
        XCTAssertEqual(count.derivationExpression?.keyPath, "items.@count")
        let ownerName = try XCTUnwrap(model.entitiesByName["Item"]?.attributesByName["ownerName"] as? NSDerivedAttributeDescription)
        XCTAssertEqual(ownerName.derivationExpression?.keyPath, "owner.name")
        XCTAssertFalse(owner.attributesByName["name"] is NSDerivedAttributeDescription)
        XCTAssertNoThrow(try model.freeze())
        XCTAssertEqual(model.derivationIndex?.dependencies.count, 2)
    }

    func testCompositeAttributesLoadFromXcodeXMLAndTakeOneSlotPerElement() throws {
        let model = try load(Self.shop)
        let owner = try XCTUnwrap(model.entitiesByName["Owner"])
        let home = try XCTUnwrap(owner.attributesByName["home"] as? NSCompositeAttributeDescription)
        XCTAssertEqual(home.attributeType, .compositeAttributeType)
        XCTAssertEqual(home.elements.map(\.name), ["city", "zip"])
        XCTAssertEqual(home.elements[1].defaultValue as? String, "00000")
        XCTAssertFalse(home.elements[1].isOptional)
        try model.freeze()
        XCTAssertEqual(owner.propertyLayout.names, ["name", "searchName", "itemCount", "home.city", "home.zip", "items"])
        XCTAssertEqual(owner.slotAttributesByName["home.zip"]?.defaultValue as? String, "00000")
        XCTAssertNil(owner.slotAttributesByName["home"])
        XCTAssertNotNil(owner.propertiesByName["home"])
        XCTAssertEqual(owner.validatedProperties.map(\.name), ["home.city", "home.zip", "itemCount", "items", "name", "searchName"])
    }

    func testInlineAndNestedCompositeElementsLoad() throws {
        let model = try load("""
            <entity name="Place">
                <attribute name="spot" optional="YES" attributeType="Composite">
                    <attribute name="label" optional="YES" attributeType="String"/>
                    <attribute name="geo" optional="YES" attributeType="Composite" composite="Geo"/>
                </attribute>
            </entity>
            <compositeAttribute name="Geo">
                <attribute name="lat" optional="YES" attributeType="Double"/>
                <attribute name="lon" optional="YES" attributeType="Double"/>
            </compositeAttribute>
            """)
        try model.freeze()
        XCTAssertEqual(model.entitiesByName["Place"]?.propertyLayout.names, ["spot.label", "spot.geo.lat", "spot.geo.lon"])
    }

    func testUnknownCompositeDefinitionIsAnError() {
        XCTAssertThrowsError(try load("""
            <entity name="Place">
                <attribute name="spot" optional="YES" attributeType="Composite" composite="Nowhere"/>
            </entity>
            """)) { error in
            XCTAssertTrue("\(error)".contains("Nowhere"), "\(error)")
        }
    }

    func testUnparsableDerivationIsAnErrorWithItsLine() {
        XCTAssertThrowsError(try load("""
            <entity name="Owner">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="bad" optional="YES" attributeType="String" derived="YES" derivationExpression="name =="/>
            </entity>
            """)) { error in
            guard let error = error as? ModelError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .invalidValue)
            XCTAssertEqual(error.line, 5)
            XCTAssertTrue(error.message.contains("derivationExpression 'name =='"), error.message)
        }
    }

    func testDerivationNamingAnUnknownKeyPathFailsNamingEntityAndAttribute() {
        XCTAssertThrowsError(try load("""
            <entity name="Owner">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="bad" optional="YES" attributeType="String" derived="YES" derivationExpression="lowercase:(nickname)"/>
            </entity>
            """)) { error in
            guard let error = error as? ModelError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .invalidValue)
            XCTAssertEqual(error.entityName, "Owner")
            XCTAssertEqual(error.propertyName, "bad")
            XCTAssertTrue(error.message.contains("'nickname'"), error.message)
        }
    }

    func testBuiltInCodeDerivationCheckedAtFreeze() {
        let entity = NSEntityDescription()
        entity.name = "Owner"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let derived = NSDerivedAttributeDescription()
        derived.name = "ownerName"
        derived.attributeType = .stringAttributeType
        derived.derivationExpression = NSExpression(format: "owner.name")
        entity.properties = [name, derived]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        XCTAssertThrowsError(try model.freeze()) { error in
            XCTAssertTrue("\(error)".contains("derived attribute 'ownerName' of entity 'Owner'"), "\(error)")
            XCTAssertTrue("\(error)".contains("'owner'"), "\(error)")
        }
        XCTAssertFalse(model.isFrozen)
    }

    func testCompositeElementOfUnsupportedTypeIsRejected() {
        let entity = NSEntityDescription()
        entity.name = "Place"
        let bad = NSAttributeDescription()
        bad.name = "id"
        bad.attributeType = .objectIDAttributeType
        let composite = NSCompositeAttributeDescription()
        composite.name = "spot"
        composite.elements = [bad]
        entity.properties = [composite]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        XCTAssertThrowsError(try model.freeze()) { error in
            XCTAssertTrue("\(error)".contains("'id' of composite attribute 'spot'"), "\(error)")
        }
    }

    func testVersionHashesChangeWithDerivationAndElements() {
        func derived(_ format: String) -> Data {
            let attribute = NSDerivedAttributeDescription()
            attribute.name = "d"
            attribute.attributeType = .stringAttributeType
            attribute.derivationExpression = NSExpression(format: format)
            return attribute.versionHash
        }
        let plain = NSAttributeDescription()
        plain.name = "d"
        plain.attributeType = .stringAttributeType
        XCTAssertNotEqual(derived("lowercase:(name)"), derived("uppercase:(name)"))
        XCTAssertEqual(derived("lowercase:(name)"), derived("lowercase:(name)"))
        XCTAssertNotEqual(derived("name"), plain.versionHash)

        func composite(_ names: [String], type: NSAttributeType = .stringAttributeType) -> Data {
            let attribute = NSCompositeAttributeDescription()
            attribute.name = "c"
            attribute.elements = names.map { name in
                let element = NSAttributeDescription()
                element.name = name
                element.attributeType = type
                return element
            }
            return attribute.versionHash
        }
        XCTAssertEqual(composite(["a", "b"]), composite(["a", "b"]))
        XCTAssertNotEqual(composite(["a", "b"]), composite(["a"]))
        XCTAssertNotEqual(composite(["a"]), composite(["a"], type: .doubleAttributeType))
    }
}
