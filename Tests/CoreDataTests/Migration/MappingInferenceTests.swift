import CoreData
import Foundation
import XCTest

/// One model pair per lightweight-migration rule, and one per change inference refuses, with
/// the exact message.
final class MappingInferenceTests: XCTestCase {
    private func infer(_ source: String, _ destination: String, file: StaticString = #filePath, line: UInt = #line) throws -> NSMappingModel {
        try NSMappingModel.inferredMappingModel(
            forSourceModel: try MigrationFixtures.model(source), destinationModel: try MigrationFixtures.model(destination))
    }

    /// The changes an inference refused, from its 134190 error.
    private func refusals(_ source: String, _ destination: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        do {
            _ = try infer(source, destination)
            XCTFail("the mapping was inferred", file: file, line: line)
            return []
        } catch let error as NSError {
            XCTAssertEqual(error.domain, NSCocoaErrorDomain, file: file, line: line)
            XCTAssertEqual(error.code, NSInferredMappingModelError, file: file, line: line)
            let changes = error.userInfo["changes"] as? [String] ?? []
            for change in changes { XCTAssertTrue(error.localizedDescription.contains(change), "\(change) not in the message", file: file, line: line) }
            return changes
        }
    }

    private func attributeSource(_ mapping: NSMappingModel, _ entityMapping: String, _ property: String) -> String? {
        let mapped = mapping.entityMappingsByName[entityMapping]?.attributeMappings?.first { $0.name == property }
        return mapped?.valueExpression.map { "\($0)" }
    }

    // MARK: Inferred

    func testUnchangedEntityIsCopied() throws {
        let entity = #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/></entity>"#
        let mapping = try infer(entity, entity)
        XCTAssertEqual(mapping.entityMappings.map(\.name), ["ItemToItem"])
        XCTAssertEqual(mapping.entityMappings.first?.mappingType, .copyEntityMappingType)
        XCTAssertEqual(attributeSource(mapping, "ItemToItem", "title"), "$source.title")
    }

