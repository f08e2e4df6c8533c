import Foundation

extension NSManagedObjectModel {
    /// Creates one model holding the entities of all `models` (Apple's `init(byMerging:)`), as
    /// when models of several frameworks are combined for one coordinator.
    ///
    /// The merged model holds copies: entities, properties, inheritance, relationships (with
    /// their inverses), uniqueness constraints, indexes, configurations (same-named ones are
    /// joined), fetch request templates, version identifiers and localizations. The given models
    /// are left as they were (an entity belongs to one model), and each copied entity has the
    /// version hash of its original, so stores saved with the original models open with the
    /// merged one. `nil` or an empty array gives an empty model.
    ///
    /// Returns `nil` when the models cannot be combined: two declare an entity of the same name,
    /// or a fetch request template of the same name with different contents. (Apple raises an
    /// exception for the first.)
    /// Complexity: linear in the size of the models.
    public convenience init?(byMerging models: [NSManagedObjectModel]?) {
        self.init()
        var merger = ModelMerger(into: self, keepingFirstOfEachEntityName: false)
        guard merger.merge(models ?? []) else { return nil }
    }

    /// Creates one model from the entities of `models` that match the version hashes a store
    /// recorded in `metadata` (Apple's `init(byMerging:forStoreMetadata:)`): the model to open
    /// that store with, picked from several versions of the app's models.
    ///
    /// A model takes part when each of its entities has the hash the metadata records under its
    /// name (ours or Apple's: a store Core Data wrote on an Apple platform records Apple's, see
    /// ``NSEntityDescription/matchesVersionHash(_:)``); where models that take part share an
    /// entity (two versions that did not change it), the first one's is used. Returns `nil`
    /// when the metadata records no version hashes, or when the entities taken do not match the
    /// metadata exactly (an entity of the store is in no model, or in none with its hash).
    public convenience init?(byMerging models: [NSManagedObjectModel], forStoreMetadata metadata: [String: Any]) {
        self.init()
        guard let recorded = metadata[NSStoreModelVersionHashesKey] as? [String: Any] else { return nil }
        let matching = models.filter { model in
            model.entities.allSatisfy { entity in
                guard let name = entity.name, let hash = recorded[name] as? Data else { return false }
                return entity.matchesVersionHash(hash)
            }
        }
        var merger = ModelMerger(into: self, keepingFirstOfEachEntityName: true)
        guard merger.merge(matching), isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        else { return nil }
    }

    /// The model a store whose metadata is `metadata` was saved with, merged from every model
    /// version found in the bundles' resources (Apple's `mergedModel(from:forStoreMetadata:)`);
    /// `nil` for `bundles` means the main bundle.
    ///
    /// Unlike ``mergedModel(from:)``, which reads each package's current version, this reads
    /// every version of each `.xcdatamodeld` (or `.momd`) package, so the version an older store
    /// was saved with is found; the versions are then combined as
    /// ``init(byMerging:forStoreMetadata:)`` does. Returns `nil` when no combination of the
    /// models matches the metadata's version hashes, or when a model file cannot be read.
    /// Complexity: loads every model version in the bundles.
    public class func mergedModel(from bundles: [Bundle]?, forStoreMetadata metadata: [String: Any]) -> NSManagedObjectModel? {
        var models: [NSManagedObjectModel] = []
        for bundle in bundles ?? [Bundle.main] {
            guard let resources = bundle.resourceURL,
                  let names = try? FileManager.default.contentsOfDirectory(atPath: resources.path)
            else { continue }
            for name in names.sorted() where ModelLocator.resourceExtensions.contains((name as NSString).pathExtension) {
                do {
                    models.append(contentsOf: try allVersions(at: resources.appendingPathComponent(name)))
                } catch {
                    return nil
                }
            }
        }
        return NSManagedObjectModel(byMerging: models, forStoreMetadata: metadata)
    }

    /// Every version of the model at `url`: each version of a package, or the one model.
    private static func allVersions(at url: URL) throws(ModelError) -> [NSManagedObjectModel] {
        guard let package = try ModelLocator.locate(url).package else {
            return [try NSManagedObjectModel(validatingContentsOf: url)]
        }
        let versions = try XcodeModelPackage(contentsOf: package)
        var models: [NSManagedObjectModel] = []
        for name in versions.versionNames { models.append(try versions.loadModel(version: name)) }
        return models
    }
}

