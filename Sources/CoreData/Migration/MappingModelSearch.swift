import CoreDataModel
import CoreDataPredicate
import Foundation

/// Finds the mapping model file for a pair of model versions among the `.cdm` and
/// `.xcmappingmodel` files of some folders (a bundle's resources, the folder of the model's
/// `.xcdatamodeld`, as Xcode projects keep them side by side).
enum MappingModelSearch {
    /// The mapping model files directly in `folders`, sorted by path so the search is repeatable.
    static func files(in folders: [URL]) -> [URL] {
        var files: [URL] = []
        for folder in folders {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { continue }
            // A bundle's resources (an executable's folder, for a command-line tool) may hold many
            // files: names are screened before any URL is made.
            for name in names.sorted() where name.hasSuffix("." + MappingModelFile.sourceExtension) || name.hasSuffix("." + MappingModelFile.compiledExtension) {
                let url = folder.appendingPathComponent(name)
                if !files.contains(where: { $0.standardizedFileURL == url.standardizedFileURL }) { files.append(url) }
            }
        }
        return files
    }

    /// The first mapping model in `folders` that fits `source` → `destination`; `nil` when none.
    /// A `.xcmappingmodel` names the versions it was made for: when `names` are given, it must
    /// name those (`Model 2.xcdatamodel`); a file that cannot be read is skipped.
    static func find(
        in folders: [URL], from source: NSManagedObjectModel, to destination: NSManagedObjectModel, names: (source: String, destination: String)? = nil
    ) -> NSMappingModel? {
        load(in: folders).first { fits($0, from: source, to: destination, names: names) }
    }

    /// Every readable mapping model in `folders`, read once for a search over several pairs of
    /// versions; a file that cannot be read is skipped.
    static func load(in folders: [URL]) -> [NSMappingModel] {
        files(in: folders).compactMap { try? MappingModelFile.load($0) }
    }

    /// `Model 2` for `…/Model.xcdatamodeld/Model 2.xcdatamodel`.
    static func versionName(_ path: String) -> String {
        URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
    }

    /// Whether `mapping` was made for these two models, judged by names (see
    /// ``NSMappingModel/init(from:forSourceModel:destinationModel:)``).
    static func fits(
        _ mapping: NSMappingModel, from source: NSManagedObjectModel, to destination: NSManagedObjectModel, names: (source: String, destination: String)? = nil
    ) -> Bool {
        if let names, let sourcePath = mapping.sourceModelPath, let destinationPath = mapping.destinationModelPath {
            guard versionName(sourcePath) == names.source, versionName(destinationPath) == names.destination else { return false }
        }
        var mappedSources = Set<String>()
        for entityMapping in mapping.entityMappings ?? [] {
            var sourceEntity: NSEntityDescription?
            if let name = entityMapping.sourceEntityName {
                guard let entity = source.entitiesByName[name] else { return false }
                sourceEntity = entity
                mappedSources.insert(name)
            }
            guard let name = entityMapping.destinationEntityName else { continue }
            guard let entity = destination.entitiesByName[name] else { return false }
            for property in (entityMapping.attributeMappings ?? []) + (entityMapping.relationshipMappings ?? []) {
                guard let key = property.name, entity.propertiesByName[key] != nil else { return false }
                if let sourceEntity, let read = property.sourceKey, sourceEntity.propertiesByName[read] == nil { return false }
            }
        }
        return mappedSources == Set(source.entities.compactMap(\.name))
    }
}

extension NSMappingModel {
    /// Gives each property mapping that ``NSPropertyMapping/generatesExpression`` the expression
    /// Xcode's compiler writes for it: `$source.key` for an attribute the source entity has; for a
    /// relationship it has, `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:",
    /// "Mapping", $source.key)` when one entity mapping makes the relationship's destination
    /// objects, else `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
    /// "key", $source.key)`; nothing for a property the source entity does not have.
    func resolveGeneratedExpressions(from sourceModel: NSManagedObjectModel, to destinationModel: NSManagedObjectModel) {
        let mappings = entityMappings ?? []
        for entityMapping in mappings {
            let sourceEntity = entityMapping.sourceEntityName.flatMap { sourceModel.entitiesByName[$0] }
            let destinationEntity = entityMapping.destinationEntityName.flatMap { destinationModel.entitiesByName[$0] }
            for property in entityMapping.attributeMappings ?? [] where property.generatesExpression {
                property.generatesExpression = false
                guard let key = property.name, sourceEntity?.attributesByName[key] != nil else { continue }
                property.valueExpression = NSExpression.keyPath(key, operand: NSExpression(forVariable: NSMigrationSourceObjectKey))
            }
            for property in entityMapping.relationshipMappings ?? [] where property.generatesExpression {
                property.generatesExpression = false
                guard let key = property.name, sourceEntity?.relationshipsByName[key] != nil,
                      let relationship = destinationEntity?.relationshipsByName[key], let target = relationship.destinationEntity
                else { continue }
                let read = NSExpression.keyPath(key, operand: NSExpression(forVariable: NSMigrationSourceObjectKey))
                let makers = mappings.filter { mapping in
                    guard let name = mapping.destinationEntityName, let entity = destinationModel.entitiesByName[name] else { return false }
                    return entity.isKindOf(entity: target)
                }
                let manager = NSExpression(forVariable: NSMigrationManagerKey)
                if makers.count == 1, let name = makers[0].name {
                    property.valueExpression = NSExpression(
                        forFunction: manager, selectorName: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                        arguments: [NSExpression(forConstantValue: name), read])
                } else {
                    property.valueExpression = NSExpression(
                        forFunction: manager, selectorName: "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
                        arguments: [NSExpression(forConstantValue: key), read])
                }
            }
        }
    }
}
