import CoreDataArchive
import CoreDataPredicate
import Foundation
import XCTest

private typealias NSExpression = CoreDataPredicate.NSExpression

/// Archives Apple's tools wrote (the conformance files copied into `Tests/CoreDataModelTests/Fixtures`): the compiled mapping model, the value
/// expressions Xcode keeps in `xcmapping.xml`, and the compiled models of the SampleModel package.
final class AppleArchiveTests: XCTestCase {
    static let entityMappingNames = ["CarToCar", "LuxuryCarToLuxuryCar", "PersonToPerson", "SportCarToSportCar", "Maker"]
    static let personToPerson = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PersonToPerson\", $source.owner)"

    /// Core Data's fetch request expression, decoded as the function that makes its request.
    fileprivate static func fetchRequestHook(_ object: ArchivedObject, _ decoder: ArchivedExpressionDecoder) throws -> NSExpression? {
        guard object.className == "NSFetchRequestExpression" else { return nil }
        return try decoder.expression(forKey: "NSFRExpression", in: object)
    }

    // MARK: - V2toV3.cdm

    func testMappingModelEntityMappings() throws {
        let archive = try KeyedArchive(data: Conformance.data(Conformance.mappingModel))
        XCTAssertEqual(archive.objectCount, 286)
        let model = try archive.object(at: archive.rootReference())
        XCTAssertEqual(model.className, "NSMappingModel")
        XCTAssertEqual(model.keys, ["NSEntityMappings", "NSEntityMappingsByName"])
        let unarchiver = KeyedUnarchiver(archive: archive)
        let mappings = try unarchiver.withObject(XCTUnwrap(model.reference(forKey: "NSEntityMappings"))) { (list) throws(KeyedArchiveError) in
            try unarchiver.elements(of: list)
        }
        XCTAssertEqual(mappings.count, 5)
        var names: [String] = []
        var types: [Int] = []
        for reference in mappings {
            let mapping = try archive.object(at: reference)
            XCTAssertEqual(mapping.className, "NSEntityMapping")
            names.append(try XCTUnwrap(mapping.string(forKey: "NSMappingName")))
            types.append(try XCTUnwrap(mapping.integer(forKey: "NSMappingType")))
            XCTAssertEqual(try mapping.data(forKey: "NSDestinationEntityVersionHash")?.count, 32)
        }
        XCTAssertEqual(names, Self.entityMappingNames)
        XCTAssertEqual(types, [1, 1, 4, 1, 2])  // custom (a migration policy), custom, copy, custom, add (Maker is new in V3)

        // The by-name dictionary decodes generically; its values are the same mapping objects.
        guard case .dictionary(let keys, let values)? = try unarchiver.decode(forKey: "NSEntityMappingsByName", in: model) else {
            return XCTFail("NSEntityMappingsByName is not a dictionary")
        }
        let keyNames = keys.compactMap { key -> String? in
            if case .string(let name) = key { return name }
            return nil
        }
        XCTAssertEqual(keyNames.sorted(), Self.entityMappingNames.sorted())
        for value in values {
            guard case .object(let mapping) = value else { return XCTFail("\(value)") }
            XCTAssertTrue(mappings.contains(mapping.reference))
        }
    }

    func testMappingModelValueExpressions() throws {
        let archive = try KeyedArchive(data: Conformance.data(Conformance.mappingModel))
        let decoder = ArchivedExpressionDecoder(archive: archive, hook: Self.fetchRequestHook)
        let model = try archive.object(at: archive.rootReference())
        var printed: [String: [String: String]] = [:]
        var sources: [String: String] = [:]
        for reference in try archive.object(at: XCTUnwrap(model.reference(forKey: "NSEntityMappings"))).references(forKey: "NS.objects") {
            let mapping = try archive.object(at: reference)
            let name = try XCTUnwrap(mapping.string(forKey: "NSMappingName"))
            sources[name] = try decoder.expression(forKey: "NSSourceExpression", in: mapping)?.description ?? "nil"
            for key in ["NSAttributeMappings", "NSRelationshipMappings"] {
                for propertyReference in try archive.object(at: XCTUnwrap(mapping.reference(forKey: key))).references(forKey: "NS.objects") {
                    let property = try archive.object(at: propertyReference)
                    XCTAssertEqual(property.className, "NSPropertyMapping")
                    let destination = try XCTUnwrap(property.string(forKey: "NSDestinationPropertyName"))
                    printed[name, default: [:]][destination] = try decoder.expression(forKey: "NSValueExpression", in: property)?.description ?? "nil"
                }
            }
        }
        XCTAssertEqual(printed["CarToCar"], [
            "markedForDeletionAsOf": "$source.markedForDeletionAsOf",
            "model": "$source.model",
            "numberPlate": "$source.numberPlate",
            "createdBy": "nil",
            "owner": Self.personToPerson,
            "previousOwners": Self.personToPerson,
        ])
        XCTAssertEqual(printed["PersonToPerson"]?["cars"],
                       "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"cars\", $source.cars)")
        XCTAssertEqual(printed["PersonToPerson"]?["firstName"], "$source.firstName")
        XCTAssertEqual(printed["Maker"], ["name": "nil", "cars": "nil"])
        XCTAssertEqual(sources["CarToCar"], "FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Car\", \"TRUEPREDICATE\")")
        XCTAssertEqual(sources["Maker"], "nil")
        XCTAssertEqual(printed.values.reduce(0) { $0 + $1.count }, 26)
    }

