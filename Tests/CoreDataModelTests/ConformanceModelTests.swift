import Foundation
import XCTest
@testable import CoreDataModel

// Conformance of the model loader with real Xcode model files (Tests/CoreDataModelTests/Fixtures).
//
// Every expectation below was written by reading the fixture XML by hand, element by element; none
// was copied from the loader's output. Where the loader and the file could disagree (defaults,
// absent attributes), the README's rules apply: absent booleans mean NO, an absent deletionRule
// means Nullify, an absent maxCount means 1 for a to-one and 0 (unbounded) for a to-many.

/// What a fixture model must look like once loaded. Nested so that no name collides with other
/// test files of the target.
private enum ConformanceFixtures {
    /// A default value together with the Swift type the loader must produce for it.
    enum DefaultValue: Equatable, Sendable, CustomStringConvertible {
        case none
        case int16(Int16), int32(Int32), int64(Int64)
        case bool(Bool), double(Double), float(Float), decimal(Decimal), string(String)

        /// The Swift type name a loaded value must have, `nil` for no default.
        var typeName: String? {
            switch self {
            case .none: return nil
            case .int16: return "Int16"
            case .int32: return "Int32"
            case .int64: return "Int64"
            case .bool: return "Bool"
            case .double: return "Double"
            case .float: return "Float"
            case .decimal: return "Decimal"
            case .string: return "String"
            }
        }

        /// The loaded value read back with its exact Swift type; `nil` when the type is not one of ours.
        static func from(_ actual: Any?) -> DefaultValue? {
            guard let actual else { return DefaultValue.none }
            switch actual {
            case let value as Int16: return .int16(value)
            case let value as Int32: return .int32(value)
            case let value as Int64: return .int64(value)
            case let value as Bool: return .bool(value)
            case let value as Double: return .double(value)
            case let value as Float: return .float(value)
            case let value as Decimal: return .decimal(value)
            case let value as String: return .string(value)
            default: return nil
            }
        }

        var description: String {
            switch self {
            case .none: return "none"
            case .int16(let v): return "Int16(\(v))"
            case .int32(let v): return "Int32(\(v))"
            case .int64(let v): return "Int64(\(v))"
            case .bool(let v): return "Bool(\(v))"
            case .double(let v): return "Double(\(v))"
            case .float(let v): return "Float(\(v))"
            case .decimal(let v): return "Decimal(\(v))"
            case .string(let v): return "String(\(v.debugDescription))"
            }
        }
    }

    struct Attribute: Sendable {
        var name: String
        var type: NSAttributeType
        var optional: Bool
        var transient: Bool
        var defaultValue: DefaultValue
        var userInfo: [String: String]
    }

    struct Relationship: Sendable {
        var name: String
        var destination: String
        var inverse: String?
        var toMany: Bool
        var ordered: Bool
        var minCount: Int
        var maxCount: Int
        var deleteRule: NSDeleteRule
        var optional: Bool
        var userInfo: [String: String]
    }

    struct Index: Sendable {
        var name: String
        /// (property, collation, ascending)
        var elements: [(String, NSFetchIndexElementDescription.CollationType, Bool)]
    }

    struct Entity: Sendable {
        var name: String
        var className: String
        var parent: String? = nil
        var isAbstract = false
        var renamingIdentifier: String? = nil
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        var uniqueness: [[String]] = []
        var indexes: [Index] = []
        var userInfo: [String: String] = [:]

        /// The declared property names in file order (every fixture lists attributes first).
        var declaredNames: [String] { attributes.map(\.name) + relationships.map(\.name) }
    }

    struct Model: Sendable {
        var entities: [Entity]
        var versionIdentifiers: Set<String> = []
        var configurations: [(name: String, members: [String])] = []

        func entity(_ name: String) -> Entity? { entities.first { $0.name == name } }

        /// The entity and its ancestors, root first.
        func chain(_ name: String) -> [Entity] {
            var result: [Entity] = []
            var current = entity(name)
            while let entity = current {
                result.insert(entity, at: 0)
                current = entity.parent.flatMap(self.entity)
            }
            return result
        }

        func subentityNames(of name: String) -> [String] {
            entities.filter { $0.parent == name }.map(\.name).sorted()
        }

        /// Everything the version hash of an entity may depend on, spelled out from the XML: the
        /// name, abstractness, the own properties' stored shape, and the same for the superentity
        /// chain. Two entities with equal signatures must have equal hashes and vice versa.
        func structuralSignature(_ name: String) -> String {
            guard let entity = entity(name) else { return "<missing \(name)>" }
            let own = (entity.attributes.map { "A|\($0.name)|\($0.type.rawValue)|\($0.optional)|\($0.transient)" }
                + entity.relationships.map {
                    "R|\($0.name)|\($0.optional)|\($0.destination)|\($0.inverse ?? "-")|\($0.minCount)|\($0.maxCount)|\($0.ordered)"
                }).sorted()
            let parent = entity.parent.map { "(\(structuralSignature($0)))" } ?? "root"
            return "\(entity.name)|\(entity.isAbstract)|\(parent)|\(own.joined(separator: ";"))"
        }
    }

    // MARK: Builders

    static func attr(
        _ name: String, _ type: NSAttributeType, optional: Bool = true, transient: Bool = false,
        defaultValue: DefaultValue = .none, userInfo: [String: String] = [:]
    ) -> Attribute {
        Attribute(name: name, type: type, optional: optional, transient: transient, defaultValue: defaultValue, userInfo: userInfo)
    }

    static func toOne(
        _ name: String, _ destination: String, inverse: String? = nil, minCount: Int = 0,
        deleteRule: NSDeleteRule = .nullifyDeleteRule, userInfo: [String: String] = [:]
    ) -> Relationship {
        Relationship(
            name: name, destination: destination, inverse: inverse, toMany: false, ordered: false,
            minCount: minCount, maxCount: 1, deleteRule: deleteRule, optional: true, userInfo: userInfo)
    }

    static func toMany(
        _ name: String, _ destination: String, inverse: String? = nil, ordered: Bool = false,
        deleteRule: NSDeleteRule = .nullifyDeleteRule, userInfo: [String: String] = [:]
    ) -> Relationship {
        Relationship(
            name: name, destination: destination, inverse: inverse, toMany: true, ordered: ordered,
            minCount: 0, maxCount: 0, deleteRule: deleteRule, optional: true, userInfo: userInfo)
    }

    // MARK: CoreDataPlus SampleModel.xcdatamodeld

    /// `SampleModel.xcdatamodel`, the package's current version (`.xccurrentversion`).
    static let sampleModel1 = Model(
        entities: [
            Entity(
                name: "Car", className: "Car",
                attributes: [
                    attr("color", .transformableAttributeType),
                    attr("currentDrivingSpeed", .integer64AttributeType, transient: true, defaultValue: .int64(0)),
                    attr("maker", .stringAttributeType),
                    attr("markedForDeletionAsOf", .dateAttributeType),
                    attr("model", .stringAttributeType),
                    attr("numberPlate", .stringAttributeType, optional: false),
                ],
                relationships: [toOne("owner", "Person", inverse: "cars")],
                uniqueness: [["numberPlate"]]),
            Entity(
                name: "ExpensiveSportCar", className: "ExpensiveSportCar", parent: "SportCar",
                attributes: [attr("isLimitedEdition", .booleanAttributeType, defaultValue: .bool(false))]),
            Entity(
                name: "Person", className: "Person",
                attributes: [
                    attr("firstName", .stringAttributeType),
                    attr("id", .UUIDAttributeType, optional: false),
                    attr("isDriving", .booleanAttributeType, optional: false, transient: true, defaultValue: .bool(false)),
                    attr("lastName", .stringAttributeType),
                    attr("updatedAt", .dateAttributeType, optional: false),
                ],
                relationships: [toMany("cars", "Car", inverse: "owner")],
                uniqueness: [["firstName", "lastName"]]),
            Entity(name: "SportCar", className: "SportCar", parent: "Car"),
        ],
        versionIdentifiers: ["1"])

    static let sampleModel2 = Model(
        entities: [
            Entity(
                name: "Car", className: "Car",
                attributes: [
                    attr("maker", .stringAttributeType),
                    attr("markedForDeletionAsOf", .dateAttributeType),
                    attr("model", .stringAttributeType),
                    attr("numberPlate", .stringAttributeType, optional: false),
                ],
                relationships: [toOne("owner", "Person", inverse: "cars")],
                uniqueness: [["numberPlate"]],
                indexes: [Index(name: "byMakerAndNumberPlate", elements: [("maker", .binary, true), ("numberPlate", .binary, true)])]),
            Entity(
                name: "LuxuryCar", className: "LuxuryCar", parent: "SportCar", renamingIdentifier: "ExpensiveSportCar",
                attributes: [attr("isLimitedEdition", .booleanAttributeType, defaultValue: .bool(false))]),
            Entity(
                name: "Person", className: "Person",
                attributes: [
                    attr("firstName", .stringAttributeType),
                    attr("lastName", .stringAttributeType),
                    attr("updatedAt", .dateAttributeType, optional: false),
                ],
                relationships: [toMany("cars", "Car", inverse: "owner")],
                uniqueness: [["firstName", "lastName"]]),
            Entity(name: "SportCar", className: "SportCar", parent: "Car"),
        ],
        versionIdentifiers: ["2"])

    static let sampleModel3 = Model(
        entities: [
            Entity(
                name: "Car", className: "Car",
                attributes: [
                    attr("markedForDeletionAsOf", .dateAttributeType),
                    attr("model", .stringAttributeType),
                    attr("numberPlate", .stringAttributeType, optional: false),
                ],
                relationships: [
                    toOne("createdBy", "Maker", inverse: "cars"),
                    toOne("owner", "Person", inverse: "cars"),
                    toMany("previousOwners", "Person", inverse: "previousCars"),
                ],
                uniqueness: [["numberPlate"]]),
            Entity(
                name: "LuxuryCar", className: "LuxuryCar", parent: "SportCar", renamingIdentifier: "ExpensiveSportCar",
                attributes: [attr("isLimitedEdition", .booleanAttributeType, defaultValue: .bool(false))]),
            Entity(
                name: "Maker", className: "Maker",
                attributes: [attr("name", .stringAttributeType, optional: false)],
                relationships: [toMany("cars", "Car", inverse: "createdBy")],
                uniqueness: [["name"]]),
            Entity(
                name: "Person", className: "Person",
                attributes: [
                    attr("firstName", .stringAttributeType),
                    attr("lastName", .stringAttributeType),
                    attr("updatedAt", .dateAttributeType, optional: false),
                ],
                relationships: [
                    toMany("cars", "Car", inverse: "owner"),
                    toMany("previousCars", "Car", inverse: "previousOwners"),
                ],
                uniqueness: [["firstName", "lastName"]]),
            Entity(name: "SportCar", className: "SportCar", parent: "Car"),
        ],
        versionIdentifiers: ["3"])

    // MARK: CoreStore Model.xcdatamodeld

    static let coreStore: Model = {
        func testAttributes() -> [Attribute] {
            [
                attr("testBoolean", .booleanAttributeType),
                attr("testData", .binaryDataAttributeType),
                attr("testDate", .dateAttributeType),
                attr("testDecimal", .decimalAttributeType),
                attr("testEntityID", .integer64AttributeType),
                attr("testNil", .stringAttributeType),
                attr("testNumber", .integer32AttributeType),
                attr("testString", .stringAttributeType),
            ]
        }
        return Model(
            entities: [
                Entity(
                    name: "TestEntity1AAA", className: ".TestEntity1", attributes: testAttributes(),
                    relationships: [
                        toMany("testToManyUnordered", "TestEntity1AAA", inverse: "testToOne"),
                        toOne("testToOne", "TestEntity1AAA", inverse: "testToManyUnordered"),
                    ]),
                Entity(
                    name: "TestEntity2", className: ".TestEntity2", attributes: testAttributes(),
                    relationships: [
                        toMany("testToManyOrdered", "TestEntity2", inverse: "testToOne", ordered: true),
                        toOne("testToOne", "TestEntity2", inverse: "testToManyOrdered"),
                    ]),
            ],
            versionIdentifiers: [],  // userDefinedModelVersionIdentifier="" means none
            configurations: [(name: "Config1", members: ["TestEntity1AAA"]), (name: "Config2", members: ["TestEntity2"])])
    }()