    func testAddedAndRemovedAttributes() throws {
        let mapping = try infer(
            #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/><attribute name="old" optional="YES" attributeType="Date"/></entity>"#,
            #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/><attribute name="count" attributeType="Integer 32" defaultValueString="7"/></entity>"#)
        let item = try XCTUnwrap(mapping.entityMappingsByName["ItemToItem"])
        XCTAssertEqual(item.mappingType, .transformEntityMappingType)
        XCTAssertEqual(item.attributeMappings?.map { $0.name ?? "" }.sorted(), ["count", "title"])
        XCTAssertNil(item.attributeMappings?.first { $0.name == "count" }?.valueExpression, "a new attribute takes its default")
    }

    func testRenamedAttributeAndChainedRename() throws {
        let direct = try infer(
            #"<entity name="Item"><attribute name="title" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="Item"><attribute name="heading" optional="YES" attributeType="String" elementID="title"/></entity>"#)
        XCTAssertEqual(attributeSource(direct, "ItemToItem", "heading"), "$source.title")
        // v2 renamed title → heading (elementID title); v3 renames again, keeping the original identifier.
        let chained = try infer(
            #"<entity name="Item"><attribute name="heading" optional="YES" attributeType="String" elementID="title"/></entity>"#,
            #"<entity name="Item"><attribute name="caption" optional="YES" attributeType="String" elementID="title"/></entity>"#)
        XCTAssertEqual(attributeSource(chained, "ItemToItem", "caption"), "$source.heading")
    }

    func testAddedRemovedAndRenamedEntities() throws {
        let mapping = try infer(
            #"<entity name="Old" ><attribute name="a" optional="YES" attributeType="String"/></entity><entity name="Gone"><attribute name="b" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="New" elementID="Old"><attribute name="a" optional="YES" attributeType="String"/></entity><entity name="Fresh"><attribute name="c" optional="YES" attributeType="String"/></entity>"#)
        XCTAssertEqual(mapping.entityMappings.map(\.name), ["AddFresh", "OldToNew", "RemoveGone"])
        XCTAssertEqual(mapping.entityMappings.map(\.mappingType), [.addEntityMappingType, .transformEntityMappingType, .removeEntityMappingType])
        XCTAssertEqual(mapping.entityMappingsByName["OldToNew"]?.sourceEntityName, "Old")
        XCTAssertEqual(mapping.entityMappingsByName["OldToNew"]?.destinationEntityName, "New")
    }

    func testOptionalityChanges() throws {
        XCTAssertNoThrow(try infer(
            #"<entity name="Item"><attribute name="n" optional="YES" attributeType="Integer 64"/></entity>"#,
            #"<entity name="Item"><attribute name="n" attributeType="Integer 64" defaultValueString="0"/></entity>"#), "optional → mandatory with a default")
        XCTAssertNoThrow(try infer(
            #"<entity name="Item"><attribute name="n" attributeType="Integer 64"/></entity>"#,
            #"<entity name="Item"><attribute name="n" optional="YES" attributeType="Integer 64"/></entity>"#), "mandatory → optional")
    }

    func testNumericWidening() throws {
        XCTAssertNoThrow(try infer(
            #"<entity name="Item"><attribute name="a" optional="YES" attributeType="Integer 16"/><attribute name="b" optional="YES" attributeType="Integer 32"/><attribute name="c" optional="YES" attributeType="Float"/></entity>"#,
            #"<entity name="Item"><attribute name="a" optional="YES" attributeType="Integer 32"/><attribute name="b" optional="YES" attributeType="Integer 64"/><attribute name="c" optional="YES" attributeType="Double"/></entity>"#))
    }

    func testRelationshipCardinalityAndOrder() throws {
        let source = """
            <entity name="A"><relationship name="b" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="B" inverseName="a" inverseEntity="B"/></entity>
            <entity name="B"><relationship name="a" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="A" inverseName="b" inverseEntity="A"/></entity>
            """
        let destination = """
            <entity name="A"><relationship name="b" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="B" inverseName="a" inverseEntity="B"/></entity>
            <entity name="B"><relationship name="a" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="A" inverseName="b" inverseEntity="A"/></entity>
            """
        let mapping = try infer(source, destination)
        let relationship = mapping.entityMappingsByName["AToA"]?.relationshipMappings?.first
        XCTAssertEqual(relationship?.name, "b")
        XCTAssertEqual(relationship?.valueExpression?.function, "destinationInstancesForSourceRelationshipNamed:sourceInstances:")
        XCTAssertNoThrow(try infer(destination, source), "to-many → to-one and ordered → unordered infer too")
    }

    func testPropertyMovedUpToANewParent() throws {
        XCTAssertNoThrow(try infer(
            #"<entity name="Car"><attribute name="plate" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="Vehicle" isAbstract="YES"><attribute name="plate" optional="YES" attributeType="String"/></entity><entity name="Car" parentEntity="Vehicle"/>"#))
    }

    // MARK: Refused, each with its message

    func testTypeChangeIsRefused() throws {
        XCTAssertEqual(try refusals(
            #"<entity name="Item"><attribute name="added" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="Item"><attribute name="added" optional="YES" attributeType="Date"/></entity>"#),
            ["Item.added: String → Date"])
        XCTAssertEqual(try refusals(
            #"<entity name="Item"><attribute name="n" optional="YES" attributeType="Integer 64"/></entity>"#,
            #"<entity name="Item"><attribute name="n" optional="YES" attributeType="Integer 16"/></entity>"#),
            ["Item.n: Integer 64 → Integer 16"], "narrowing")
    }

    func testNewMandatoryAttributeWithoutDefaultIsRefused() throws {
        XCTAssertEqual(try refusals(
            #"<entity name="Item"><attribute name="a" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="Item"><attribute name="a" optional="YES" attributeType="String"/><attribute name="b" attributeType="String"/></entity>"#),
            ["Item.b: a new mandatory attribute without a default value"])
    }

    func testOptionalToMandatoryWithoutDefaultIsRefused() throws {
        XCTAssertEqual(try refusals(
            #"<entity name="Item"><attribute name="a" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="Item"><attribute name="a" attributeType="String"/></entity>"#),
            ["Item.a: optional → mandatory without a default value"])
    }

    func testAttributeBecomingRelationshipIsRefused() throws {
        XCTAssertEqual(try refusals(
            #"<entity name="A"><attribute name="b" optional="YES" attributeType="String"/></entity><entity name="B"><attribute name="x" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="A"><relationship name="b" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="B"/></entity><entity name="B"><attribute name="x" optional="YES" attributeType="String"/></entity>"#),
            ["A.b: attribute → relationship"])
    }

    func testRelationshipToAnotherEntityIsRefused() throws {
        let entities = #"<entity name="B"><attribute name="x" optional="YES" attributeType="String"/></entity><entity name="C"><attribute name="y" optional="YES" attributeType="String"/></entity>"#
        XCTAssertEqual(try refusals(
            #"<entity name="A"><relationship name="r" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="B"/></entity>"# + entities,
            #"<entity name="A"><relationship name="r" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="C"/></entity>"# + entities),
            ["A.r: destination B → C"])
    }

    func testMergingHierarchiesIsRefused() throws {
        let changes = try refusals(
            #"<entity name="Car"><attribute name="a" optional="YES" attributeType="String"/></entity><entity name="Boat"><attribute name="b" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="Car"><attribute name="a" optional="YES" attributeType="String"/></entity><entity name="Boat" parentEntity="Car"><attribute name="b" optional="YES" attributeType="String"/></entity>"#)
        XCTAssertEqual(changes, ["Car: entities of separate source hierarchies now share this parent: Boat (from the hierarchy of Boat), Car (from the hierarchy of Car)"])
    }

    func testEveryRefusalIsListed() throws {
        let changes = try refusals(
            #"<entity name="Item"><attribute name="a" optional="YES" attributeType="String"/><attribute name="b" optional="YES" attributeType="Integer 32"/></entity>"#,
            #"<entity name="Item"><attribute name="a" optional="YES" attributeType="Binary"/><attribute name="b" optional="YES" attributeType="String"/></entity>"#)
        XCTAssertEqual(changes, ["Item.a: String → Binary", "Item.b: Integer 32 → String"])
    }

    // MARK: The sample package

    func testSampleModelVersionsInfer() throws {
        let package = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage)
        let v1 = try package.loadModel(version: "SampleModel")
        let v2 = try package.loadModel(version: "SampleModel2")
        let v3 = try package.loadModel(version: "SampleModel3")
        let oneToTwo = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
        XCTAssertEqual(oneToTwo.entityMappingsByName["ExpensiveSportCarToLuxuryCar"]?.mappingType, .transformEntityMappingType)
        XCTAssertEqual(oneToTwo.entityMappingsByName["SportCarToSportCar"]?.mappingType, .transformEntityMappingType, "Car lost attributes")
        XCTAssertNil(oneToTwo.entityMappingsByName["CarToCar"]?.attributeMappings?.first { $0.name == "color" })
        let twoToThree = try NSMappingModel.inferredMappingModel(forSourceModel: v2, destinationModel: v3)
        XCTAssertEqual(twoToThree.entityMappingsByName["AddMaker"]?.mappingType, .addEntityMappingType)
        XCTAssertNoThrow(try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v3))
    }
}
