import Foundation

/// The rules a model must keep before a coordinator uses it, checked the same way for a model
/// loaded from a file and one built in code.
///
/// Reports the first broken rule, walking entities and properties in model order so that the
/// same model always gives the same error.
enum ModelConsistency {
    static func check(_ model: NSManagedObjectModel) throws(ModelError) {
        let members = Set(model.entities.map(ObjectIdentifier.init))
        var names = Set<String>()
        for entity in model.entities {
            guard let name = entity.name, !name.isEmpty else {
                throw ModelError(.missingAttribute, "an entity has no name")
            }
            guard names.insert(name).inserted else {
                throw ModelError(.duplicateEntity, "the model has two entities named '\(name)'", entityName: name)
            }
        }
        for entity in model.entities {
            try checkInheritance(entity, members: members)
        }
        for entity in model.entities {
            try checkProperties(entity, members: members)
            try checkConstraints(entity)
        }
        for configuration in model.configurations {
            for member in model.entities(forConfigurationName: configuration) ?? [] {
                guard members.contains(ObjectIdentifier(member)) else {
                    throw ModelError(
                        .missingEntity,
                        "configuration '\(configuration)' names entity '\(member.name ?? "unnamed")', which is not in the model")
                }
            }
        }
        for (requestName, request) in model.fetchRequestDescriptionsByName.sorted(by: { $0.key < $1.key }) {
            guard model.entitiesByName[request.entityName] != nil else {
                throw ModelError(
                    .missingEntity,
                    "fetch request '\(requestName)' fetches entity '\(request.entityName)', which is not in the model")
            }
        }
    }

    private static func checkInheritance(_ entity: NSEntityDescription, members: Set<ObjectIdentifier>) throws(ModelError) {
        let name = entity.name ?? ""
        var seen: Set<ObjectIdentifier> = [ObjectIdentifier(entity)]
        var path = [name]
        var current = entity.superentity
        while let ancestor = current {
            path.append(ancestor.name ?? "unnamed")
            guard seen.insert(ObjectIdentifier(ancestor)).inserted else {
                throw ModelError(
                    .inheritanceCycle, "entity inheritance forms a cycle: \(path.joined(separator: " → "))",
                    entityName: name)
            }
            guard members.contains(ObjectIdentifier(ancestor)) else {
                throw ModelError(
                    .missingEntity, "superentity '\(ancestor.name ?? "unnamed")' is not in the model", entityName: name)
            }
            current = ancestor.superentity
        }
    }

    private static func checkProperties(_ entity: NSEntityDescription, members: Set<ObjectIdentifier>) throws(ModelError) {
        let entityName = entity.name ?? ""
        var seen = Set<String>()
        for property in entity.properties {
            guard !property.name.isEmpty else {
                throw ModelError(.missingAttribute, "a property has no name", entityName: entityName)
            }
            guard seen.insert(property.name).inserted else {
                throw ModelError(
                    .duplicateProperty,
                    "two properties are named '\(property.name)' (inherited properties included)",
                    entityName: entityName, propertyName: property.name)
            }
        }
        for property in entity.declaredProperties {
            if let derived = property as? NSDerivedAttributeDescription {
                try DerivationCheck.check(derived, of: entity)
            } else if let composite = property as? NSCompositeAttributeDescription {
                try checkComposite(composite, of: entity)
            }
            if let relationship = property as? NSRelationshipDescription {
                try checkRelationship(relationship, of: entity, members: members)
            } else if let fetched = property as? NSFetchedPropertyDescription,
                      let target = fetched.fetchRequestDescription?.entityName,
                      entity.managedObjectModel?.entitiesByName[target] == nil {
                throw ModelError(
                    .missingEntity, "fetched property fetches entity '\(target)', which is not in the model",
                    entityName: entityName, propertyName: fetched.name)
            }
        }
    }

