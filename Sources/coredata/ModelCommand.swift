import ArgumentParser
import CoreData

/// `coredata model PATH`: prints a model's entities, properties and version hashes, or the first
/// problem that stops it loading.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Load an Xcode model and print its entities and version hashes.",
        discussion: """
            PATH is a .xcdatamodeld package (its current version unless --version is given), a \
            .xcdatamodel folder, or a model's contents file. A model that does not load prints \
            file:line: element: problem and exits with status 1.
            """
    )

    @Argument(help: "The model to load.")
    var path: String

    @Option(name: .customLong("model-version"), help: "The version of a .xcdatamodeld package to load.")
    var modelVersion: String?

    func run() throws {
        let url = URL(fileURLWithPath: path)
        let model: NSManagedObjectModel
        do {
            if let modelVersion {
                model = try XcodeModelPackage(contentsOf: url).loadModel(version: modelVersion)
            } else {
                model = try NSManagedObjectModel(validatingContentsOf: url)
            }
        } catch {
            print("error: \(error)")
            throw ExitCode.failure
        }
        print("model \(path)")
        print("  versionChecksum \(model.versionChecksum)")
        if !model.versionIdentifiers.isEmpty {
            print("  versionIdentifiers \(model.versionIdentifiers.map { "\($0)" }.sorted().joined(separator: ", "))")
        }
        for configuration in model.configurations {
            let names = model.entities(forConfigurationName: configuration)?.compactMap(\.name) ?? []
            print("  configuration \(configuration): \(names.joined(separator: ", "))")
        }
        for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            var header = "  entity \(entity.name ?? "?")"
            if let parent = entity.superentity?.name { header += " : \(parent)" }
            if entity.isAbstract { header += " (abstract)" }
            print("\(header)  hash \(entity.versionHash.base64EncodedString())")
            for property in entity.declaredProperties {
                print("    \(describe(property))")
            }
            for constraint in entity.uniquenessConstraintNames {
                print("    unique (\(constraint.joined(separator: ", ")))")
            }
            for index in entity.indexes {
                print("    index \(index.name) (\(index.elements.map(\.description).joined(separator: ", ")))")
            }
        }
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
