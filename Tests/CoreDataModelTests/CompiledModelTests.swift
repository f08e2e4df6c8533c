import CoreDataModel
import Foundation
import XCTest

/// Xcode's compiled models (Formats/compiled-model.md): each `.mom` of
/// `apple-compiled/SampleModel.momd`, written by Xcode's model compiler, loads equal to the
/// `.xcdatamodel` version it was compiled from; the `.momd` loads its current version and lists
/// its versions; damaged archives fail with a `ModelError`, never a trap.
final class CompiledModelTests: XCTestCase {
    static let momd = Fixtures.root.appendingPathComponent("apple-compiled/SampleModel.momd")

    func testEachCompiledVersionEqualsItsSource() throws {
        let source = try XcodeModelPackage(contentsOf: Fixtures.sampleModel)
        for version in ["SampleModel", "SampleModel2", "SampleModel3"] {
            let compiled = try NSManagedObjectModel(validatingContentsOf: Self.momd.appendingPathComponent("\(version).mom"))
            let original = try source.loadModel(version: version)
            XCTAssertEqual(Self.describe(compiled), Self.describe(original), version)
            XCTAssertEqual(compiled.versionIdentifiers, original.versionIdentifiers, version)
            XCTAssertFalse(compiled.entities.isEmpty, version)
            // Our version hashes cover what both forms carry, so they agree too.
            XCTAssertEqual(compiled.entityVersionHashesByName, original.entityVersionHashesByName, version)
        }
    }

    func testTheCompiledPackageListsItsVersionsAndLoadsTheCurrentOne() throws {
        let package = try XcodeModelPackage(contentsOf: Self.momd)
        XCTAssertTrue(package.isCompiled)
        XCTAssertEqual(package.versionNames, ["SampleModel", "SampleModel2", "SampleModel3"])
        XCTAssertEqual(package.currentVersionName, "SampleModel")
        let current = try XCTUnwrap(NSManagedObjectModel(contentsOf: Self.momd))
        XCTAssertEqual(Set(current.entitiesByName.keys), ["Car", "ExpensiveSportCar", "Person", "SportCar"])
        let third = try package.loadModel(version: "SampleModel3")
        XCTAssertEqual(Set(third.entitiesByName.keys), ["Car", "LuxuryCar", "Maker", "Person", "SportCar"])
        XCTAssertEqual(third.entitiesByName["LuxuryCar"]?.renamingIdentifier, "ExpensiveSportCar")
        XCTAssertEqual(third.entitiesByName["LuxuryCar"]?.superentity?.name, "SportCar")
    }

    /// What a compiled model cannot carry: `momc` drops a transformable attribute's custom class.
    func testATransformablesCustomClassIsNotInTheCompiledModel() throws {
        let compiled = try NSManagedObjectModel(validatingContentsOf: Self.momd.appendingPathComponent("SampleModel.mom"))
        let color = try XCTUnwrap(compiled.entitiesByName["Car"]?.attributesByName["color"])
        XCTAssertEqual(color.attributeType, .transformableAttributeType)
        XCTAssertEqual(color.valueTransformerName, "ColorTransformer")
        let person = try XCTUnwrap(compiled.entitiesByName["Person"])
        XCTAssertEqual(person.attributesByName["id"]?.preservesValueInHistoryOnDeletion, true)
        XCTAssertEqual(person.attributesByName["isDriving"]?.isTransient, true)
        XCTAssertEqual(person.attributesByName["isDriving"]?.defaultValue as? Bool, false)
        XCTAssertEqual(person.uniquenessConstraints as? [[String]], [["firstName", "lastName"]])
    }

