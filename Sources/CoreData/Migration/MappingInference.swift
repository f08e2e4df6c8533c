import CoreDataModel
import Foundation

/// Infers a lightweight migration's mapping from two model versions, with Apple's rules (see
/// ``NSMappingModel/inferredMappingModel(forSourceModel:destinationModel:)``): it pairs entities
/// and properties by name or renaming identifier, and lists every change it cannot map.
///
/// Pure model work: no store, no objects.
struct MappingInference {
    let source: NSManagedObjectModel
    let destination: NSManagedObjectModel

    /// The mapping, and the changes that cannot be inferred (empty when the mapping is usable),
    /// each as `Entity.property: what changed`.
    func infer() -> (NSMappingModel, [String]) {
        var refusals: [String] = []
        var mappings: [NSEntityMapping] = []
        var matchedSources: Set<ObjectIdentifier> = []
        let destinations = destination.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
        for entity in destinations {
            guard let name = entity.name else { continue }
            let mapping = NSEntityMapping()
            mapping.destinationEntityName = name
            mapping.destinationEntityVersionHash = entity.versionHash
            guard let from = sourceEntity(for: entity) else {
                mapping.name = "Add\(name)"
                mapping.mappingType = .addEntityMappingType
                mappings.append(mapping)
                continue
            }
            matchedSources.insert(ObjectIdentifier(from))
            let fromName = from.name ?? ""
            mapping.name = "\(fromName)To\(name)"
            mapping.sourceEntityName = fromName
            mapping.sourceEntityVersionHash = from.versionHash
            mapping.mappingType = from.versionHash == entity.versionHash && fromName == name ? .copyEntityMappingType : .transformEntityMappingType
            var attributes: [NSPropertyMapping] = []
            var relationships: [NSPropertyMapping] = []
            for property in entity.properties.sorted(by: { $0.name < $1.name }) where !property.isTransient {
                let label = "\(name).\(property.name)"
                let old = sourceProperty(for: property, in: from)
                if let attribute = property as? NSAttributeDescription {
                    guard let old else {
                        // A derived attribute needs no default: the migration computes it.
                        if !attribute.isOptional && attribute.defaultValue == nil && !(attribute is NSDerivedAttributeDescription) {
                            refusals.append("\(label): a new mandatory attribute without a default value")
                        }
                        attributes.append(NSPropertyMapping(name: property.name, valueExpression: nil))
                        continue
                    }
                    guard let oldAttribute = old as? NSAttributeDescription else {
                        refusals.append("\(label): relationship → attribute")
                        continue
                    }
                    if !Self.converts(oldAttribute.attributeType, to: attribute.attributeType) {
                        refusals.append("\(label): \(oldAttribute.attributeType) → \(attribute.attributeType)")
                        continue
                    }
                    if oldAttribute.isOptional && !attribute.isOptional && attribute.defaultValue == nil && !(attribute is NSDerivedAttributeDescription) {
                        refusals.append("\(label): optional → mandatory without a default value")
                        continue
                    }
                    attributes.append(NSPropertyMapping(name: property.name, valueExpression: NSPropertyMapping.readingSource(old.name)))
                } else if let relationship = property as? NSRelationshipDescription {
                    guard let old else {
                        if !relationship.isOptional && relationship.minCount > 0 || !relationship.isOptional && !relationship.isToMany {
                            refusals.append("\(label): a new mandatory relationship")
                        }
                        relationships.append(NSPropertyMapping(name: property.name, valueExpression: nil))
                        continue
                    }
                    guard let oldRelationship = old as? NSRelationshipDescription else {
                        refusals.append("\(label): attribute → relationship")
                        continue
                    }
                    if let target = relationship.destinationEntity, let oldTarget = oldRelationship.destinationEntity {
                        let mappedTarget = sourceEntity(for: target)
                        let related = mappedTarget.map { $0.isKindOf(entity: oldTarget) || oldTarget.isKindOf(entity: $0) } ?? false
                        if !related {
                            refusals.append("\(label): destination \(oldTarget.name ?? "?") → \(target.name ?? "?")")
                            continue
                        }
                    }
                    if oldRelationship.isOptional && !relationship.isOptional && relationship.minCount > 0 {
                        refusals.append("\(label): optional → mandatory")
                        continue
                    }
                    relationships.append(NSPropertyMapping(name: property.name, valueExpression: NSPropertyMapping.migratedDestinations(relationship: old.name)))
                }
            }
            mapping.attributeMappings = attributes
            mapping.relationshipMappings = relationships
            mappings.append(mapping)
        }
        refusals += mergedHierarchies(destinations)
        for entity in source.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) where !matchedSources.contains(ObjectIdentifier(entity)) {
            guard let name = entity.name else { continue }
            let mapping = NSEntityMapping()
            mapping.name = "Remove\(name)"
            mapping.mappingType = .removeEntityMappingType
            mapping.sourceEntityName = name
            mapping.sourceEntityVersionHash = entity.versionHash
            mappings.append(mapping)
        }
        let model = NSMappingModel()
        model.entityMappings = mappings
        return (model, refusals)
    }

    /// The source entity a destination entity continues: the one its renaming identifier (or,
    /// without one, its name) names, or whose own renaming identifier is that name.
    func sourceEntity(for entity: NSEntityDescription) -> NSEntityDescription? {
        guard let key = entity.renamingIdentifier ?? entity.name else { return nil }
        if let named = source.entitiesByName[key] { return named }
        return source.entities.first { $0.renamingIdentifier == key }
    }

    /// The source property a destination property continues, found the same way; transient
    /// source properties hold nothing to migrate.
    func sourceProperty(for property: NSPropertyDescription, in entity: NSEntityDescription) -> NSPropertyDescription? {
        let key = property.renamingIdentifier ?? property.name
        if let named = entity.propertiesByName[key], !named.isTransient { return named }
        return entity.properties.first { !$0.isTransient && $0.renamingIdentifier == key }
    }

    /// Whether lightweight migration converts a stored value of one type to another: equal
    /// types, integers widening, Float to Double.
    static func converts(_ from: NSAttributeType, to: NSAttributeType) -> Bool {
        if from == to { return true }
        switch (from, to) {
        case (.integer16AttributeType, .integer32AttributeType), (.integer16AttributeType, .integer64AttributeType),
             (.integer32AttributeType, .integer64AttributeType), (.floatAttributeType, .doubleAttributeType):
            return true
        default:
            return false
        }
    }

    /// Apple's hierarchy rule: entities from separate source hierarchies cannot come to share a
    /// root in the destination (their objects would have to merge into one table of objects).
    private func mergedHierarchies(_ destinations: [NSEntityDescription]) -> [String] {
        var sourceRootsByDestinationRoot: [ObjectIdentifier: (name: String, roots: [String: String])] = [:]
        for entity in destinations {
            guard let from = sourceEntity(for: entity), let name = entity.name else { continue }
            let root = Self.root(of: entity)
            let sourceRoot = Self.root(of: from).name ?? ""
            var entry = sourceRootsByDestinationRoot[ObjectIdentifier(root)] ?? (root.name ?? "", [:])
            if entry.roots[sourceRoot] == nil { entry.roots[sourceRoot] = name }
            sourceRootsByDestinationRoot[ObjectIdentifier(root)] = entry
        }
        return sourceRootsByDestinationRoot.values.filter { $0.roots.count > 1 }.sorted { $0.name < $1.name }.map { entry in
            let members = entry.roots.sorted { $0.key < $1.key }.map { "\($0.value) (from the hierarchy of \($0.key))" }
            return "\(entry.name): entities of separate source hierarchies now share this parent: \(members.joined(separator: ", "))"
        }
    }

    private static func root(of entity: NSEntityDescription) -> NSEntityDescription {
        var root = entity
        while let parent = root.superentity { root = parent }
        return root
    }
}
