import ArgumentParser
import CoreData

/// `coredata model PATH`: a model's entities, properties, constraints, indexes and version
/// hashes, for every version of a package, or the first problem that stops it loading.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Load an Xcode model and print its entities, properties and version hashes.",
        discussion: """
            PATH is a .xcdatamodeld package (every version, the current one marked, unless \
            --model-version picks one), a .xcdatamodel folder, or a model's contents file; or \
            Xcode's compiled forms of these, a .momd folder or a .mom file. For \
            each entity: its parent, attributes, relationships (cardinality, destination, \
            inverse, delete rule), uniqueness constraints, fetch indexes and the version hashes \
            of the entity and each property (Base64). A model that does not load prints one line, \
            file:line: element: problem, on standard error and exits with status 6. \
            --changes-from VERSION prints what lightweight migration maps from VERSION to \
            --model-version (default: the current one), entity by entity, or every change it \
            cannot infer (status 9). --hashes prints only the version hashes as Apple's Core \
            Data computes them (Base64, as VersionInfo.plist and a store's metadata hold them): \
            each entity's and property's, the model's NSStoreModelVersionHashesDigest and \
            versionChecksum.

            Example:
              coredata model Library.xcdatamodeld
              coredata model Library.xcdatamodeld --model-version "Library 2" --json
              coredata model Library.xcdatamodeld --changes-from Library   # what v1 → current changes
              coredata model App.momd --hashes                                # Apple's version hashes
            """
    )

    @Argument(help: "The model to load.")
    var path: String

    @Option(name: .customLong("model-version"), help: "Only this version of a .xcdatamodeld package.")
    var modelVersion: String?

    @Option(name: .customLong("changes-from"), help: "Print what changes from this version of the package to --model-version (default: the current one), as lightweight migration maps it.")
    var changesFrom: String?

    @Flag(help: "Print only the version hashes, as Apple's Core Data computes them (Base64).")
    var hashes = false

    @Flag(help: "Print machine-readable JSON instead of text.")
    var json = false

    func run() throws {
        try reportingFailures {
            if let changesFrom { return try printChanges(from: changesFrom) }
            let versions = try loadVersions()
            if hashes { return printAppleHashes(versions) }
            if json {
                Console.print(JSONValue.object([
                    ("model", .string(path)),
                    ("versions", .array(versions.map { versionJSON($0.name, current: $0.current, model: $0.model) })),
                ]).pretty)
                return
            }
            Console.print("model \(path)")
            for version in versions {
                if let name = version.name {
                    Console.print("version \(name)\(version.current ? " (current)" : "")")
                }
                text(version.model, indent: version.name == nil ? "  " : "    ").forEach(Console.print)
            }
        }
    }

    /// `--hashes`: Apple's hashes of every version (`Formats/model-version-hash.md` §5).
    private func printAppleHashes(_ versions: [(name: String?, current: Bool, model: NSManagedObjectModel)]) {
        func properties(_ entity: NSEntityDescription) -> [NSPropertyDescription] {
            entity.properties.filter { !$0.isTransient }.sorted { $0.name < $1.name }
        }
        if json {
            Console.print(JSONValue.object([
                ("model", .string(path)),
                ("versions", .array(versions.map { version in
                    var members: [(String, JSONValue)] = []
                    if let name = version.name { members.append(("name", .string(name))) }
                    members += [
                        ("current", .bool(version.current)),
                        ("versionChecksum", .string(version.model.appleVersionChecksum)),
                        ("versionHashesDigest", .string(version.model.appleEntityVersionHashesDigest)),
                        ("entities", .array(sortedEntities(version.model).map { entity in
                            .object([
                                ("name", .string(entity.name ?? "")),
                                ("versionHash", .string(entity.appleVersionHash.base64EncodedString())),
                                ("properties", .array(properties(entity).map { property in
                                    .object([("name", .string(property.name)), ("versionHash", .string(property.appleVersionHash.base64EncodedString()))])
                                })),
                            ])
                        })),
                    ]
                    return .object(members)
                })),
            ]).pretty)
            return
        }
        Console.print("model \(path) (Apple's version hashes)")
        for version in versions {
            var indent = "  "
            if let name = version.name {
                Console.print("version \(name)\(version.current ? " (current)" : "")")
                indent = "    "
            }
            Console.print("\(indent)versionChecksum \(version.model.appleVersionChecksum)")
            Console.print("\(indent)versionHashesDigest \(version.model.appleEntityVersionHashesDigest)")
            for entity in sortedEntities(version.model) {
                Console.print("\(indent)entity \(entity.name ?? "?")  hash \(entity.appleVersionHash.base64EncodedString())")
                for property in properties(entity) {
                    Console.print("\(indent)  \(property.name)  hash \(property.appleVersionHash.base64EncodedString())")
                }
            }
        }
    }

    /// `--changes-from`: the inferred mapping between two versions, entity by entity, or every
    /// change inference refuses (status 9).
    private func printChanges(from source: String) throws(CLIError) {
        let package: XcodeModelPackage
        do { package = try XcodeModelPackage(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIError(.badModel, "--changes-from needs a versioned model package (.xcdatamodeld): \(error)")
        }
        let target = modelVersion ?? package.currentVersionName
        for name in [source, target] where !package.versionNames.contains(name) {
            throw CLIError(.badModel, "\(path) has no version \(name) (it has \(package.versionNames.joined(separator: ", ")))")
        }
        let from = try ModelLoading.load(path, version: source)
        let to = try ModelLoading.load(path, version: target)
        do {
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: from, destinationModel: to)
            if json {
                Console.print(JSONValue.object([
                    ("from", .string(source)), ("to", .string(target)), ("inferred", .bool(true)),
                    ("entities", .array((mapping.entityMappings ?? []).map { entityMapping in
                        .object([("kind", .string(MappingDescription.kind(entityMapping.mappingType))), ("entity", .string(MappingDescription.entities(entityMapping))),
                                 ("changes", .array(MappingDescription.changes(entityMapping, from: from).map(JSONValue.string)))])
                    })),
                ]).pretty)
            } else {
                Console.print("\(source) → \(target): lightweight migration maps it")
                MappingDescription.lines(mapping, from: from, indent: "  ").forEach(Console.print)
            }
        } catch {
            let changes = ((error as NSError).userInfo["changes"] as? [String]) ?? []
            throw CLIError(.migrationFailed, "\(source) → \(target) cannot be inferred: " + (changes.isEmpty ? (error as NSError).localizedDescription : changes.joined(separator: "; ")))
        }
    }

    /// The versions to print: every version of a package (or the one asked for), else the one model.
    private func loadVersions() throws(CLIError) -> [(name: String?, current: Bool, model: NSManagedObjectModel)] {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: path) else { throw CLIError(.badModel, "no such model: \(path)") }
        do {
            if let package = try? XcodeModelPackage(contentsOf: url), !package.versionNames.isEmpty {
                if let modelVersion {
                    guard package.versionNames.contains(modelVersion) else {
                        throw CLIError(.badModel, "\(path) has no version \(modelVersion) (it has \(package.versionNames.joined(separator: ", ")))")
                    }
                    return [(modelVersion, modelVersion == package.currentVersionName, try package.loadModel(version: modelVersion))]
                }
                return try package.versionNames.map { ($0, $0 == package.currentVersionName, try package.loadModel(version: $0)) }
            }
            if let modelVersion { throw CLIError(.badModel, "--model-version \(modelVersion): \(path) is not a .xcdatamodeld package") }
            return [(nil, true, try NSManagedObjectModel(validatingContentsOf: url))]
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(.badModel, "\(error)")
        }
    }

    private func sortedEntities(_ model: NSManagedObjectModel) -> [NSEntityDescription] {
        model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
    }

    private func text(_ model: NSManagedObjectModel, indent: String) -> [String] {
        var lines = ["\(indent)versionChecksum \(model.versionChecksum)"]
        if !model.versionIdentifiers.isEmpty {
            lines.append("\(indent)versionIdentifiers \(model.versionIdentifiers.map { "\($0)" }.sorted().joined(separator: ", "))")
        }
        for configuration in model.configurations {
            let names = model.entities(forConfigurationName: configuration)?.compactMap(\.name) ?? []
            lines.append("\(indent)configuration \(configuration): \(names.joined(separator: ", "))")
        }
        for entity in sortedEntities(model) {
            var header = "\(indent)entity \(entity.name ?? "?")"
            if let parent = entity.superentity?.name { header += " : \(parent)" }
            if entity.isAbstract { header += " (abstract)" }
            lines.append("\(header)  hash \(entity.versionHash.base64EncodedString())")
            for property in entity.declaredProperties {
                lines.append("\(indent)  \(describe(property))  hash \(property.versionHash.base64EncodedString())")
            }
            for constraint in entity.uniquenessConstraintNames {
                lines.append("\(indent)  unique (\(constraint.joined(separator: ", ")))")
            }
            for index in entity.indexes {
                lines.append("\(indent)  index \(index.name) (\(index.elements.map(\.description).joined(separator: ", ")))")
            }
        }
        return lines
    }

    private func versionJSON(_ name: String?, current: Bool, model: NSManagedObjectModel) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let name { members.append(("name", .string(name))) }
        members += [
            ("current", .bool(current)),
            ("versionChecksum", .string(model.versionChecksum)),
            ("versionIdentifiers", .array(model.versionIdentifiers.map { .string("\($0)") }.sorted { $0.compact < $1.compact })),
            ("entities", .array(sortedEntities(model).map(entityJSON))),
        ]
        return .object(members)
    }

    private func entityJSON(_ entity: NSEntityDescription) -> JSONValue {
        var attributes: [JSONValue] = []
        var relationships: [JSONValue] = []
        for property in entity.declaredProperties {
            let common: [(String, JSONValue)] = [
                ("name", .string(property.name)), ("optional", .bool(property.isOptional)),
                ("transient", .bool(property.isTransient)), ("versionHash", .string(property.versionHash.base64EncodedString())),
            ]
            switch property {
            case let attribute as NSAttributeDescription:
                attributes.append(.object(common + [("type", .string(attribute.attributeType.xcodeName))]))
            case let relationship as NSRelationshipDescription:
                relationships.append(.object(common + [
                    ("destination", relationship.destinationEntity?.name.map(JSONValue.string) ?? .null),
                    ("inverse", relationship.inverseRelationship.map { .string($0.name) } ?? .null),
                    ("toMany", .bool(relationship.isToMany)), ("ordered", .bool(relationship.isOrdered)),
                    ("deleteRule", .string("\(relationship.deleteRule)")),
                ]))
            default:
                continue
            }
        }
        return .object([
            ("name", .string(entity.name ?? "")),
            ("parent", entity.superentity?.name.map(JSONValue.string) ?? .null),
            ("abstract", .bool(entity.isAbstract)),
            ("versionHash", .string(entity.versionHash.base64EncodedString())),
            ("attributes", .array(attributes)),
            ("relationships", .array(relationships)),
            ("uniquenessConstraints", .array(entity.uniquenessConstraintNames.map { .array($0.map(JSONValue.string)) })),
            ("indexes", .array(entity.indexes.map { index in
                .object([("name", .string(index.name)), ("elements", .array(index.elements.map { .string($0.description) }))])
            })),
        ])
    }

    private func describe(_ property: NSPropertyDescription) -> String {
        let flags = (property.isOptional ? " optional" : "") + (property.isTransient ? " transient" : "")
        switch property {
        case let attribute as NSAttributeDescription:
            return "\(attribute.name): \(attribute.attributeType.xcodeName)\(flags)"
        case let relationship as NSRelationshipDescription:
            let cardinality = relationship.isToMany ? (relationship.isOrdered ? "ordered to-many" : "to-many") : "to-one"
            let inverse = relationship.inverseRelationship.map { " inverse \($0.name)" } ?? " no inverse"
            return "\(relationship.name): \(cardinality) \(relationship.destinationEntity?.name ?? "?")\(inverse), \(relationship.deleteRule)\(flags)"
        default:
            return "\(property.name): fetched property\(flags)"
        }
    }
}