    /// Validation predicates, a fetched property, a derived and a composite attribute, fetch
    /// request templates and configurations (§2–2.3), archived with the keys Core Data's encoders write, in Xcode's compiled SampleModel3 (`Fixtures/derived`,
    /// made by `make-templates-mom.py`: no Xcode-written model with them is at hand).
    func testFetchedDerivedAndCompositePropertiesTemplatesAndConfigurationsAreRead() throws {
        let url = Fixtures.root.appendingPathComponent("derived/SampleModel3+Templates.mom")
        let model = try NSManagedObjectModel(validatingContentsOf: url)

        let person = try XCTUnwrap(model.entitiesByName["Person"])
        let fetched = try XCTUnwrap(person.propertiesByName["carsWithItsLastName"] as? NSFetchedPropertyDescription)
        XCTAssertTrue(fetched.isOptional)
        let fetchedRequest = try XCTUnwrap(fetched.fetchRequestDescription)
        XCTAssertEqual(fetchedRequest.entityName, "Car")
        XCTAssertEqual(fetchedRequest.predicateFormat, "owner.lastName == $FETCH_SOURCE.lastName")
        XCTAssertEqual(fetchedRequest.returnsObjectsAsFaults, true)
        XCTAssertEqual(fetchedRequest.returnsDistinctResults, false)
        let derived = try XCTUnwrap(person.attributesByName["carCount"] as? NSDerivedAttributeDescription)
        XCTAssertEqual(derived.attributeType, .integer64AttributeType)
        XCTAssertEqual(derived.derivationExpression.map { "\($0)" }, "cars.@count")
        XCTAssertEqual(Set(person.attributesByName.keys), ["firstName", "lastName", "updatedAt", "carCount"])
        let withComposite = try NSManagedObjectModel(validatingContentsOf: Fixtures.root.appendingPathComponent("derived/SampleModel3+Composite.mom"))
        let address = try XCTUnwrap(withComposite.entitiesByName["Person"]?.attributesByName["address"] as? NSCompositeAttributeDescription)
        XCTAssertEqual(address.attributeType, .compositeAttributeType)
        XCTAssertEqual(address.elements.map(\.name), ["city", "zip"])
        XCTAssertEqual(address.elements.map(\.attributeType), [.stringAttributeType, .stringAttributeType])

        let makerName = try XCTUnwrap(model.entitiesByName["Maker"]?.attributesByName["name"])
        XCTAssertEqual(makerName.validationPredicates.map(\.predicateFormat), ["length >= 2"])
        XCTAssertEqual(makerName.validationWarnings as? [Int], [1670])
        let firstName = try XCTUnwrap(person.attributesByName["firstName"])
        XCTAssertEqual(firstName.validationPredicates.map(\.predicateFormat), ["SELF MATCHES \"[A-Z].*\""])
        XCTAssertEqual(firstName.validationWarnings as? [String], ["A first name starts with a capital"])

        let index = try XCTUnwrap(model.entitiesByName["Car"]?.indexes.first)
        XCTAssertEqual(index.name, "byPlateWhenOwned")
        XCTAssertEqual(index.elements.map(\.propertyName), ["numberPlate"])
        XCTAssertEqual(index.partialIndexPredicate?.predicateFormat, "owner != nil")

        let plate = try XCTUnwrap(model.fetchRequestDescriptionsByName["carsWithPlate"])
        XCTAssertEqual(plate.entityName, "Car")
        XCTAssertEqual(plate.predicateFormat, "numberPlate == $PLATE AND model CONTAINS \"GT\"")
        XCTAssertEqual(plate.fetchLimit, 5)
        XCTAssertEqual(plate.fetchBatchSize, 20)
        XCTAssertEqual(plate.returnsDistinctResults, true)
        XCTAssertEqual(plate.includesSubentities, true)
        XCTAssertEqual(plate.returnsObjectsAsFaults, false)
        XCTAssertEqual(plate.includesPendingChanges, true)
        XCTAssertEqual(plate.relationshipKeyPathsForPrefetching, ["owner", "createdBy"])
        let faultsOnly = try XCTUnwrap(model.fetchRequestDescriptionsByName["carsAsFaultsOnly"])
        XCTAssertEqual(faultsOnly.includesSubentities, false)
        XCTAssertEqual(faultsOnly.includesPendingChanges, false)
        XCTAssertEqual(faultsOnly.returnsObjectsAsFaults, true)
        XCTAssertEqual(faultsOnly.returnsDistinctResults, false)
        // A request archived with its entity's name only and no flags keeps a new request's defaults.
        XCTAssertEqual(model.fetchRequestDescriptionsByName["everyone"], FetchRequestDescription(entityName: "Person"))

        XCTAssertEqual(Set(model.configurations), ["Vehicles", "People"])
        XCTAssertEqual(Set(model.entities(forConfigurationName: "Vehicles")?.compactMap(\.name) ?? []), ["Car", "SportCar", "LuxuryCar", "Maker"])
        XCTAssertEqual(model.entities(forConfigurationName: "People")?.compactMap(\.name), ["Person"])
    }

    /// The compiled derived fixture hashes as the same model written as Xcode's source does: the
    /// derivation expression decoded from the archive prints as the one parsed from text.
    func testTheDerivedFixtureHashesAsItsSourceWould() throws {
        let sourceURL = Fixtures.sampleModel.appendingPathComponent("SampleModel3.xcdatamodel/contents")
        var contents = try String(contentsOf: sourceURL, encoding: .utf8)
        let personEnd = try XCTUnwrap(contents.range(of: "<relationship name=\"cars\" optional=\"YES\" toMany=\"YES\" deletionRule=\"Nullify\" destinationEntity=\"Car\" inverseName=\"owner\""))
        contents.insert(contentsOf: """
            <attribute name="carCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="cars.@count" usesScalarValueType="YES"/>
                <fetchedProperty name="carsWithItsLastName" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Car" predicateString="owner.lastName == $FETCH_SOURCE.lastName"/>
                </fetchedProperty>

            """, at: personEnd.lowerBound)
        let source = try NSManagedObjectModel(xcodeModelContents: Data(contents.utf8))
        let compiled = try NSManagedObjectModel(validatingContentsOf: Fixtures.root.appendingPathComponent("derived/SampleModel3+Templates.mom"))
        XCTAssertNotNil(source.entitiesByName["Person"]?.attributesByName["carCount"] as? NSDerivedAttributeDescription)
        XCTAssertEqual(compiled.entityVersionHashesByName, source.entityVersionHashesByName)
    }

