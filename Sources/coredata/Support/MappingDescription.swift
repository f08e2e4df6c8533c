import CoreData

/// How `migrate` and `model --changes-from` describe a mapping model, entity by entity.
enum MappingDescription {
    /// The word for what an entity mapping does.
    static func kind(_ type: NSEntityMappingType) -> String {
        switch type {
        case .copyEntityMappingType: return "copy"
        case .transformEntityMappingType: return "change"
        case .addEntityMappingType: return "add"
        case .removeEntityMappingType: return "remove"
        case .customEntityMappingType: return "custom"
        case .undefinedEntityMappingType: return "undefined"
        }
    }

    /// The entity a mapping moves, and its new name when it is renamed.
    static func entities(_ mapping: NSEntityMapping) -> String {
        switch (mapping.sourceEntityName, mapping.destinationEntityName) {
        case (let source?, let destination?) where source != destination: return "\(source) → \(destination) (renamed)"
        case (_, let destination?): return destination
        case (let source?, nil): return source
        default: return mapping.name ?? "?"
        }
    }

    /// The properties a changed entity mapping renames, adds and removes.
    static func changes(_ mapping: NSEntityMapping, from sourceModel: NSManagedObjectModel) -> [String] {
        guard mapping.mappingType == .transformEntityMappingType,
              let source = mapping.sourceEntityName.flatMap({ sourceModel.entitiesByName[$0] }) else { return [] }
        var changes: [String] = []
        var read: Set<String> = []
        for property in (mapping.attributeMappings ?? []) + (mapping.relationshipMappings ?? []) {
            guard let name = property.name else { continue }
            if let key = property.sourceKey {
                read.insert(key)
                if key != name { changes.append("\(key) renamed \(name)") }
            } else {
                changes.append("\(name) added")
            }
        }
        for property in source.properties.sorted(by: { $0.name < $1.name }) where !property.isTransient && !read.contains(property.name) {
            changes.append("\(property.name) removed")
        }
        return changes
    }

    /// One line per entity mapping: what it does, to which entity, and what changes.
    static func lines(_ mapping: NSMappingModel, from sourceModel: NSManagedObjectModel, indent: String) -> [String] {
        (mapping.entityMappings ?? []).map { entityMapping in
            let changes = Self.changes(entityMapping, from: sourceModel)
            let policy = entityMapping.entityMigrationPolicyClassName.map { " (policy \($0))" } ?? ""
            return "\(indent)\(kind(entityMapping.mappingType)) \(entities(entityMapping))\(policy)" + (changes.isEmpty ? "" : ": " + changes.joined(separator: "; "))
        }
    }
}