/// Copies the entities of several models into one new model. A copy is needed because an
/// entity (and each property) belongs to exactly one model, and assigning it to another would
/// take it from its own.
private struct ModelMerger {
    let target: NSManagedObjectModel
    /// Whether a later entity whose name an earlier one took is dropped (its references lead to
    /// the earlier one) instead of failing the merge.
    let keepsFirstOfEachName: Bool

    private var entityCopies: [ObjectIdentifier: NSEntityDescription] = [:]
    private var propertyCopies: [ObjectIdentifier: NSPropertyDescription] = [:]

    init(into target: NSManagedObjectModel, keepingFirstOfEachEntityName: Bool) {
        self.target = target
        self.keepsFirstOfEachName = keepingFirstOfEachEntityName
    }

    /// Fills the target; `false` when the models cannot be combined.
    mutating func merge(_ models: [NSManagedObjectModel]) -> Bool {
        var byName: [String: NSEntityDescription] = [:]
        var merged: [NSEntityDescription] = []
        var taken: [(source: NSEntityDescription, copy: NSEntityDescription)] = []
        for model in models {
            for entity in model.entities {
                if let name = entity.name, let earlier = byName[name] {
                    guard keepsFirstOfEachName else { return false }
                    entityCopies[ObjectIdentifier(entity)] = earlier
                    continue
                }
                guard let copy = Self.copyEntity(entity) else { return false }
                if let name = entity.name { byName[name] = copy }
                entityCopies[ObjectIdentifier(entity)] = copy
                merged.append(copy)
                taken.append((entity, copy))
            }
        }
        for (source, copy) in taken {
            var properties: [NSPropertyDescription] = []
            for property in source.declaredProperties {
                guard let propertyCopy = Self.copyProperty(property) else { return false }
                propertyCopies[ObjectIdentifier(property)] = propertyCopy
                properties.append(propertyCopy)
            }
            copy.properties = properties
        }
        // Dropped duplicates' properties lead to the kept entity's properties of the same name.
        for model in models {
            for entity in model.entities where !taken.contains(where: { $0.source === entity }) {
                guard let kept = entityCopies[ObjectIdentifier(entity)] else { continue }
                for property in entity.declaredProperties {
                    propertyCopies[ObjectIdentifier(property)] = kept.propertiesByName[property.name]
                }
            }
        }
        for (source, copy) in taken {
            linkCopy(copy, of: source)
        }
        target.entities = merged
        return mergeModelLevel(models)
    }

    /// Inheritance, relationship ends, constraints and indexes of one copied entity, pointed at
    /// the copies.
    private func linkCopy(_ copy: NSEntityDescription, of source: NSEntityDescription) {
        // A subentity dropped as a duplicate is already the kept entity's subentity.
        var subentities: [NSEntityDescription] = []
        for sub in source.subentities {
            guard let mapped = entityCopies[ObjectIdentifier(sub)], mapped.superentity == nil,
                  !subentities.contains(where: { $0 === mapped }) else { continue }
            subentities.append(mapped)
        }
        copy.subentities = subentities
        for property in source.declaredProperties {
            guard let relationship = property as? NSRelationshipDescription,
                  let relationshipCopy = propertyCopies[ObjectIdentifier(relationship)] as? NSRelationshipDescription
            else { continue }
            relationshipCopy.destinationEntity = relationship.destinationEntity.flatMap { entityCopies[ObjectIdentifier($0)] }
            relationshipCopy.inverseRelationship = relationship.inverseRelationship.flatMap {
                propertyCopies[ObjectIdentifier($0)] as? NSRelationshipDescription
            }
        }
        copy.uniquenessConstraints = source.uniquenessConstraints.map { group in
            group.map { element -> Any in
                guard let property = element as? NSPropertyDescription else { return element }
                return propertyCopies[ObjectIdentifier(property)] ?? property.name
            }
        }
        copy.indexes = source.indexes.map { index in
            let indexCopy = NSFetchIndexDescription(name: index.name, elements: index.elements.map { element in
                let elementCopy = NSFetchIndexElementDescription(
                    propertyName: element.propertyName, collationType: element.collationType, isAscending: element.isAscending)
                elementCopy.property = element.property.flatMap { propertyCopies[ObjectIdentifier($0)] }
                return elementCopy
            })
            indexCopy.partialIndexPredicate = index.partialIndexPredicate
            return indexCopy
        }
    }