    /// SampleModel3 with one damage each (made by `make-templates-mom.py`): refused with an error
    /// naming what is wrong, not loaded, looped over or trapped on.
    func testHostileFeaturesAreRefused() throws {
        let cases: [(file: String, says: String)] = [
            ("hostile-shared-composites.mom", "more than 10000 elements"),
            ("hostile-composite-in-itself.mom", "nested deeper than 16"),
            ("hostile-template-without-entity.mom", "'nowhere' names no entity"),
            ("hostile-template-entity-is-an-attribute.mom", "NSEntity"),
            ("hostile-configuration-member.mom", "something other than an entity"),
            ("hostile-validation-warning.mom", "NSValidationWarnings"),
            ("hostile-fetched-property-without-request.mom", "neither NSFetchRequest nor _NSFetchRequestEntityName"),
        ]
        for (file, says) in cases {
            let url = Fixtures.root.appendingPathComponent("derived/\(file)")
            XCTAssertThrowsError(try NSManagedObjectModel(validatingContentsOf: url), file) { error in
                guard let error = error as? ModelError else { return XCTFail("\(file): \(error)") }
                XCTAssertTrue("\(error)".contains(says), "\(file): \(error)")
            }
        }
    }

    /// Apple's own compiled models have none of these: nothing is invented for them.
    func testXcodesCompiledModelsHaveNoTemplatesOrConfigurations() throws {
        for version in ["SampleModel", "SampleModel2", "SampleModel3"] {
            let model = try NSManagedObjectModel(validatingContentsOf: Self.momd.appendingPathComponent("\(version).mom"))
            XCTAssertTrue(model.fetchRequestDescriptionsByName.isEmpty, version)
            XCTAssertTrue(model.configurations.isEmpty, version)
        }
    }

    /// Every prefix and a sample of byte flips of a real `.mom` decode or throw a `ModelError`.
    func testDamagedCompiledModelsThrow() throws {
        let files = [
            Self.momd.appendingPathComponent("SampleModel2.mom"),
            Fixtures.root.appendingPathComponent("derived/SampleModel3+Templates.mom"),
            Fixtures.root.appendingPathComponent("derived/SampleModel3+Composite.mom"),
        ]
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            var errors = 0
            for length in stride(from: 0, to: bytes.count, by: 97) {
                do { _ = try Self.load(Array(bytes[..<length])) } catch { errors += 1 }
            }
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<400 {
                var damaged = bytes
                let position = Int.random(in: 0..<damaged.count, using: &generator)
                damaged[position] ^= UInt8.random(in: 1...255, using: &generator)
                do { _ = try Self.load(damaged) } catch { errors += 1 }
            }
            XCTAssertGreaterThan(errors, 0, file.lastPathComponent)
        }
        XCTAssertThrowsError(try Self.load(Array("bplist00 and then nothing".utf8))) { error in
            XCTAssertTrue(error is ModelError, "\(error)")
        }
    }

    private static func load(_ bytes: [UInt8]) throws -> NSManagedObjectModel {
        try NSManagedObjectModel(compiledModelData: Data(bytes))
    }

    /// Every model feature both forms carry, in a canonical order.
    static func describe(_ model: NSManagedObjectModel) -> [String] {
        var lines: [String] = []
        for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            lines.append("entity \(entity.name ?? "") class \(entity.managedObjectClassName ?? "") abstract \(entity.isAbstract) parent \(entity.superentity?.name ?? "-") subentities \(entity.subentities.compactMap(\.name).sorted()) renamed \(entity.renamingIdentifier ?? "-") modifier \(entity.versionHashModifier ?? "-") userInfo \(entity.userInfo?.count ?? 0)")
            lines.append("  unique \(entity.uniquenessConstraints.map { $0.map { "\($0)" } })")
            for index in entity.indexes.sorted(by: { $0.name < $1.name }) {
                lines.append("  index \(index.name) \(index.elements.map { "\($0.propertyName) \($0.collationType) \($0.isAscending)" })")
            }
            for property in entity.properties.sorted(by: { $0.name < $1.name }) {
                var line = "  \(property.name) optional \(property.isOptional) transient \(property.isTransient) renamed \(property.renamingIdentifier ?? "-") modifier \(property.versionHashModifier ?? "-") userInfo \(property.userInfo?.count ?? 0)"
                if let attribute = property as? NSAttributeDescription {
                    let className = attribute.attributeType == .transformableAttributeType ? "(not compiled)" : attribute.attributeValueClassName ?? "-"
                    line += " attribute \(attribute.attributeType) class \(className) transformer \(attribute.valueTransformerName ?? "-") default \(attribute.defaultValue.map { "\($0) (\(type(of: $0)))" } ?? "-") preserved \(attribute.preservesValueInHistoryOnDeletion)"
                } else if let relationship = property as? NSRelationshipDescription {
                    line += " relationship to \(relationship.destinationEntity?.name ?? "-") inverse \(relationship.inverseRelationship?.name ?? "-") \(relationship.minCount)...\(relationship.maxCount) \(relationship.deleteRule) ordered \(relationship.isOrdered)"
                } else {
                    line += " \(type(of: property))"
                }
                lines.append(line)
            }
        }
        return lines
    }
}