    func testFetchRequestExpressionNeedsAHook() throws {
        let archive = try KeyedArchive(data: Conformance.data(Conformance.mappingModel))
        let carToCar = try archive.object(at: ArchiveReference(3))
        XCTAssertEqual(try carToCar.string(forKey: "NSMappingName"), "CarToCar")
        XCTAssertThrowsError(try ArchivedExpressionDecoder(archive: archive).expression(forKey: "NSSourceExpression", in: carToCar)) { error in
            XCTAssertEqual("\(error)", "unknown expression class NSFetchRequestExpression at object 8 (no hook decoded it)")
        }
    }

    // MARK: - xcmapping.xml

    func testXcodeValueExpressionData() throws {
        let blobs = try Conformance.valueExpressionBlobs()
        XCTAssertEqual(blobs.count, 4)
        let expected = [
            Self.personToPerson,
            Self.personToPerson,
            "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"cars\", $source.cars)",
            Self.personToPerson,
        ]
        for (blob, text) in zip(blobs, expected) {
            let expression = try ArchivedExpressionDecoder.expression(fromArchive: blob)
            XCTAssertEqual(expression.description, text)
            XCTAssertEqual(expression, NSExpression(format: text))
            XCTAssertEqual(expression.operand.variable, "manager")
            let source = try XCTUnwrap(expression.arguments?.last)
            XCTAssertEqual(source.expressionType, .keyPath)
            XCTAssertEqual(source.operand.variable, "source")
        }
    }

    // MARK: - Compiled models

    func testCompiledModels() throws {
        let expectations: [(String, Set<String>, String)] = [
            ("SampleModel.mom", ["Car", "Person", "ExpensiveSportCar", "SportCar"], "1"),
            ("SampleModel2.mom", ["Car", "Person", "LuxuryCar", "SportCar"], "2"),
            ("SampleModel3.mom", ["Car", "Person", "LuxuryCar", "SportCar", "Maker"], "3"),
        ]
        for (file, entityNames, version) in expectations {
            let archive = try KeyedArchive(data: Conformance.data(Conformance.momd.appendingPathComponent(file)))
            let unarchiver = KeyedUnarchiver(archive: archive)
            let model = try archive.object(at: archive.rootReference())
            XCTAssertEqual(model.className, "NSManagedObjectModel", file)
            XCTAssertEqual(try unarchiver.decode(forKey: "NSVersionIdentifiers", in: model), .set([.string(version)]), file)
            XCTAssertNil(try model.reference(forKey: "NSFetchRequestTemplates"), file)

            let entities = try archive.object(at: XCTUnwrap(model.reference(forKey: "NSEntities")))
            var names: Set<String> = []
            for reference in try entities.references(forKey: "NS.objects") {
                let entity = try archive.object(at: reference)
                XCTAssertEqual(entity.className, "NSEntityDescription", file)
                names.insert(try XCTUnwrap(entity.string(forKey: "NSEntityName")))
                // The back-reference to the model is a reference, not something to decode.
                XCTAssertEqual(try entity.reference(forKey: "NSManagedObjectModel"), model.reference, file)
            }
            XCTAssertEqual(names, entityNames, file)

            // Every entry reads: values, objects, or (for class entries) a clear error.
            var objects = 0
            for index in 0..<archive.objectCount {
                switch try? archive.entry(at: ArchiveReference(index)) {
                case .object(let object)?:
                    objects += 1
                    for key in object.keys { _ = object.value(forKey: key) }
                case .some: break
                case nil: XCTAssertTrue(try Self.isClassEntry(archive, index), "\(file): entry \(index)")
                }
            }
            XCTAssertGreaterThan(objects, 20, file)
        }
    }

    /// Fetch indexes carry an optional partial-index predicate; this model has none.
    func testFetchIndexWithoutPredicate() throws {
        let archive = try KeyedArchive(data: Conformance.data(Conformance.momd.appendingPathComponent("SampleModel2.mom")))
        let index = try archive.object(at: ArchiveReference(46))
        XCTAssertEqual(index.className, "NSFetchIndexDescription")
        XCTAssertEqual(try index.string(forKey: "NSIndexName"), "byMakerAndNumberPlate")
        XCTAssertNil(try ArchivedExpressionDecoder(archive: archive).predicate(forKey: "NSPartialIndexPredicate", in: index))
        let elements = try archive.object(at: XCTUnwrap(index.reference(forKey: "NSIndexElements"))).references(forKey: "NS.objects")
        let properties = try elements.map { try archive.object(at: $0).string(forKey: "NSPropertyName") }
        XCTAssertEqual(properties, ["maker", "numberPlate"])
    }

    /// Whether `$objects[index]` is a class dictionary (`$classname`, `$classes`), which is not an
    /// archived object itself.
    static func isClassEntry(_ archive: KeyedArchive, _ index: Int) throws -> Bool {
        guard case .dictionary(let keys, _) = archive.propertyList.objects[try archiveEntryNumber(archive, index)] else { return false }
        return keys.contains { archive.propertyList.objects[$0] == .string("$classname") }
    }

    static func archiveEntryNumber(_ archive: KeyedArchive, _ index: Int) throws -> Int {
        guard case .dictionary(let keys, let values) = archive.propertyList.objects[archive.propertyList.top] else { throw ArchiveLayoutError(message: "the archive has no root dictionary") }
        for (key, value) in zip(keys, values) where archive.propertyList.objects[key] == .string("$objects") {
            if case .array(let entries) = archive.propertyList.objects[value] { return entries[index] }
        }
        throw ArchiveLayoutError(message: "the archive has no $objects array")
    }
}

/// An archive that is not laid out as the test expects.
struct ArchiveLayoutError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