    /// Configurations, fetch request templates, version identifiers and localizations.
    private func mergeModelLevel(_ models: [NSManagedObjectModel]) -> Bool {
        var templates: [String: FetchRequestDescription] = [:]
        var identifiers: Set<AnyHashable> = []
        var localizations: [String: String]?
        for model in models {
            for configuration in model.configurations {
                var members = target.entities(forConfigurationName: configuration) ?? []
                for entity in model.entities(forConfigurationName: configuration) ?? [] {
                    guard let copy = entityCopies[ObjectIdentifier(entity)], !members.contains(where: { $0 === copy }) else { continue }
                    members.append(copy)
                }
                target.setEntities(members, forConfigurationName: configuration)
            }
            for (name, template) in model.fetchRequestDescriptionsByName {
                if let earlier = templates[name], earlier != template { return false }
                templates[name] = template
            }
            identifiers.formUnion(model.versionIdentifiers)
            if let dictionary = model.localizationDictionary {
                localizations = (localizations ?? [:]).merging(dictionary) { first, _ in first }
            }
        }
        target.fetchRequestDescriptionsByName = templates
        target.versionIdentifiers = identifiers
        target.localizationDictionary = localizations
        return true
    }

    private static func copyEntity(_ source: NSEntityDescription) -> NSEntityDescription? {
        let copy = NSEntityDescription()
        copy.name = source.name
        copy.managedObjectClassName = source.managedObjectClassName
        copy.isAbstract = source.isAbstract
        copy.userInfo = source.userInfo
        copy.versionHashModifier = source.versionHashModifier
        copy.renamingIdentifier = source.renamingIdentifier
        return copy
    }

    /// A detached copy of a property; relationship ends are set later, once every entity has
    /// its copy. `nil` for a kind of property a model does not hold.
    private static func copyProperty(_ source: NSPropertyDescription) -> NSPropertyDescription? {
        let copy: NSPropertyDescription
        switch source {
        case let attribute as NSAttributeDescription:
            let attributeCopy = NSAttributeDescription()
            attributeCopy.attributeType = attribute.attributeType
            attributeCopy.defaultValue = attribute.defaultValue
            attributeCopy.valueTransformerName = attribute.valueTransformerName
            attributeCopy.allowsExternalBinaryDataStorage = attribute.allowsExternalBinaryDataStorage
            attributeCopy.preservesValueInHistoryOnDeletion = attribute.preservesValueInHistoryOnDeletion
            attributeCopy.allowsCloudEncryption = attribute.allowsCloudEncryption
            attributeCopy.validationRules = attribute.validationRules
            // Only a class name the model set itself; the others follow the type.
            if attributeCopy.attributeValueClassName != attribute.attributeValueClassName {
                attributeCopy.attributeValueClassName = attribute.attributeValueClassName
            }
            copy = attributeCopy
        case let relationship as NSRelationshipDescription:
            let relationshipCopy = NSRelationshipDescription()
            relationshipCopy.maxCount = relationship.maxCount
            relationshipCopy.minCount = relationship.minCount
            relationshipCopy.deleteRule = relationship.deleteRule
            relationshipCopy.isOrdered = relationship.isOrdered
            copy = relationshipCopy
        case let fetched as NSFetchedPropertyDescription:
            let fetchedCopy = NSFetchedPropertyDescription()
            fetchedCopy.fetchRequestDescription = fetched.fetchRequestDescription
            copy = fetchedCopy
        default:
            return nil
        }
        copy.name = source.name
        copy.isOptional = source.isOptional
        copy.isTransient = source.isTransient
        copy.isReadOnly = source.isReadOnly
        copy.userInfo = source.userInfo
        copy.versionHashModifier = source.versionHashModifier
        copy.renamingIdentifier = source.renamingIdentifier
        copy.isIndexedBySpotlight = source.isIndexedBySpotlight
        copy.isStoredInExternalRecord = source.isStoredInExternalRecord
        copy.customValidation = source.customValidation
        return copy
    }
}