    // MARK: MagicalRecord TestModel.xcdatamodeld

    static let magicalRecord = Model(
        entities: [
            Entity(
                name: "AbstractRelatedEntity", className: "AbstractRelatedEntity", isAbstract: true,
                attributes: [attr("sampleBaseAttribute", .stringAttributeType)]),
            Entity(
                name: "ConcreteRelatedEntity", className: "ConcreteRelatedEntity", parent: "AbstractRelatedEntity",
                attributes: [attr("sampleConcreteAttribute", .stringAttributeType)]),
            Entity(name: "EntityWithDifferentClassName", className: "DifferentClassNameMapping"),
            Entity(name: "EntityWithoutEntityNameMethodWithASuffix", className: "EntityWithoutEntityNameMethod"),
            Entity(
                name: "MappedEntity", className: "MappedEntity",
                attributes: [
                    attr("mappedEntityID", .integer16AttributeType, defaultValue: .int16(0)),
                    attr("nestedAttribute", .stringAttributeType, userInfo: ["mappedKeyName": "attributeValue.nestedValue"]),
                    attr("sampleAttribute", .stringAttributeType),
                    attr("testMappedEntityID", .integer64AttributeType, defaultValue: .int64(0), userInfo: ["mappedKeyName": "id"]),
                ],
                userInfo: ["relatedByAttribute": "mapped"]),
            Entity(
                name: "SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey",
                className: "SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey",
                attributes: [attr("testPrimaryKey", .integer16AttributeType, defaultValue: .int16(0))],
                relationships: [
                    toMany("mappedEntities", "MappedEntity", deleteRule: .cascadeDeleteRule, userInfo: ["relatedByAttribute": "testMappedEntityID"])
                ],
                userInfo: ["relatedByAttribute": "testPrimaryKey"]),
            Entity(
                name: "SingleEntityRelatedToMappedEntityUsingDefaults",
                className: "SingleEntityRelatedToMappedEntityUsingDefaults",
                attributes: [attr("singleEntityRelatedToMappedEntityUsingDefaultsID", .integer16AttributeType, defaultValue: .int16(0))],
                relationships: [toOne("mappedEntity", "MappedEntity", minCount: 1, deleteRule: .cascadeDeleteRule)]),
            Entity(
                name: "SingleEntityRelatedToMappedEntityUsingMappedPrimaryKey",
                className: "SingleEntityRelatedToMappedEntityUsingMappedPrimaryKey",
                relationships: [
                    toOne(
                        "mappedEntity", "MappedEntity", minCount: 1, deleteRule: .cascadeDeleteRule,
                        userInfo: ["mappedKeyName": "someRandomAttributeName", "relatedByAttribute": "testMappedEntityID"])
                ]),
            Entity(
                name: "SingleEntityRelatedToMappedEntityWithNestedMappedAttributes",
                className: "SingleEntityRelatedToMappedEntityWithNestedMappedAttributes",
                relationships: [toOne("mappedEntity", "MappedEntity", minCount: 1, deleteRule: .cascadeDeleteRule)]),
            Entity(
                name: "SingleEntityRelatedToMappedEntityWithSecondaryMappings",
                className: "SingleEntityRelatedToMappedEntityWithSecondaryMappings",
                attributes: [
                    attr("notImportedAttribute", .booleanAttributeType, optional: false, defaultValue: .bool(true)),
                    attr(
                        "secondaryMappedAttribute", .stringAttributeType,
                        userInfo: ["mappedKeyName": "no_in_use", "mappedKeyName.1": "getting_warmer", "mappedKeyName.2": "actualMappedKey"]),
                ],
                relationships: [
                    toOne(
                        "mappedRelationship", "MappedEntity", minCount: 1, deleteRule: .cascadeDeleteRule,
                        userInfo: ["mappedKeyName": "not_in_use", "mappedKeyName.1": "almost_there", "mappedKeyName.2": "actualRelatedObject"])
                ]),
            Entity(
                name: "SingleEntityWithNoRelationships", className: "SingleEntityWithNoRelationships",
                attributes: [
                    attr("booleanAsStringTestAttribute", .booleanAttributeType),
                    attr("booleanTestAttribute", .booleanAttributeType),
                    attr("colorTestAttribute", .transformableAttributeType, userInfo: ["attributeValueClassName": "*Color"]),
                    attr("dateTestAttribute", .dateAttributeType),
                    attr("dateWithCustomFormat", .dateAttributeType, userInfo: ["dateFormat": "M/d/yyyy H-mm-ss"]),
                    attr("decimalTestAttribute", .decimalAttributeType, defaultValue: .decimal(0)),
                    attr("doubleTestAttribute", .doubleAttributeType, defaultValue: .double(0.0)),
                    attr("floatTestAttribute", .floatAttributeType, defaultValue: .float(0)),
                    attr("int16TestAttribute", .integer16AttributeType, defaultValue: .int16(0)),
                    attr("int32TestAttribute", .integer32AttributeType, defaultValue: .int32(0)),
                    attr("int64TestAttribute", .integer64AttributeType, defaultValue: .int64(0)),
                    attr("mappedStringAttribute", .stringAttributeType, userInfo: ["mappedKeyName": "mappedAttributeWithStringValue"]),
                    attr("notInJsonAttribute", .stringAttributeType, defaultValue: .string("Set From Core Data Model Editor")),
                    attr("nullTestAttribute", .integer64AttributeType, defaultValue: .int64(100)),
                    attr("numberAsStringTestAttribute", .stringAttributeType),
                    attr("stringTestAttribute", .stringAttributeType),
                    attr("unixTime13TestAttribute", .dateAttributeType, userInfo: ["dateFormat": "UnixTime"]),
                    attr("unixTimeTestAttribute", .dateAttributeType),
                ]),
            Entity(
                name: "SingleRelatedEntity", className: "SingleRelatedEntity",
                attributes: [attr("mappedStringAttribute", .stringAttributeType)],
                relationships: [
                    toMany(
                        "testAbstractToManyRelationship", "AbstractRelatedEntity", deleteRule: .cascadeDeleteRule,
                        userInfo: ["relatedByAttribute": "sampleBaseAttribute"]),
                    toOne(
                        "testAbstractToOneRelationship", "AbstractRelatedEntity", minCount: 1, deleteRule: .cascadeDeleteRule,
                        userInfo: ["relatedByAttribute": "sampleBaseAttribute"]),
                    toMany(
                        "testConcreteToManyRelationship", "ConcreteRelatedEntity", deleteRule: .cascadeDeleteRule,
                        userInfo: ["relatedByAttribute": "sampleConcreteAttribute"]),
                    toOne(
                        "testConcreteToOneRelationship", "ConcreteRelatedEntity", minCount: 1, deleteRule: .cascadeDeleteRule,
                        userInfo: ["relatedByAttribute": "sampleConcreteAttribute"]),
                ]),
        ],
        versionIdentifiers: [])  // userDefinedModelVersionIdentifier="" means none
}

final class ConformanceModelTests: XCTestCase {
    private typealias Expected = ConformanceFixtures

    /// One way of loading one fixture, with what it must give.
    private struct LoadedCase {
        let label: String
        let expected: ConformanceFixtures.Model
        let model: NSManagedObjectModel
    }

    private static let sampleVersions: [(name: String, expected: ConformanceFixtures.Model)] = [
        ("SampleModel", ConformanceFixtures.sampleModel1),
        ("SampleModel2", ConformanceFixtures.sampleModel2),
        ("SampleModel3", ConformanceFixtures.sampleModel3),
    ]

    // MARK: Loading helpers

    /// Every fixture model loaded every supported way: the package, the version folder and the
    /// `contents` file, each with the failable and the throwing initializer, plus
    /// `XcodeModelPackage.loadModel(version:)`.
    private func allLoadedCases(file: StaticString = #filePath, line: UInt = #line) throws -> [LoadedCase] {
        var cases: [LoadedCase] = []
        func addBothInitializers(_ label: String, _ expected: ConformanceFixtures.Model, _ url: URL) throws {
            let apple = try XCTUnwrap(
                NSManagedObjectModel(contentsOf: url), "\(label): NSManagedObjectModel(contentsOf:) returned nil",
                file: file, line: line)
            cases.append(LoadedCase(label: "\(label) via init?(contentsOf:)", expected: expected, model: apple))
            let validating = try NSManagedObjectModel(validatingContentsOf: url)
            cases.append(LoadedCase(label: "\(label) via init(validatingContentsOf:)", expected: expected, model: validating))
        }
        func addPackage(_ label: String, _ url: URL, _ versions: [(name: String, expected: ConformanceFixtures.Model)], current: ConformanceFixtures.Model) throws {
            try addBothInitializers("\(label) (current version)", current, url)
            let package = try XcodeModelPackage(contentsOf: url)
            for (name, expected) in versions {
                cases.append(LoadedCase(
                    label: "\(label) XcodeModelPackage.loadModel(version: \(name))", expected: expected,
                    model: try package.loadModel(version: name)))
                let folder = package.versionURL(named: name)
                try addBothInitializers("\(name).xcdatamodel", expected, folder)
                try addBothInitializers("\(name).xcdatamodel/contents", expected, folder.appendingPathComponent("contents"))
            }
        }
        try addPackage("SampleModel.xcdatamodeld", Fixtures.sampleModel, Self.sampleVersions, current: Expected.sampleModel1)
        try addPackage("CoreStore Model.xcdatamodeld", Fixtures.coreStoreModel, [("Model", Expected.coreStore)], current: Expected.coreStore)
        try addPackage(
            "MagicalRecord TestModel.xcdatamodeld", Fixtures.magicalRecordModel, [("TestModel", Expected.magicalRecord)],
            current: Expected.magicalRecord)
        XCTAssertEqual(cases.count, 2 + 3 * 5 + 2 + 5 + 2 + 5, file: file, line: line)
        return cases
    }

    private func loadSample(_ version: String) throws -> NSManagedObjectModel {
        try XcodeModelPackage(contentsOf: Fixtures.sampleModel).loadModel(version: version)
    }