    private static func checkRelationship(
        _ relationship: NSRelationshipDescription, of entity: NSEntityDescription, members: Set<ObjectIdentifier>
    ) throws(ModelError) {
        let entityName = entity.name ?? ""
        func failure(_ code: ModelError.Code, _ message: String) -> ModelError {
            ModelError(code, message, entityName: entityName, propertyName: relationship.name)
        }
        guard let destination = relationship.destinationEntity else {
            throw failure(.missingEntity, "relationship has no destination entity")
        }
        guard members.contains(ObjectIdentifier(destination)) else {
            throw failure(.missingEntity, "destination entity '\(destination.name ?? "unnamed")' is not in the model")
        }
        guard relationship.minCount >= 0, relationship.maxCount >= 0 else {
            throw failure(.invalidCount, "minCount and maxCount must not be negative")
        }
        if relationship.maxCount > 0 && relationship.minCount > relationship.maxCount {
            throw failure(
                .invalidCount, "minCount \(relationship.minCount) is larger than maxCount \(relationship.maxCount)")
        }
        if relationship.isOrdered && !relationship.isToMany {
            throw failure(.invalidCount, "only a to-many relationship can be ordered")
        }
        guard let inverse = relationship.inverseRelationship else { return }
        guard let inverseOwner = inverse.entity, destination.isKindOf(entity: inverseOwner) else {
            throw failure(
                .invalidInverse,
                "inverse '\(inverse.name)' belongs to '\(inverse.entity?.name ?? "no entity")', "
                    + "not to the destination '\(destination.name ?? "unnamed")' or its superentities")
        }
        guard inverse.inverseRelationship === relationship else {
            let back = inverse.inverseRelationship.map { "'\($0.entity?.name ?? "?").\($0.name)'" } ?? "nothing"
            throw failure(
                .invalidInverse,
                "inverse '\(inverseOwner.name ?? "?").\(inverse.name)' does not point back: its inverse is \(back)")
        }
    }

    /// Apple's rule: a composite holds plain attributes (or composites) of any type but
    /// undefined and object ID, and no external binary data.
    private static func checkComposite(_ composite: NSCompositeAttributeDescription, of entity: NSEntityDescription) throws(ModelError) {
        func failure(_ message: String) -> ModelError {
            ModelError(.invalidValue, message, entityName: entity.name ?? "", propertyName: composite.name)
        }
        guard !composite.elements.isEmpty else { throw failure("composite attribute '\(composite.name)' has no elements") }
        var names = Set<String>()
        for element in composite.elements {
            guard !element.name.isEmpty, !element.name.contains(".") else {
                throw failure("an element of composite attribute '\(composite.name)' has no name, or a name with a '.'")
            }
            guard names.insert(element.name).inserted else {
                throw failure("composite attribute '\(composite.name)' has two elements named '\(element.name)'")
            }
            if element is NSDerivedAttributeDescription {
                throw failure("element '\(element.name)' of composite attribute '\(composite.name)' is derived; composites hold plain attributes")
            }
            switch element.attributeType {
            case .undefinedAttributeType, .objectIDAttributeType:
                throw failure("element '\(element.name)' of composite attribute '\(composite.name)' is \(element.attributeType.xcodeName), which a composite cannot hold")
            case .binaryDataAttributeType where element.allowsExternalBinaryDataStorage:
                throw failure("element '\(element.name)' of composite attribute '\(composite.name)' allows external binary storage, which a composite cannot hold")
            case .compositeAttributeType:
                guard let nested = element as? NSCompositeAttributeDescription else {
                    throw failure("element '\(element.name)' of composite attribute '\(composite.name)' is Composite but not an NSCompositeAttributeDescription")
                }
                try checkComposite(nested, of: entity)
            default:
                break
            }
        }
    }

    private static func checkConstraints(_ entity: NSEntityDescription) throws(ModelError) {
        let entityName = entity.name ?? ""
        let properties = entity.propertiesByName
        for group in entity.uniquenessConstraints {
            for element in group {
                let name: String
                if let string = element as? String {
                    name = string
                } else if let property = element as? NSPropertyDescription {
                    name = property.name
                } else {
                    throw ModelError(
                        .invalidValue, "a uniqueness constraint holds \(type(of: element)), not a property name",
                        entityName: entityName)
                }
                guard let property = properties[name] else {
                    throw ModelError(
                        .missingProperty, "uniqueness constraint names '\(name)', which the entity does not have",
                        entityName: entityName, propertyName: name)
                }
                if let relationship = property as? NSRelationshipDescription, relationship.isToMany {
                    throw ModelError(
                        .invalidValue, "a uniqueness constraint cannot use the to-many relationship '\(name)'",
                        entityName: entityName, propertyName: name)
                }
            }
        }
        for index in entity.indexes {
            for element in index.elements where properties[element.propertyName] == nil {
                throw ModelError(
                    .missingProperty,
                    "fetch index '\(index.name)' names '\(element.propertyName)', which the entity does not have",
                    entityName: entityName, propertyName: element.propertyName)
            }
        }
    }
}