    private func loadCoreStore() throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: Fixtures.coreStoreModel)
    }

    private func loadMagicalRecord() throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: Fixtures.magicalRecordModel)
    }

    /// A fresh temporary folder removed after the test.
    private func makeTemporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("coredata-conformance-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return folder
    }

    /// Copies a folder tree by reading and writing each file, so the copy is writable (the
    /// fixtures are read-only) and can be removed afterwards. Hidden files (`.xccurrentversion`) included.
    private func copyTree(_ source: URL, to destination: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source.path, isDirectory: &isDirectory) else {
            throw CocoaError(.fileNoSuchFile)
        }
        if isDirectory.boolValue {
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
            for name in try FileManager.default.contentsOfDirectory(atPath: source.path) {
                try copyTree(source.appendingPathComponent(name), to: destination.appendingPathComponent(name))
            }
        } else {
            try Data(contentsOf: source).write(to: destination)
        }
    }

    /// Writes `text` as a one-version model and loads it; the temporary folder goes at teardown.
    private func loadEdited(_ text: String, name: String) throws -> NSManagedObjectModel {
        let folder = try Fixtures.writeModel(text, name: name)
        let parent = folder.deletingLastPathComponent()
        addTeardownBlock { try? FileManager.default.removeItem(at: parent) }
        return try NSManagedObjectModel(validatingContentsOf: folder)
    }

    private func fixtureText(_ url: URL) throws -> String {
        try String(decoding: Data(contentsOf: url), as: UTF8.self)
    }

    /// Replaces text in a fixture copy, failing if the fixture no longer contains it.
    private func edit(_ text: String, _ target: String, _ replacement: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        XCTAssertNotNil(text.range(of: target), "the fixture no longer contains \(target.debugDescription)", file: file, line: line)
        return text.replacingOccurrences(of: target, with: replacement)
    }

    private func strings(_ info: [AnyHashable: Any]?) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in info ?? [:] {
            result[(key.base as? String) ?? "<non-string key \(key)>"] = (value as? String) ?? "<non-string \(type(of: value))>"
        }
        return result
    }

    private func hashesOfDeclaredProperties(_ entity: NSEntityDescription?) -> [String: Data] {
        Dictionary(uniqueKeysWithValues: (entity?.declaredProperties ?? []).map { ($0.name, $0.versionHash) })
    }

    // MARK: The conformance check

    /// Checks everything the expectations state about `model`.
    private func assertConforms(
        _ model: NSManagedObjectModel, to expected: ConformanceFixtures.Model, _ label: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let expectedNames = expected.entities.map(\.name).sorted()
        XCTAssertEqual(model.entities.compactMap(\.name).sorted(), expectedNames, "\(label): entity names", file: file, line: line)
        XCTAssertEqual(model.entities.count, expectedNames.count, "\(label): entity count", file: file, line: line)
        XCTAssertEqual(model.entitiesByName.keys.sorted(), expectedNames, "\(label): entitiesByName", file: file, line: line)
        XCTAssertEqual(
            model.versionIdentifiers, Set(expected.versionIdentifiers.map(AnyHashable.init)),
            "\(label): versionIdentifiers", file: file, line: line)
        XCTAssertTrue(model.fetchRequestDescriptionsByName.isEmpty, "\(label): no fetch request templates", file: file, line: line)

        // Configurations.
        XCTAssertEqual(model.configurations, expected.configurations.map(\.name), "\(label): configurations", file: file, line: line)
        for (name, members) in expected.configurations {
            let actual = model.entities(forConfigurationName: name)
            XCTAssertEqual(actual?.compactMap(\.name), members, "\(label): members of \(name)", file: file, line: line)
            for entity in actual ?? [] {
                XCTAssertTrue(
                    entity === model.entitiesByName[entity.name ?? ""], "\(label): \(name) holds the model's own entity object",
                    file: file, line: line)
            }
        }
        XCTAssertEqual(
            model.entities(forConfigurationName: nil)?.compactMap(\.name).sorted(), expectedNames,
            "\(label): nil configuration means all entities", file: file, line: line)
        XCTAssertNil(model.entities(forConfigurationName: "NoSuchConfiguration"), "\(label): unknown configuration", file: file, line: line)

        for spec in expected.entities {
            let where_ = "\(label): entity \(spec.name)"
            guard let entity = model.entitiesByName[spec.name] else {
                XCTFail("\(where_) is missing", file: file, line: line)
                continue
            }
            XCTAssertEqual(entity.name, spec.name, where_, file: file, line: line)
            XCTAssertTrue(entity.managedObjectModel === model, "\(where_): managedObjectModel", file: file, line: line)
            XCTAssertEqual(entity.managedObjectClassName, spec.className, "\(where_): managedObjectClassName", file: file, line: line)
            XCTAssertEqual(entity.isAbstract, spec.isAbstract, "\(where_): isAbstract", file: file, line: line)
            XCTAssertEqual(entity.superentity?.name, spec.parent, "\(where_): superentity", file: file, line: line)
            if let parent = spec.parent {
                XCTAssertTrue(entity.superentity === model.entitiesByName[parent], "\(where_): superentity object", file: file, line: line)
            }
            XCTAssertEqual(
                entity.subentities.compactMap(\.name).sorted(), expected.subentityNames(of: spec.name),
                "\(where_): subentities", file: file, line: line)
            XCTAssertEqual(
                entity.subentitiesByName.keys.sorted(), expected.subentityNames(of: spec.name),
                "\(where_): subentitiesByName", file: file, line: line)
            XCTAssertEqual(entity.renamingIdentifier, spec.renamingIdentifier, "\(where_): renamingIdentifier", file: file, line: line)
            XCTAssertNil(entity.versionHashModifier, "\(where_): versionHashModifier", file: file, line: line)
            XCTAssertEqual(strings(entity.userInfo), spec.userInfo, "\(where_): userInfo", file: file, line: line)
            XCTAssertEqual(entity.uniquenessConstraintNames, spec.uniqueness, "\(where_): uniqueness constraints", file: file, line: line)

            // Fetch indexes.
            XCTAssertEqual(entity.indexes.map(\.name), spec.indexes.map(\.name), "\(where_): index names", file: file, line: line)
            for (index, indexSpec) in zip(entity.indexes, spec.indexes) {
                XCTAssertTrue(index.entity === entity, "\(where_): index \(index.name) entity", file: file, line: line)
                XCTAssertEqual(index.elements.map(\.propertyName), indexSpec.elements.map { $0.0 }, "\(where_): index elements", file: file, line: line)
                XCTAssertEqual(index.elements.map(\.collationType), indexSpec.elements.map { $0.1 }, "\(where_): index collation", file: file, line: line)
                XCTAssertEqual(index.elements.map(\.isAscending), indexSpec.elements.map { $0.2 }, "\(where_): index order", file: file, line: line)
                for element in index.elements {
                    XCTAssertTrue(element.indexDescription === index, "\(where_): index element owner", file: file, line: line)
                }
            }

            // Own properties.
            XCTAssertEqual(entity.declaredProperties.map(\.name), spec.declaredNames, "\(where_): declaredProperties", file: file, line: line)
            let declared = Dictionary(entity.declaredProperties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for attributeSpec in spec.attributes {
                let place = "\(where_).\(attributeSpec.name)"
                guard let attribute = declared[attributeSpec.name] as? NSAttributeDescription else {
                    XCTFail("\(place) is not a declared attribute", file: file, line: line)
                    continue
                }
                XCTAssertTrue(attribute.entity === entity, "\(place): entity", file: file, line: line)
                XCTAssertEqual(attribute.attributeType, attributeSpec.type, "\(place): attributeType", file: file, line: line)
                XCTAssertEqual(attribute.isOptional, attributeSpec.optional, "\(place): isOptional", file: file, line: line)
                XCTAssertEqual(attribute.isTransient, attributeSpec.transient, "\(place): isTransient", file: file, line: line)
                XCTAssertFalse(attribute.isReadOnly, "\(place): isReadOnly", file: file, line: line)
                XCTAssertNil(attribute.renamingIdentifier, "\(place): renamingIdentifier", file: file, line: line)
                XCTAssertNil(attribute.versionHashModifier, "\(place): versionHashModifier", file: file, line: line)
                XCTAssertEqual(strings(attribute.userInfo), attributeSpec.userInfo, "\(place): userInfo", file: file, line: line)
                XCTAssertEqual(
                    ConformanceFixtures.DefaultValue.from(attribute.defaultValue), attributeSpec.defaultValue,
                    "\(place): defaultValue", file: file, line: line)
                XCTAssertEqual(
                    attribute.defaultValue.map { String(describing: type(of: $0)) }, attributeSpec.defaultValue.typeName,
                    "\(place): Swift type of defaultValue", file: file, line: line)
                XCTAssertTrue(entity.attributesByName[attributeSpec.name] === attribute, "\(place): attributesByName", file: file, line: line)
            }
            for relationshipSpec in spec.relationships {
                let place = "\(where_).\(relationshipSpec.name)"
                guard let relationship = declared[relationshipSpec.name] as? NSRelationshipDescription else {
                    XCTFail("\(place) is not a declared relationship", file: file, line: line)
                    continue
                }
                XCTAssertTrue(relationship.entity === entity, "\(place): entity", file: file, line: line)
                XCTAssertEqual(relationship.destinationEntity?.name, relationshipSpec.destination, "\(place): destination", file: file, line: line)
                XCTAssertTrue(
                    relationship.destinationEntity === model.entitiesByName[relationshipSpec.destination],
                    "\(place): destination object", file: file, line: line)
                XCTAssertEqual(relationship.inverseRelationship?.name, relationshipSpec.inverse, "\(place): inverse", file: file, line: line)
                if let inverse = relationship.inverseRelationship {
                    XCTAssertEqual(inverse.entity?.name, relationshipSpec.destination, "\(place): inverse owner", file: file, line: line)
                    XCTAssertTrue(inverse.inverseRelationship === relationship, "\(place): inverse points back", file: file, line: line)
                }
                XCTAssertEqual(relationship.isToMany, relationshipSpec.toMany, "\(place): isToMany", file: file, line: line)
                XCTAssertEqual(relationship.isOrdered, relationshipSpec.ordered, "\(place): isOrdered", file: file, line: line)
                XCTAssertEqual(relationship.minCount, relationshipSpec.minCount, "\(place): minCount", file: file, line: line)
                XCTAssertEqual(relationship.maxCount, relationshipSpec.maxCount, "\(place): maxCount", file: file, line: line)
                XCTAssertEqual(relationship.deleteRule, relationshipSpec.deleteRule, "\(place): deleteRule", file: file, line: line)
                XCTAssertEqual(relationship.isOptional, relationshipSpec.optional, "\(place): isOptional", file: file, line: line)
                XCTAssertFalse(relationship.isTransient, "\(place): isTransient", file: file, line: line)
                XCTAssertEqual(strings(relationship.userInfo), relationshipSpec.userInfo, "\(place): userInfo", file: file, line: line)
                XCTAssertTrue(
                    entity.relationshipsByName[relationshipSpec.name] === relationship, "\(place): relationshipsByName",
                    file: file, line: line)
            }

            // Inherited properties: present in properties / …ByName, declared by their ancestor.
            let chain = expected.chain(spec.name)
            let allNames = chain.flatMap(\.declaredNames)
            XCTAssertEqual(entity.properties.map(\.name), allNames, "\(where_): properties (inherited first)", file: file, line: line)
            XCTAssertEqual(entity.propertiesByName.keys.sorted(), allNames.sorted(), "\(where_): propertiesByName", file: file, line: line)
            XCTAssertEqual(
                entity.attributesByName.keys.sorted(), chain.flatMap { $0.attributes.map(\.name) }.sorted(),
                "\(where_): attributesByName", file: file, line: line)
            XCTAssertEqual(
                entity.relationshipsByName.keys.sorted(), chain.flatMap { $0.relationships.map(\.name) }.sorted(),
                "\(where_): relationshipsByName", file: file, line: line)
            for ancestor in chain.dropLast() {
                for name in ancestor.declaredNames {
                    XCTAssertEqual(
                        entity.propertiesByName[name]?.entity?.name, ancestor.name,
                        "\(where_): inherited \(name) stays declared by \(ancestor.name)", file: file, line: line)
                    XCTAssertTrue(
                        entity.propertiesByName[name] === model.entitiesByName[ancestor.name]?.propertiesByName[name],
                        "\(where_): inherited \(name) is the ancestor's object", file: file, line: line)
                }
            }
        }
    }

    // MARK: - Structure of every model, every way of loading it

    func testEveryFixtureLoadsAndConformsEveryWay() throws {
        for loaded in try allLoadedCases() {
            assertConforms(loaded.model, to: loaded.expected, loaded.label)
        }
    }

    func testFailableAndValidatingInitializersAgree() throws {
        for url in [Fixtures.sampleModel, Fixtures.coreStoreModel, Fixtures.magicalRecordModel] {
            let apple = try XCTUnwrap(NSManagedObjectModel(contentsOf: url))
            let validating = try NSManagedObjectModel(validatingContentsOf: url)
            XCTAssertEqual(apple.entityVersionHashesByName, validating.entityVersionHashesByName, url.lastPathComponent)
            XCTAssertEqual(apple.versionChecksum, validating.versionChecksum, url.lastPathComponent)
            XCTAssertEqual(apple.configurations, validating.configurations, url.lastPathComponent)
            XCTAssertEqual(apple.versionIdentifiers, validating.versionIdentifiers, url.lastPathComponent)
        }
    }

    func testSampleModelCurrentVersionIsTheFirstVersionWithFourEntities() throws {
        let model = try XCTUnwrap(NSManagedObjectModel(contentsOf: Fixtures.sampleModel))
        XCTAssertEqual(model.entities.compactMap(\.name).sorted(), ["Car", "ExpensiveSportCar", "Person", "SportCar"])
        XCTAssertEqual(model.versionIdentifiers, ["1"])
        XCTAssertNil(model.entitiesByName["Maker"])
        XCTAssertNil(model.entitiesByName["LuxuryCar"])
    }

    func testSampleModelVersionsEntityNames() throws {
        XCTAssertEqual(try loadSample("SampleModel").entities.compactMap(\.name).sorted(), ["Car", "ExpensiveSportCar", "Person", "SportCar"])
        XCTAssertEqual(try loadSample("SampleModel2").entities.compactMap(\.name).sorted(), ["Car", "LuxuryCar", "Person", "SportCar"])
        XCTAssertEqual(try loadSample("SampleModel3").entities.compactMap(\.name).sorted(), ["Car", "LuxuryCar", "Maker", "Person", "SportCar"])
        XCTAssertEqual(try loadCoreStore().entities.compactMap(\.name).sorted(), ["TestEntity1AAA", "TestEntity2"])
        XCTAssertEqual(try loadMagicalRecord().entities.count, 12)
    }

    func testEntitiesKeepFileOrder() throws {
        // Xcode writes entities sorted by name; the loader keeps the file's order.
        XCTAssertEqual(try loadSample("SampleModel3").entities.compactMap(\.name), ["Car", "LuxuryCar", "Maker", "Person", "SportCar"])
        XCTAssertEqual(try loadSample("SampleModel").entities.compactMap(\.name), ["Car", "ExpensiveSportCar", "Person", "SportCar"])
    }

    // MARK: - Attributes in detail

    func testSampleModel1TransformableColorAndValueClassNames() throws {
        let model = try loadSample("SampleModel")
        let car = try XCTUnwrap(model.entitiesByName["Car"])
        let color = try XCTUnwrap(car.attributesByName["color"])
        XCTAssertEqual(color.attributeType, .transformableAttributeType)
        XCTAssertEqual(color.type, .transformable)
        XCTAssertEqual(color.valueTransformerName, "ColorTransformer")
        XCTAssertEqual(color.attributeValueClassName, "Color")
        XCTAssertNil(color.defaultValue)
        XCTAssertEqual(car.attributesByName["maker"]?.attributeValueClassName, "NSString")
        XCTAssertEqual(car.attributesByName["currentDrivingSpeed"]?.attributeValueClassName, "NSNumber")
        XCTAssertEqual(car.attributesByName["markedForDeletionAsOf"]?.attributeValueClassName, "NSDate")
        XCTAssertNil(car.attributesByName["maker"]?.valueTransformerName)

        let person = try XCTUnwrap(model.entitiesByName["Person"])
        let id = try XCTUnwrap(person.attributesByName["id"])
        XCTAssertEqual(id.attributeValueClassName, "NSUUID")
        XCTAssertTrue(id.preservesValueInHistoryOnDeletion, "preserveAfterDeletion=\"YES\"")
        XCTAssertEqual(person.attributesByName["isDriving"]?.preservesValueInHistoryOnDeletion, false)
        XCTAssertEqual(person.attributesByName["isDriving"]?.attributeValueClassName, "NSNumber")
        for attribute in model.entities.flatMap({ $0.declaredProperties.compactMap { $0 as? NSAttributeDescription } }) {
            XCTAssertFalse(attribute.allowsExternalBinaryDataStorage, attribute.name)
            XCTAssertTrue(attribute.validationRules.isEmpty, attribute.name)
        }
    }

    func testColorExistsOnlyInVersion1() throws {
        XCTAssertNotNil(try loadSample("SampleModel").entitiesByName["Car"]?.attributesByName["color"])
        XCTAssertNil(try loadSample("SampleModel2").entitiesByName["Car"]?.attributesByName["color"])
        XCTAssertNil(try loadSample("SampleModel3").entitiesByName["Car"]?.attributesByName["color"])
    }

    func testMagicalRecordTransformableWithoutTransformerName() throws {
        let model = try loadMagicalRecord()
        let color = try XCTUnwrap(model.entitiesByName["SingleEntityWithNoRelationships"]?.attributesByName["colorTestAttribute"])
        XCTAssertEqual(color.attributeType, .transformableAttributeType)
        XCTAssertNil(color.valueTransformerName)
        XCTAssertNil(color.attributeValueClassName, "no customClassName in the file; the userInfo entry is not a class name")
        XCTAssertEqual(strings(color.userInfo), ["attributeValueClassName": "*Color"])
        XCTAssertNil(color.defaultValue)
    }

    func testDefaultValuesHaveTheirSwiftTypes() throws {
        let magical = try loadMagicalRecord()
        let plain = try XCTUnwrap(magical.entitiesByName["SingleEntityWithNoRelationships"])
        XCTAssertEqual(plain.attributesByName["int16TestAttribute"]?.defaultValue as? Int16, 0)
        XCTAssertEqual(plain.attributesByName["int32TestAttribute"]?.defaultValue as? Int32, 0)
        XCTAssertEqual(plain.attributesByName["int64TestAttribute"]?.defaultValue as? Int64, 0)
        XCTAssertEqual(plain.attributesByName["nullTestAttribute"]?.defaultValue as? Int64, 100)
        XCTAssertEqual(plain.attributesByName["doubleTestAttribute"]?.defaultValue as? Double, 0.0)
        XCTAssertEqual(plain.attributesByName["floatTestAttribute"]?.defaultValue as? Float, 0)
        XCTAssertEqual(plain.attributesByName["decimalTestAttribute"]?.defaultValue as? Decimal, Decimal(0))
        XCTAssertEqual(plain.attributesByName["notInJsonAttribute"]?.defaultValue as? String, "Set From Core Data Model Editor")
        XCTAssertNil(plain.attributesByName["stringTestAttribute"]?.defaultValue)
        XCTAssertNil(plain.attributesByName["booleanTestAttribute"]?.defaultValue)
        XCTAssertNil(plain.attributesByName["dateTestAttribute"]?.defaultValue)
        // No silent widening: an Integer 16 default is not an Int64 and vice versa.
        XCTAssertNil(plain.attributesByName["int16TestAttribute"]?.defaultValue as? Int64)
        XCTAssertNil(plain.attributesByName["nullTestAttribute"]?.defaultValue as? Int16)
        XCTAssertNil(plain.attributesByName["floatTestAttribute"]?.defaultValue as? Double)

        let mapped = try XCTUnwrap(magical.entitiesByName["MappedEntity"])
        XCTAssertEqual(mapped.attributesByName["mappedEntityID"]?.defaultValue as? Int16, 0)
        XCTAssertEqual(mapped.attributesByName["testMappedEntityID"]?.defaultValue as? Int64, 0)
        let secondary = try XCTUnwrap(magical.entitiesByName["SingleEntityRelatedToMappedEntityWithSecondaryMappings"])
        XCTAssertEqual(secondary.attributesByName["notImportedAttribute"]?.defaultValue as? Bool, true)

        let sample = try loadSample("SampleModel")
        XCTAssertEqual(sample.entitiesByName["Car"]?.attributesByName["currentDrivingSpeed"]?.defaultValue as? Int64, 0)
        XCTAssertEqual(sample.entitiesByName["Person"]?.attributesByName["isDriving"]?.defaultValue as? Bool, false)
        XCTAssertEqual(sample.entitiesByName["ExpensiveSportCar"]?.attributesByName["isLimitedEdition"]?.defaultValue as? Bool, false)
        // Inherited through SportCar from ExpensiveSportCar's point of view, declared by ExpensiveSportCar itself.
        XCTAssertEqual(sample.entitiesByName["ExpensiveSportCar"]?.attributesByName["currentDrivingSpeed"]?.defaultValue as? Int64, 0)
    }

    func testTransientAndOptionalFlags() throws {
        let model = try loadSample("SampleModel")
        let car = try XCTUnwrap(model.entitiesByName["Car"])
        let person = try XCTUnwrap(model.entitiesByName["Person"])
        // optional="YES" transient="YES"
        XCTAssertEqual(car.attributesByName["currentDrivingSpeed"]?.isTransient, true)
        XCTAssertEqual(car.attributesByName["currentDrivingSpeed"]?.isOptional, true)
        // transient="YES" without optional: a required transient
        XCTAssertEqual(person.attributesByName["isDriving"]?.isTransient, true)
        XCTAssertEqual(person.attributesByName["isDriving"]?.isOptional, false)
        // no flags at all
        XCTAssertEqual(car.attributesByName["numberPlate"]?.isOptional, false)
        XCTAssertEqual(car.attributesByName["numberPlate"]?.isTransient, false)
        let transientNames = model.entities.flatMap { entity in
            entity.declaredProperties.filter(\.isTransient).map { "\(entity.name ?? "").\($0.name)" }
        }
        XCTAssertEqual(transientNames.sorted(), ["Car.currentDrivingSpeed", "Person.isDriving"])
        XCTAssertTrue(try loadCoreStore().entities.allSatisfy { $0.declaredProperties.allSatisfy { $0.isOptional && !$0.isTransient } })
    }

    // MARK: - Relationships

    func testCoreStoreSelfRelationshipsAndOrderedToMany() throws {
        let model = try loadCoreStore()
        let one = try XCTUnwrap(model.entitiesByName["TestEntity1AAA"])
        let two = try XCTUnwrap(model.entitiesByName["TestEntity2"])
        let unordered = try XCTUnwrap(one.relationshipsByName["testToManyUnordered"])
        let ordered = try XCTUnwrap(two.relationshipsByName["testToManyOrdered"])
        XCTAssertTrue(unordered.destinationEntity === one)
        XCTAssertTrue(ordered.destinationEntity === two)
        XCTAssertTrue(unordered.isToMany)
        XCTAssertFalse(unordered.isOrdered)
        XCTAssertTrue(ordered.isToMany)
        XCTAssertTrue(ordered.isOrdered)
        XCTAssertEqual(ordered.maxCount, 0)
        XCTAssertTrue(one.relationshipsByName["testToOne"]?.inverseRelationship === unordered)
        XCTAssertTrue(two.relationshipsByName["testToOne"]?.inverseRelationship === ordered)
        XCTAssertEqual(one.relationshipsByName["testToOne"]?.isToMany, false)
        XCTAssertEqual(one.relationshipsByName["testToOne"]?.maxCount, 1)
        XCTAssertEqual(one.relationships(forDestination: one).map(\.name), ["testToManyUnordered", "testToOne"])
        XCTAssertTrue(one.relationships(forDestination: two).isEmpty)
    }

    func testMagicalRecordRelationshipsWithoutInverses() throws {
        let model = try loadMagicalRecord()
        var seen: [String] = []
        for entity in model.entities {
            for case let relationship as NSRelationshipDescription in entity.declaredProperties {
                seen.append("\(entity.name ?? "").\(relationship.name)")
                XCTAssertNil(relationship.inverseRelationship, relationship.name)
                XCTAssertEqual(relationship.deleteRule, .cascadeDeleteRule, relationship.name)
                XCTAssertNotNil(relationship.destinationEntity, relationship.name)
            }
        }
        XCTAssertEqual(seen.sorted(), [
            "SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey.mappedEntities",
            "SingleEntityRelatedToMappedEntityUsingDefaults.mappedEntity",
            "SingleEntityRelatedToMappedEntityUsingMappedPrimaryKey.mappedEntity",
            "SingleEntityRelatedToMappedEntityWithNestedMappedAttributes.mappedEntity",
            "SingleEntityRelatedToMappedEntityWithSecondaryMappings.mappedRelationship",
            "SingleRelatedEntity.testAbstractToManyRelationship",
            "SingleRelatedEntity.testAbstractToOneRelationship",
            "SingleRelatedEntity.testConcreteToManyRelationship",
            "SingleRelatedEntity.testConcreteToOneRelationship",
        ])
        // minCount="1" maxCount="1" optional="YES": a to-one that is still optional, as written.
        let toOne = try XCTUnwrap(model.entitiesByName["SingleRelatedEntity"]?.relationshipsByName["testAbstractToOneRelationship"])
        XCTAssertEqual(toOne.minCount, 1)
        XCTAssertEqual(toOne.maxCount, 1)
        XCTAssertTrue(toOne.isOptional)
        XCTAssertFalse(toOne.isToMany)
        XCTAssertTrue(toOne.destinationEntity === model.entitiesByName["AbstractRelatedEntity"])
        // Nothing points at MappedEntity from MappedEntity's side.
        XCTAssertTrue(try XCTUnwrap(model.entitiesByName["MappedEntity"]).relationshipsByName.isEmpty)
    }

    func testSampleModel3RelationshipPairs() throws {
        let model = try loadSample("SampleModel3")
        let car = try XCTUnwrap(model.entitiesByName["Car"])
        let person = try XCTUnwrap(model.entitiesByName["Person"])
        let maker = try XCTUnwrap(model.entitiesByName["Maker"])
        let luxury = try XCTUnwrap(model.entitiesByName["LuxuryCar"])
        XCTAssertTrue(car.relationshipsByName["createdBy"]?.inverseRelationship === maker.relationshipsByName["cars"])
        XCTAssertTrue(car.relationshipsByName["owner"]?.inverseRelationship === person.relationshipsByName["cars"])
        XCTAssertTrue(car.relationshipsByName["previousOwners"]?.inverseRelationship === person.relationshipsByName["previousCars"])
        XCTAssertEqual(car.relationships(forDestination: person).map(\.name), ["owner", "previousOwners"])
        // A subentity sees the inherited relationships too.
        XCTAssertEqual(luxury.relationships(forDestination: person).map(\.name), ["owner", "previousOwners"])
        XCTAssertEqual(luxury.relationships(forDestination: maker).map(\.name), ["createdBy"])
        XCTAssertEqual(person.relationships(forDestination: car).map(\.name), ["cars", "previousCars"])
        XCTAssertTrue(person.relationships(forDestination: luxury).isEmpty, "destination must be the entity itself, not a subentity")
    }

    // MARK: - Inheritance

    func testSampleModel1ThreeLevelInheritance() throws {
        let model = try loadSample("SampleModel")
        let car = try XCTUnwrap(model.entitiesByName["Car"])
        let sport = try XCTUnwrap(model.entitiesByName["SportCar"])
        let expensive = try XCTUnwrap(model.entitiesByName["ExpensiveSportCar"])
        let person = try XCTUnwrap(model.entitiesByName["Person"])

        XCTAssertNil(car.superentity)
        XCTAssertTrue(sport.superentity === car)
        XCTAssertTrue(expensive.superentity === sport)
        XCTAssertEqual(car.subentities.count, 1)
        XCTAssertTrue(car.subentities.first === sport)
        XCTAssertTrue(sport.subentities.first === expensive)
        XCTAssertTrue(expensive.subentities.isEmpty)
        XCTAssertTrue(car.subentitiesByName["SportCar"] === sport)
        XCTAssertNil(car.subentitiesByName["ExpensiveSportCar"], "subentitiesByName holds direct subentities only")
        XCTAssertFalse(car.isAbstract || sport.isAbstract || expensive.isAbstract)

        let carNames = ["color", "currentDrivingSpeed", "maker", "markedForDeletionAsOf", "model", "numberPlate", "owner"]
        XCTAssertTrue(sport.declaredProperties.isEmpty)
        XCTAssertEqual(sport.properties.map(\.name), carNames)
        XCTAssertEqual(expensive.declaredProperties.map(\.name), ["isLimitedEdition"])
        XCTAssertEqual(expensive.properties.map(\.name), carNames + ["isLimitedEdition"])
        XCTAssertEqual(
            expensive.attributesByName.keys.sorted(),
            ["color", "currentDrivingSpeed", "isLimitedEdition", "maker", "markedForDeletionAsOf", "model", "numberPlate"])
        XCTAssertEqual(expensive.relationshipsByName.keys.sorted(), ["owner"])
        XCTAssertTrue(expensive.attributesByName["numberPlate"] === car.attributesByName["numberPlate"])
        XCTAssertTrue(expensive.attributesByName["numberPlate"]?.entity === car)
        XCTAssertTrue(sport.relationshipsByName["owner"]?.destinationEntity === person)
        XCTAssertNil(car.propertiesByName["isLimitedEdition"], "a superentity does not see a subentity's properties")

        XCTAssertTrue(expensive.isKindOf(entity: car))
        XCTAssertTrue(expensive.isKindOf(entity: sport))
        XCTAssertTrue(expensive.isKindOf(entity: expensive))
        XCTAssertFalse(car.isKindOf(entity: sport))
        XCTAssertFalse(expensive.isKindOf(entity: person))
    }

    func testSampleModel3LuxuryCarInheritsCarThroughSportCar() throws {
        let model = try loadSample("SampleModel3")
        let car = try XCTUnwrap(model.entitiesByName["Car"])
        let luxury = try XCTUnwrap(model.entitiesByName["LuxuryCar"])
        XCTAssertEqual(luxury.superentity?.name, "SportCar")
        XCTAssertEqual(luxury.superentity?.superentity?.name, "Car")
        XCTAssertEqual(
            luxury.properties.map(\.name),
            ["markedForDeletionAsOf", "model", "numberPlate", "createdBy", "owner", "previousOwners", "isLimitedEdition"])
        XCTAssertEqual(luxury.declaredProperties.map(\.name), ["isLimitedEdition"])
        for name in car.propertiesByName.keys {
            XCTAssertTrue(luxury.propertiesByName[name] === car.propertiesByName[name], name)
        }
    }

    func testMagicalRecordAbstractEntity() throws {
        let model = try loadMagicalRecord()
        let abstract = try XCTUnwrap(model.entitiesByName["AbstractRelatedEntity"])
        let concrete = try XCTUnwrap(model.entitiesByName["ConcreteRelatedEntity"])
        XCTAssertTrue(abstract.isAbstract)
        XCTAssertFalse(concrete.isAbstract)
        XCTAssertTrue(concrete.superentity === abstract)
        XCTAssertEqual(abstract.subentities.compactMap(\.name), ["ConcreteRelatedEntity"])
        XCTAssertEqual(concrete.properties.map(\.name), ["sampleBaseAttribute", "sampleConcreteAttribute"])
        XCTAssertEqual(concrete.declaredProperties.map(\.name), ["sampleConcreteAttribute"])
        XCTAssertEqual(concrete.attributesByName.keys.sorted(), ["sampleBaseAttribute", "sampleConcreteAttribute"])
        XCTAssertTrue(concrete.attributesByName["sampleBaseAttribute"]?.entity === abstract)
        XCTAssertEqual(model.entities.filter(\.isAbstract).compactMap(\.name), ["AbstractRelatedEntity"])
        XCTAssertEqual(model.entities.filter { $0.superentity != nil }.compactMap(\.name), ["ConcreteRelatedEntity"])
    }

    // MARK: - Constraints, indexes, renaming, identifiers, configurations, userInfo

    func testUniquenessConstraints() throws {
        let v1 = try loadSample("SampleModel")
        XCTAssertEqual(v1.entitiesByName["Car"]?.uniquenessConstraintNames, [["numberPlate"]])
        XCTAssertEqual(v1.entitiesByName["Person"]?.uniquenessConstraintNames, [["firstName", "lastName"]])
        XCTAssertEqual(v1.entitiesByName["SportCar"]?.uniquenessConstraintNames, [], "constraints are not inherited into the subentity's own list")
        XCTAssertEqual(v1.entitiesByName["Car"]?.uniquenessConstraints.first?.first as? String, "numberPlate")
        let v3 = try loadSample("SampleModel3")
        XCTAssertEqual(v3.entitiesByName["Maker"]?.uniquenessConstraintNames, [["name"]])
        XCTAssertEqual(v3.entitiesByName["Person"]?.uniquenessConstraintNames, [["firstName", "lastName"]])
        XCTAssertTrue(try loadCoreStore().entities.allSatisfy { $0.uniquenessConstraints.isEmpty })
        XCTAssertTrue(try loadMagicalRecord().entities.allSatisfy { $0.uniquenessConstraints.isEmpty })
    }

    func testFetchIndexOnlyInSampleModel2() throws {
        let v2 = try loadSample("SampleModel2")
        let car = try XCTUnwrap(v2.entitiesByName["Car"])
        XCTAssertEqual(car.indexes.count, 1)
        let index = try XCTUnwrap(car.indexes.first)
        XCTAssertEqual(index.name, "byMakerAndNumberPlate")
        XCTAssertEqual(index.elements.map(\.propertyName), ["maker", "numberPlate"])
        XCTAssertEqual(index.elements.map(\.collationType), [.binary, .binary])
        XCTAssertEqual(index.elements.map(\.isAscending), [true, true])
        XCTAssertTrue(index.entity === car)
        XCTAssertTrue(v2.entitiesByName["SportCar"]?.indexes.isEmpty ?? false, "indexes are not inherited")

        var indexed: [String] = []
        for model in [try loadSample("SampleModel"), v2, try loadSample("SampleModel3"), try loadCoreStore(), try loadMagicalRecord()] {
            for entity in model.entities where !entity.indexes.isEmpty {
                indexed.append("\(model.versionIdentifiers.first.map { "\($0)" } ?? "-").\(entity.name ?? "")")
            }
        }
        XCTAssertEqual(indexed, ["2.Car"])
    }

    func testRenamingIdentifiers() throws {
        for (name, expectedLuxury) in [("SampleModel2", "ExpensiveSportCar"), ("SampleModel3", "ExpensiveSportCar")] {
            let model = try loadSample(name)
            XCTAssertEqual(model.entitiesByName["LuxuryCar"]?.renamingIdentifier, expectedLuxury, name)
            let renamed = model.entities.filter { $0.renamingIdentifier != nil }.compactMap(\.name)
            XCTAssertEqual(renamed, ["LuxuryCar"], name)
        }
        let v1 = try loadSample("SampleModel")
        XCTAssertNil(v1.entitiesByName["ExpensiveSportCar"]?.renamingIdentifier)
        for model in [v1, try loadCoreStore(), try loadMagicalRecord()] {
            XCTAssertTrue(model.entities.allSatisfy { $0.renamingIdentifier == nil })
        }
        for name in ["SampleModel", "SampleModel2", "SampleModel3"] {
            let properties = try loadSample(name).entities.flatMap(\.declaredProperties)
            XCTAssertFalse(properties.isEmpty)
            XCTAssertTrue(properties.allSatisfy { $0.renamingIdentifier == nil }, name)
        }
    }

    func testVersionIdentifiers() throws {
        XCTAssertEqual(try loadSample("SampleModel").versionIdentifiers, ["1"])
        XCTAssertEqual(try loadSample("SampleModel2").versionIdentifiers, ["2"])
        XCTAssertEqual(try loadSample("SampleModel3").versionIdentifiers, ["3"])
        XCTAssertEqual(try loadSample("SampleModel").versionIdentifiers.first?.base as? String, "1")
        // userDefinedModelVersionIdentifier="" is no identifier, not an empty one.
        XCTAssertTrue(try loadCoreStore().versionIdentifiers.isEmpty)
        XCTAssertTrue(try loadMagicalRecord().versionIdentifiers.isEmpty)
    }

    func testCoreStoreConfigurations() throws {
        let model = try loadCoreStore()
        XCTAssertEqual(model.configurations, ["Config1", "Config2"])
        let config1 = try XCTUnwrap(model.entities(forConfigurationName: "Config1"))
        let config2 = try XCTUnwrap(model.entities(forConfigurationName: "Config2"))
        XCTAssertEqual(config1.compactMap(\.name), ["TestEntity1AAA"])
        XCTAssertEqual(config2.compactMap(\.name), ["TestEntity2"])
        XCTAssertTrue(config1.first === model.entitiesByName["TestEntity1AAA"])
        XCTAssertTrue(config2.first === model.entitiesByName["TestEntity2"])
        XCTAssertEqual(model.entities(forConfigurationName: nil)?.compactMap(\.name), ["TestEntity1AAA", "TestEntity2"])
        XCTAssertNil(model.entities(forConfigurationName: "Config3"))
        XCTAssertNil(model.entities(forConfigurationName: "config1"), "configuration names are case-sensitive")
        XCTAssertNil(model.entities(forConfigurationName: ""))
        for other in [try loadSample("SampleModel"), try loadMagicalRecord()] {
            XCTAssertEqual(other.configurations, [])
            XCTAssertEqual(other.entities(forConfigurationName: nil)?.count, other.entities.count)
        }
    }

    func testMagicalRecordUserInfoExactly() throws {
        let model = try loadMagicalRecord()
        func entity(_ name: String) throws -> NSEntityDescription { try XCTUnwrap(model.entitiesByName[name], name) }

        XCTAssertEqual(strings(try entity("MappedEntity").userInfo), ["relatedByAttribute": "mapped"])
        XCTAssertEqual(
            strings(try entity("SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey").userInfo),
            ["relatedByAttribute": "testPrimaryKey"])
        XCTAssertEqual(strings(try entity("MappedEntity").propertiesByName["nestedAttribute"]?.userInfo), ["mappedKeyName": "attributeValue.nestedValue"])
        XCTAssertEqual(strings(try entity("MappedEntity").propertiesByName["testMappedEntityID"]?.userInfo), ["mappedKeyName": "id"])
        XCTAssertEqual(
            strings(try entity("SingleEntityRelatedToMappedEntityUsingMappedPrimaryKey").propertiesByName["mappedEntity"]?.userInfo),
            ["mappedKeyName": "someRandomAttributeName", "relatedByAttribute": "testMappedEntityID"])
        let secondary = try entity("SingleEntityRelatedToMappedEntityWithSecondaryMappings")
        XCTAssertEqual(
            strings(secondary.propertiesByName["secondaryMappedAttribute"]?.userInfo),
            ["mappedKeyName": "no_in_use", "mappedKeyName.1": "getting_warmer", "mappedKeyName.2": "actualMappedKey"])
        XCTAssertEqual(
            strings(secondary.propertiesByName["mappedRelationship"]?.userInfo),
            ["mappedKeyName": "not_in_use", "mappedKeyName.1": "almost_there", "mappedKeyName.2": "actualRelatedObject"])
        let plain = try entity("SingleEntityWithNoRelationships")
        XCTAssertEqual(strings(plain.propertiesByName["dateWithCustomFormat"]?.userInfo), ["dateFormat": "M/d/yyyy H-mm-ss"])
        XCTAssertEqual(strings(plain.propertiesByName["unixTime13TestAttribute"]?.userInfo), ["dateFormat": "UnixTime"])
        XCTAssertEqual(strings(plain.propertiesByName["mappedStringAttribute"]?.userInfo), ["mappedKeyName": "mappedAttributeWithStringValue"])
        XCTAssertTrue(strings(plain.userInfo).isEmpty, "the entity itself has no <userInfo>")
        XCTAssertTrue(strings(plain.propertiesByName["stringTestAttribute"]?.userInfo).isEmpty)
        // Keys are Strings, values are Strings.
        let info = try XCTUnwrap(try entity("MappedEntity").userInfo)
        XCTAssertEqual(info.count, 1)
        XCTAssertEqual(info[AnyHashable("relatedByAttribute")] as? String, "mapped")

        // Count every entry in the file: 2 entity-level, 19 property-level.
        let entityEntries = model.entities.reduce(0) { $0 + ($1.userInfo?.count ?? 0) }
        let propertyEntries = model.entities.flatMap(\.declaredProperties).reduce(0) { $0 + ($1.userInfo?.count ?? 0) }
        XCTAssertEqual(entityEntries, 2)
        XCTAssertEqual(propertyEntries, 19)
    }

    func testElementsBlockIsIgnored() throws {
        let original = try loadMagicalRecord()
        var text = try fixtureText(Fixtures.magicalRecordModel.appendingPathComponent("TestModel.xcdatamodel/contents"))
        let start = try XCTUnwrap(text.range(of: "    <elements>"))
        let end = try XCTUnwrap(text.range(of: "</elements>\n"))
        text.removeSubrange(start.lowerBound..<end.upperBound)
        XCTAssertFalse(text.contains("<element "))
        let withoutElements = try loadEdited(text, name: "TestModel")
        assertConforms(withoutElements, to: Expected.magicalRecord, "MagicalRecord without <elements>")
        XCTAssertEqual(withoutElements.entityVersionHashesByName, original.entityVersionHashesByName)
        XCTAssertEqual(withoutElements.versionChecksum, original.versionChecksum)
        // The layout block named every entity, yet created nothing and no property called "element".
        XCTAssertEqual(original.entities.count, 12)
        XCTAssertTrue(original.entities.allSatisfy { $0.propertiesByName["element"] == nil && $0.propertiesByName["positionX"] == nil })
    }

    // MARK: - Version hashes

    func testEveryEntityHasOne32ByteHash() throws {
        for loaded in try allLoadedCases() {
            let hashes = loaded.model.entityVersionHashesByName
            XCTAssertEqual(hashes.keys.sorted(), loaded.expected.entities.map(\.name).sorted(), loaded.label)
            for (name, hash) in hashes {
                XCTAssertEqual(hash.count, 32, "\(loaded.label): \(name)")
                XCTAssertEqual(loaded.model.entitiesByName[name]?.versionHash, hash, "\(loaded.label): \(name)")
            }
            XCTAssertEqual(Set(hashes.values).count, hashes.count, "\(loaded.label): entity hashes are distinct")
            for entity in loaded.model.entities {
                for property in entity.declaredProperties {
                    XCTAssertEqual(property.versionHash.count, 32, "\(loaded.label): \(entity.name ?? "").\(property.name)")
                }
            }
            let checksum = try XCTUnwrap(Data(base64Encoded: loaded.model.versionChecksum), loaded.label)
            XCTAssertEqual(checksum.count, 16, loaded.label)
        }
    }

    func testLoadingTwiceGivesIdenticalHashes() throws {
        let first = try allLoadedCases()
        let second = try allLoadedCases()
        XCTAssertEqual(first.count, second.count)
        for (a, b) in zip(first, second) {
            XCTAssertEqual(a.label, b.label)
            XCTAssertFalse(a.model === b.model)
            XCTAssertEqual(a.model.entityVersionHashesByName, b.model.entityVersionHashesByName, a.label)
            XCTAssertEqual(a.model.versionChecksum, b.model.versionChecksum, a.label)
        }
        // Every way of loading the same version gives the same hashes.
        var byVersion: [String: [String: Data]] = [:]
        for loaded in first {
            let key = loaded.expected.entities.map(\.name).sorted().joined(separator: ",") + "#" + loaded.expected.versionIdentifiers.sorted().joined()
            if let known = byVersion[key] {
                XCTAssertEqual(loaded.model.entityVersionHashesByName, known, loaded.label)
            } else {
                byVersion[key] = loaded.model.entityVersionHashesByName
            }
        }
        XCTAssertEqual(byVersion.count, 5, "three SampleModel versions, CoreStore, MagicalRecord")
    }

    /// Across the real SampleModel versions, an entity keeps its hash exactly when its own stored
    /// properties and its superentity chain are unchanged (the signature written from the XML).
    func testHashesAcrossSampleModelVersionsFollowTheStructure() throws {
        let models = try Self.sampleVersions.map { (name: $0.name, expected: $0.expected, model: try loadSample($0.name)) }
        var compared = 0
        for i in models.indices {
            for j in models.indices where i < j {
                let (a, b) = (models[i], models[j])
                let common = Set(a.expected.entities.map(\.name)).intersection(b.expected.entities.map(\.name))
                for name in common.sorted() {
                    let sameStructure = a.expected.structuralSignature(name) == b.expected.structuralSignature(name)
                    let sameHash = a.model.entityVersionHashesByName[name] == b.model.entityVersionHashesByName[name]
                    XCTAssertEqual(sameHash, sameStructure, "\(a.name) vs \(b.name): \(name)")
                    compared += 1
                }
            }
        }
        XCTAssertEqual(compared, 3 + 4 + 3, "v1/v2: Car Person SportCar; v2/v3: Car LuxuryCar Person SportCar; v1/v3: Car Person SportCar")
    }

    func testNoEntityIsUnchangedBetweenSampleModelVersions() throws {
        let v1 = try loadSample("SampleModel").entityVersionHashesByName
        let v2 = try loadSample("SampleModel2").entityVersionHashesByName
        let v3 = try loadSample("SampleModel3").entityVersionHashesByName

        // v1 → v2: Car lost color and currentDrivingSpeed; Person lost id and isDriving;
        // SportCar declares nothing but its superentity Car changed; ExpensiveSportCar became LuxuryCar.
        for name in ["Car", "Person", "SportCar"] {
            XCTAssertNotNil(v1[name])
            XCTAssertNotEqual(v1[name], v2[name], name)
        }
        XCTAssertNotNil(v1["ExpensiveSportCar"])
        XCTAssertNil(v2["ExpensiveSportCar"])
        XCTAssertNil(v1["LuxuryCar"])
        XCTAssertNotEqual(v1["ExpensiveSportCar"], v2["LuxuryCar"], "same properties, new name")

        // v2 → v3: Car lost maker and gained createdBy/previousOwners; Person gained previousCars;
        // SportCar and LuxuryCar declare the same as before but inherit from the changed Car.
        for name in ["Car", "Person", "SportCar", "LuxuryCar"] {
            XCTAssertNotNil(v2[name])
            XCTAssertNotEqual(v2[name], v3[name], name)
        }
        XCTAssertNil(v1["Maker"])
        XCTAssertNil(v2["Maker"])
        XCTAssertNotNil(v3["Maker"])
        XCTAssertEqual(Set(v3.keys).subtracting(v2.keys), ["Maker"])
        XCTAssertTrue(Set(v3.values).isDisjoint(with: v2.values), "no entity is unchanged between SampleModel2 and SampleModel3")
        XCTAssertTrue(Set(v2.values).isDisjoint(with: v1.values), "no entity is unchanged between SampleModel and SampleModel2")
    }

    func testUnchangedPropertiesKeepTheirHashesAcrossVersions() throws {
        let m1 = try loadSample("SampleModel")
        let m2 = try loadSample("SampleModel2")
        let m3 = try loadSample("SampleModel3")
        let car1 = hashesOfDeclaredProperties(m1.entitiesByName["Car"])
        let car2 = hashesOfDeclaredProperties(m2.entitiesByName["Car"])
        let car3 = hashesOfDeclaredProperties(m3.entitiesByName["Car"])
        for name in ["markedForDeletionAsOf", "model", "numberPlate", "owner"] {
            XCTAssertNotNil(car1[name], name)
            XCTAssertEqual(car1[name], car2[name], name)
            XCTAssertEqual(car2[name], car3[name], name)
        }
        XCTAssertEqual(car1["maker"], car2["maker"])
        XCTAssertNotEqual(car1["model"], car1["maker"], "same type and flags, different names")

        let person1 = hashesOfDeclaredProperties(m1.entitiesByName["Person"])
        let person2 = hashesOfDeclaredProperties(m2.entitiesByName["Person"])
        let person3 = hashesOfDeclaredProperties(m3.entitiesByName["Person"])
        for name in ["firstName", "lastName", "updatedAt", "cars"] {
            XCTAssertEqual(person1[name], person2[name], name)
            XCTAssertEqual(person2[name], person3[name], name)
        }
        // Maker.cars and Person.cars share name, destination and to-many-ness but not the inverse.
        XCTAssertNotEqual(hashesOfDeclaredProperties(m3.entitiesByName["Maker"])["cars"], person3["cars"])

        // The renamed entity's own property is unchanged in all three versions ...
        let limited1 = hashesOfDeclaredProperties(m1.entitiesByName["ExpensiveSportCar"])["isLimitedEdition"]
        let limited2 = hashesOfDeclaredProperties(m2.entitiesByName["LuxuryCar"])["isLimitedEdition"]
        let limited3 = hashesOfDeclaredProperties(m3.entitiesByName["LuxuryCar"])["isLimitedEdition"]
        XCTAssertNotNil(limited1)
        XCTAssertEqual(limited1, limited2)
        XCTAssertEqual(limited2, limited3)
        // ... yet LuxuryCar's hash differs between v2 and v3, only because Car (its grandparent) changed.
        XCTAssertNotEqual(m2.entitiesByName["LuxuryCar"]?.versionHash, m3.entitiesByName["LuxuryCar"]?.versionHash)
    }

    /// Edits that do not change how objects are stored (class names, renaming identifiers, delete
    /// rules, indexes, constraints, userInfo) keep every hash; an edit to one entity changes that
    /// entity and its subentities only.
    func testHashesOfEditedCopiesOfSampleModel2() throws {
        let original = try loadSample("SampleModel2")
        let text = try fixtureText(Fixtures.sampleModel.appendingPathComponent("SampleModel2.xcdatamodel/contents"))
        let hashes = original.entityVersionHashesByName

        // 1. Storage-neutral edits.
        var neutral = edit(text, "representedClassName=\"LuxuryCar\"", "representedClassName=\"MyLuxuryCar\"")
        neutral = edit(neutral, " elementID=\"ExpensiveSportCar\"", "")
        neutral = edit(
            neutral,
            "deletionRule=\"Nullify\" destinationEntity=\"Car\" inverseName=\"owner\"",
            "deletionRule=\"Cascade\" destinationEntity=\"Car\" inverseName=\"owner\"")
        let indexStart = try XCTUnwrap(neutral.range(of: "        <fetchIndex name=\"byMakerAndNumberPlate\">"))
        let indexEnd = try XCTUnwrap(neutral.range(of: "</fetchIndex>\n"))
        neutral.removeSubrange(indexStart.lowerBound..<indexEnd.upperBound)
        neutral = edit(
            neutral, "<entity name=\"SportCar\" representedClassName=\"SportCar\" parentEntity=\"Car\" syncable=\"YES\"/>",
            "<entity name=\"SportCar\" representedClassName=\"SportCar\" parentEntity=\"Car\" syncable=\"YES\"><userInfo><entry key=\"k\" value=\"v\"/></userInfo></entity>")
        let neutralModel = try loadEdited(neutral, name: "Neutral")
        XCTAssertEqual(neutralModel.entitiesByName["LuxuryCar"]?.managedObjectClassName, "MyLuxuryCar")
        XCTAssertNil(neutralModel.entitiesByName["LuxuryCar"]?.renamingIdentifier)
        XCTAssertEqual(neutralModel.entitiesByName["Person"]?.relationshipsByName["cars"]?.deleteRule, .cascadeDeleteRule)
        XCTAssertTrue(neutralModel.entitiesByName["Car"]?.indexes.isEmpty ?? false)
        XCTAssertEqual(strings(neutralModel.entitiesByName["SportCar"]?.userInfo), ["k": "v"])
        XCTAssertEqual(neutralModel.entityVersionHashesByName, hashes, "storage-neutral edits keep every hash")
        XCTAssertEqual(neutralModel.versionChecksum, original.versionChecksum)

        // 2. Person.firstName becomes required: Person changes; Car and its subentities do not
        //    (Car.owner names Person but does not hash Person's structure).
        let personEdited = try loadEdited(
            edit(text, "<attribute name=\"firstName\" optional=\"YES\" attributeType=\"String\"/>", "<attribute name=\"firstName\" attributeType=\"String\"/>"),
            name: "PersonEdited")
        XCTAssertEqual(personEdited.entitiesByName["Person"]?.attributesByName["firstName"]?.isOptional, false)
        XCTAssertNotEqual(personEdited.entityVersionHashesByName["Person"], hashes["Person"])
        for name in ["Car", "SportCar", "LuxuryCar"] {
            XCTAssertEqual(personEdited.entityVersionHashesByName[name], hashes[name], name)
        }
        XCTAssertNotEqual(personEdited.versionChecksum, original.versionChecksum)

        // 3. Car.model becomes required: Car, SportCar and LuxuryCar change; Person does not.
        let carEdited = try loadEdited(
            edit(text, "<attribute name=\"model\" optional=\"YES\" attributeType=\"String\"/>", "<attribute name=\"model\" attributeType=\"String\"/>"),
            name: "CarEdited")
        for name in ["Car", "SportCar", "LuxuryCar"] {
            XCTAssertNotEqual(carEdited.entityVersionHashesByName[name], hashes[name], name)
        }
        XCTAssertEqual(carEdited.entityVersionHashesByName["Person"], hashes["Person"])

        // 4. The versionHashModifier attribute changes the hash of the entity it is on.
        let modified = try loadEdited(
            edit(text, "<entity name=\"Person\" representedClassName=\"Person\"", "<entity name=\"Person\" representedClassName=\"Person\" versionHashModifier=\"v2b\""),
            name: "Modified")
        XCTAssertEqual(modified.entitiesByName["Person"]?.versionHashModifier, "v2b")
        XCTAssertNotEqual(modified.entityVersionHashesByName["Person"], hashes["Person"])
        XCTAssertEqual(modified.entityVersionHashesByName["Car"], hashes["Car"])
    }

    // MARK: - Store compatibility

    func testCompatibilityWithOwnHashesAndWithAlteredMetadata() throws {
        for loaded in try allLoadedCases() {
            let model = loaded.model
            let label = loaded.label
            let hashes = model.entityVersionHashesByName
            XCTAssertTrue(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: hashes]), label)
            // Other metadata keys do not matter.
            XCTAssertTrue(model.isConfiguration(
                withName: nil,
                compatibleWithStoreMetadata: [
                    NSStoreModelVersionHashesKey: hashes, NSStoreModelVersionIdentifiersKey: ["whatever"], "NSStoreType": "SQLite",
                ]), label)
            // The hashes as an untyped dictionary, as read back from a store's metadata.
            let untyped: [String: Any] = hashes.mapValues { $0 as Any }
            XCTAssertTrue(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: untyped]), label)

            for name in hashes.keys.sorted() {
                var altered = hashes
                var bytes = [UInt8](hashes[name] ?? Data())
                bytes[0] ^= 0x01
                altered[name] = Data(bytes)
                XCTAssertFalse(
                    model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: altered]),
                    "\(label): altered \(name)")
                var missing = hashes
                missing[name] = nil
                XCTAssertFalse(
                    model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: missing]),
                    "\(label): missing \(name)")
                var renamed = missing
                renamed[name + "Renamed"] = hashes[name]
                XCTAssertFalse(
                    model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: renamed]),
                    "\(label): \(name) under another name")
            }
            var extra = hashes
            extra["GhostEntity"] = Data(repeating: 0xAB, count: 32)
            XCTAssertFalse(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: extra]), label)
            XCTAssertFalse(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [:]), "\(label): no hashes at all")
            XCTAssertFalse(
                model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: "not a dictionary"]), label)
            XCTAssertFalse(
                model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: [String: Data]()]), label)
            XCTAssertFalse(
                model.isConfiguration(withName: "NoSuchConfiguration", compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: hashes]),
                "\(label): unknown configuration")
            let stringly = hashes.mapValues { $0.base64EncodedString() }
            XCTAssertFalse(
                model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: stringly]),
                "\(label): hashes must be Data")
        }
    }

    func testSampleModelVersionsAreMutuallyIncompatible() throws {
        let models = try Self.sampleVersions.map { try loadSample($0.name) }
        for (i, model) in models.enumerated() {
            for (j, other) in models.enumerated() {
                let compatible = model.isConfiguration(
                    withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: other.entityVersionHashesByName])
                XCTAssertEqual(compatible, i == j, "model v\(i + 1) with a store of v\(j + 1)")
            }
        }
    }

    func testCoreStoreCompatibilityPerConfiguration() throws {
        let model = try loadCoreStore()
        let all = model.entityVersionHashesByName
        let one = try XCTUnwrap(all["TestEntity1AAA"])
        let two = try XCTUnwrap(all["TestEntity2"])
        func compatible(_ configuration: String?, _ hashes: [String: Data]) -> Bool {
            model.isConfiguration(withName: configuration, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: hashes])
        }
        XCTAssertTrue(compatible("Config1", ["TestEntity1AAA": one]))
        XCTAssertFalse(compatible("Config1", ["TestEntity2": two]))
        XCTAssertFalse(compatible("Config1", all), "a store of the whole model holds an entity Config1 does not")
        XCTAssertFalse(compatible("Config1", ["TestEntity1AAA": two]))
        XCTAssertTrue(compatible("Config2", ["TestEntity2": two]))
        XCTAssertFalse(compatible("Config2", ["TestEntity1AAA": one]))
        XCTAssertFalse(compatible("Config2", all))
        XCTAssertTrue(compatible(nil, all))
        XCTAssertFalse(compatible(nil, ["TestEntity1AAA": one]))
        XCTAssertFalse(compatible(nil, ["TestEntity2": two]))
        XCTAssertFalse(compatible("Config3", ["TestEntity1AAA": one]))
        XCTAssertFalse(compatible("Config3", all))
        var bytes = [UInt8](one)
        bytes[31] ^= 0x80
        XCTAssertFalse(compatible("Config1", ["TestEntity1AAA": Data(bytes)]))
        XCTAssertTrue(compatible("Config2", ["TestEntity2": two]), "Config2 is unaffected by a change to Config1's entity")
    }

    // MARK: - SampleModel3 built in code

    private enum CodeBuildVariant {
        case faithful
        /// `Car.numberPlate` left at the code default, optional (the file says required).
        case numberPlateLeftOptional
        /// `Car.owner` left at the code default maxCount 0, a to-many (the file says to-one).
        case ownerLeftToMany
    }

    /// SampleModel3.xcdatamodel/contents, rebuilt with the model API. Code defaults differ from file
    /// defaults (a new property is optional, a new relationship is an unbounded to-many), so every
    /// flag is set explicitly.
    private func buildSampleModel3(_ variant: CodeBuildVariant = .faithful) -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool, defaultValue: Any? = nil) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = optional
            attribute.isTransient = false
            attribute.defaultValue = defaultValue
            return attribute
        }
        func relationship(_ name: String, toMany: Bool) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.isOptional = true
            relationship.minCount = 0
            relationship.maxCount = toMany ? 0 : 1
            relationship.isOrdered = false
            relationship.deleteRule = .nullifyDeleteRule
            return relationship
        }
        func entity(_ name: String, _ properties: [NSPropertyDescription]) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = name
            entity.properties = properties
            return entity
        }

        let numberPlate: NSAttributeDescription
        if variant == .numberPlateLeftOptional {
            numberPlate = NSAttributeDescription()
            numberPlate.name = "numberPlate"
            numberPlate.attributeType = .stringAttributeType
        } else {
            numberPlate = attribute("numberPlate", .stringAttributeType, optional: false)
        }
        let carCreatedBy = relationship("createdBy", toMany: false)
        let carOwner: NSRelationshipDescription
        if variant == .ownerLeftToMany {
            carOwner = NSRelationshipDescription()
            carOwner.name = "owner"
        } else {
            carOwner = relationship("owner", toMany: false)
        }
        let carPreviousOwners = relationship("previousOwners", toMany: true)
        let car = entity("Car", [
            attribute("markedForDeletionAsOf", .dateAttributeType, optional: true),
            attribute("model", .stringAttributeType, optional: true),
            numberPlate, carCreatedBy, carOwner, carPreviousOwners,
        ])
        car.uniquenessConstraints = [["numberPlate"]]

        let sportCar = entity("SportCar", [])
        let luxuryCar = entity("LuxuryCar", [attribute("isLimitedEdition", .booleanAttributeType, optional: true, defaultValue: false)])
        luxuryCar.renamingIdentifier = "ExpensiveSportCar"
        car.subentities = [sportCar]
        sportCar.subentities = [luxuryCar]

        let makerCars = relationship("cars", toMany: true)
        let maker = entity("Maker", [attribute("name", .stringAttributeType, optional: false), makerCars])
        maker.uniquenessConstraints = [["name"]]

        let personCars = relationship("cars", toMany: true)
        let personPreviousCars = relationship("previousCars", toMany: true)
        let person = entity("Person", [
            attribute("firstName", .stringAttributeType, optional: true),
            attribute("lastName", .stringAttributeType, optional: true),
            attribute("updatedAt", .dateAttributeType, optional: false),
            personCars, personPreviousCars,
        ])
        person.uniquenessConstraints = [["firstName", "lastName"]]

        func link(_ a: NSRelationshipDescription, _ aDestination: NSEntityDescription, _ b: NSRelationshipDescription, _ bDestination: NSEntityDescription) {
            a.destinationEntity = aDestination
            b.destinationEntity = bDestination
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        link(carCreatedBy, maker, makerCars, car)
        link(carOwner, person, personCars, car)
        link(carPreviousOwners, person, personPreviousCars, car)

        let model = NSManagedObjectModel()
        model.entities = [car, luxuryCar, maker, person, sportCar]
        model.versionIdentifiers = ["3"]
        return model
    }

    func testSampleModel3BuiltInCodeMatchesTheFile() throws {
        let loaded = try loadSample("SampleModel3")
        let built = buildSampleModel3()
        assertConforms(built, to: Expected.sampleModel3, "SampleModel3 built in code")
        XCTAssertEqual(built.entityVersionHashesByName, loaded.entityVersionHashesByName)
        XCTAssertEqual(built.versionChecksum, loaded.versionChecksum)
        for entity in loaded.entities {
            let name = try XCTUnwrap(entity.name)
            XCTAssertEqual(
                hashesOfDeclaredProperties(built.entitiesByName[name]), hashesOfDeclaredProperties(entity),
                "property hashes of \(name)")
        }
        XCTAssertTrue(loaded.isConfiguration(
            withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: built.entityVersionHashesByName]))
        XCTAssertTrue(built.isConfiguration(
            withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: loaded.entityVersionHashesByName]))
        let checksums = try NSManagedObjectModel.checksumsForVersionedModel(at: Fixtures.sampleModel)
        XCTAssertEqual(checksums["SampleModel3"], built.versionChecksum)

        try built.freeze()
        XCTAssertTrue(built.isFrozen)
        XCTAssertEqual(built.entityVersionHashesByName, loaded.entityVersionHashesByName)
        XCTAssertEqual(built.versionChecksum, loaded.versionChecksum)
    }

    func testCodeDefaultsDifferFromFileDefaults() throws {
        let loaded = try loadSample("SampleModel3").entityVersionHashesByName

        // A property is optional unless told otherwise; the file's numberPlate is required.
        let optionalPlate = buildSampleModel3(.numberPlateLeftOptional)
        XCTAssertEqual(optionalPlate.entitiesByName["Car"]?.attributesByName["numberPlate"]?.isOptional, true)
        let plateHashes = optionalPlate.entityVersionHashesByName
        for name in ["Car", "SportCar", "LuxuryCar"] {
            XCTAssertNotEqual(plateHashes[name], loaded[name], name)
        }
        XCTAssertEqual(plateHashes["Person"], loaded["Person"])
        XCTAssertEqual(plateHashes["Maker"], loaded["Maker"])

        // A relationship is an unbounded to-many unless told otherwise; the file's owner is to-one.
        let manyOwners = buildSampleModel3(.ownerLeftToMany)
        let owner = try XCTUnwrap(manyOwners.entitiesByName["Car"]?.relationshipsByName["owner"])
        XCTAssertEqual(owner.maxCount, 0)
        XCTAssertTrue(owner.isToMany)
        XCTAssertTrue(owner.isOptional)
        let ownerHashes = manyOwners.entityVersionHashesByName
        for name in ["Car", "SportCar", "LuxuryCar"] {
            XCTAssertNotEqual(ownerHashes[name], loaded[name], name)
        }
        XCTAssertEqual(ownerHashes["Person"], loaded["Person"], "Person.cars hashes the inverse's name, not its counts")
        XCTAssertNotEqual(optionalPlate.versionChecksum, buildSampleModel3().versionChecksum)
        XCTAssertNotEqual(manyOwners.versionChecksum, buildSampleModel3().versionChecksum)
    }

    // MARK: - XcodeModelPackage

    func testSampleModelPackage() throws {
        let package = try XcodeModelPackage(contentsOf: Fixtures.sampleModel)
        XCTAssertEqual(package.url, Fixtures.sampleModel)
        XCTAssertEqual(package.versionNames, ["SampleModel", "SampleModel2", "SampleModel3"])
        XCTAssertEqual(package.currentVersionName, "SampleModel")
        XCTAssertEqual(package.versionURL(named: "SampleModel2").lastPathComponent, "SampleModel2.xcdatamodel")
        for name in package.versionNames {
            XCTAssertTrue(FileManager.default.fileExists(atPath: package.versionURL(named: name).appendingPathComponent("contents").path), name)
        }
        let current = try package.loadCurrentModel()
        assertConforms(current, to: Expected.sampleModel1, "loadCurrentModel")
        XCTAssertEqual(current.entityVersionHashesByName, try package.loadModel(version: "SampleModel").entityVersionHashesByName)
        XCTAssertEqual(current.entityVersionHashesByName, try XCTUnwrap(NSManagedObjectModel(contentsOf: Fixtures.sampleModel)).entityVersionHashesByName)
        XCTAssertThrowsError(try package.loadModel(version: "SampleModel4")) { error in
            XCTAssertEqual((error as? ModelError)?.code, .missingVersion)
        }
        XCTAssertThrowsError(try package.loadModel(version: "SampleModel.xcdatamodel")) { error in
            XCTAssertEqual((error as? ModelError)?.code, .missingVersion)
        }
    }

    func testSingleVersionPackagesWithoutCurrentVersionFile() throws {
        for (url, name, expected) in [
            (Fixtures.coreStoreModel, "Model", Expected.coreStore),
            (Fixtures.magicalRecordModel, "TestModel", Expected.magicalRecord),
        ] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: url.appendingPathComponent(".xccurrentversion").path))
            let package = try XcodeModelPackage(contentsOf: url)
            XCTAssertEqual(package.versionNames, [name])
            XCTAssertEqual(package.currentVersionName, name)
            assertConforms(try package.loadCurrentModel(), to: expected, "\(name) loadCurrentModel")
            let checksums = try NSManagedObjectModel.checksumsForVersionedModel(at: url)
            let currentChecksum = try package.loadCurrentModel().versionChecksum
            XCTAssertEqual(checksums, [name: currentChecksum])
        }
    }

    func testChecksumsForVersionedModel() throws {
        let checksums = try NSManagedObjectModel.checksumsForVersionedModel(at: Fixtures.sampleModel)
        XCTAssertEqual(checksums.keys.sorted(), ["SampleModel", "SampleModel2", "SampleModel3"])
        XCTAssertEqual(Set(checksums.values).count, 3, "three distinct checksums")
        for (name, checksum) in checksums {
            XCTAssertEqual(checksum, try loadSample(name).versionChecksum, name)
            XCTAssertEqual(Data(base64Encoded: checksum)?.count, 16, name)
        }
        XCTAssertEqual(try NSManagedObjectModel.checksumsForVersionedModel(at: Fixtures.sampleModel), checksums, "deterministic")
    }

    func testRenamedMomdCopyLoadsTheSame() throws {
        let folder = try makeTemporaryFolder()
        let copy = folder.appendingPathComponent("X.momd", isDirectory: true)
        try copyTree(Fixtures.sampleModel, to: copy)
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy.appendingPathComponent(".xccurrentversion").path))

        let package = try XcodeModelPackage(contentsOf: copy)
        XCTAssertEqual(package.versionNames, ["SampleModel", "SampleModel2", "SampleModel3"])
        XCTAssertEqual(package.currentVersionName, "SampleModel")

        let apple = try XCTUnwrap(NSManagedObjectModel(contentsOf: copy))
        let validating = try NSManagedObjectModel(validatingContentsOf: copy)
        let original = try XCTUnwrap(NSManagedObjectModel(contentsOf: Fixtures.sampleModel))
        assertConforms(apple, to: Expected.sampleModel1, "X.momd via init?(contentsOf:)")
        assertConforms(validating, to: Expected.sampleModel1, "X.momd via init(validatingContentsOf:)")
        XCTAssertEqual(apple.entityVersionHashesByName, original.entityVersionHashesByName)
        XCTAssertEqual(validating.versionChecksum, original.versionChecksum)

        for (name, expected) in Self.sampleVersions {
            let fromCopy = try package.loadModel(version: name)
            assertConforms(fromCopy, to: expected, "X.momd \(name)")
            XCTAssertEqual(fromCopy.entityVersionHashesByName, try loadSample(name).entityVersionHashesByName, name)
        }
        XCTAssertEqual(
            try NSManagedObjectModel.checksumsForVersionedModel(at: copy),
            try NSManagedObjectModel.checksumsForVersionedModel(at: Fixtures.sampleModel))
    }

    // MARK: - Freezing

    func testFreezeKeepsEveryLookup() throws {
        for loaded in try allLoadedCases() {
            let model = loaded.model
            let label = loaded.label
            let hashes = model.entityVersionHashesByName
            let checksum = model.versionChecksum
            let entityObjects = model.entitiesByName
            var lookups: [String: [String]] = [:]
            for entity in model.entities {
                let name = entity.name ?? ""
                lookups["\(name).properties"] = entity.properties.map(\.name)
                lookups["\(name).propertiesByName"] = entity.propertiesByName.keys.sorted()
                lookups["\(name).attributesByName"] = entity.attributesByName.keys.sorted()
                lookups["\(name).relationshipsByName"] = entity.relationshipsByName.keys.sorted()
            }

            XCTAssertFalse(model.isFrozen, label)
            try model.freeze()
            XCTAssertTrue(model.isFrozen, label)
            try model.freeze()  // a second freeze is a no-op
            XCTAssertTrue(model.isFrozen, label)

            assertConforms(model, to: loaded.expected, "\(label) after freeze()")
            XCTAssertEqual(model.entityVersionHashesByName, hashes, label)
            XCTAssertEqual(model.versionChecksum, checksum, label)
            XCTAssertEqual(model.entitiesByName.keys.sorted(), entityObjects.keys.sorted(), label)
            for (name, entity) in entityObjects {
                XCTAssertTrue(model.entitiesByName[name] === entity, "\(label): \(name) is the same object")
            }
            for entity in model.entities {
                let name = entity.name ?? ""
                XCTAssertEqual(entity.properties.map(\.name), lookups["\(name).properties"], "\(label): \(name)")
                XCTAssertEqual(entity.propertiesByName.keys.sorted(), lookups["\(name).propertiesByName"], "\(label): \(name)")
                XCTAssertEqual(entity.attributesByName.keys.sorted(), lookups["\(name).attributesByName"], "\(label): \(name)")
                XCTAssertEqual(entity.relationshipsByName.keys.sorted(), lookups["\(name).relationshipsByName"], "\(label): \(name)")
            }
            XCTAssertTrue(
                model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: hashes]), label)
        }
    }

    func testFreezeResolvesFetchIndexElements() throws {
        let model = try loadSample("SampleModel2")
        let car = try XCTUnwrap(model.entitiesByName["Car"])
        try model.freeze()
        let index = try XCTUnwrap(car.indexes.first)
        XCTAssertEqual(index.elements.map { $0.property?.name }, ["maker", "numberPlate"])
        XCTAssertTrue(index.elements[0].property === car.attributesByName["maker"])
        XCTAssertTrue(index.elements[1].property === car.attributesByName["numberPlate"])
    }

    func testFreezeOnCoreStoreKeepsConfigurations() throws {
        let model = try loadCoreStore()
        try model.freeze()
        XCTAssertEqual(model.configurations, ["Config1", "Config2"])
        XCTAssertEqual(model.entities(forConfigurationName: "Config1")?.compactMap(\.name), ["TestEntity1AAA"])
        XCTAssertEqual(model.entities(forConfigurationName: "Config2")?.compactMap(\.name), ["TestEntity2"])
        XCTAssertNil(model.entities(forConfigurationName: "Config3"))
        let one = try XCTUnwrap(model.entityVersionHashesByName["TestEntity1AAA"])
        XCTAssertTrue(model.isConfiguration(withName: "Config1", compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: ["TestEntity1AAA": one]]))
    }
}
