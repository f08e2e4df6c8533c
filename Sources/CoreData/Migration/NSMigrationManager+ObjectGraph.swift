import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

/// Which source objects became which destination objects, per entity mapping: what
/// ``NSMigrationManager/associate(sourceInstance:withDestinationInstance:for:)`` records and the
/// relationship stage reads.
struct MigrationAssociations {
    /// Per mapping name: the destinations of each source object, in the order they were made.
    private(set) var destinationsBySource: [String: [ObjectIdentifier: [NSManagedObject]]] = [:]
    /// Per mapping name: the source object of each destination object.
    private(set) var sourceByDestination: [String: [ObjectIdentifier: NSManagedObject]] = [:]
    /// Per mapping name: the destination objects, in the order they were made.
    private(set) var destinations: [String: [NSManagedObject]] = [:]
    /// Per mapping name: the source objects, in the order they were first associated.
    private(set) var sources: [String: [NSManagedObject]] = [:]
    /// The destinations of each source object, whatever the mapping.
    private(set) var destinationsOfSource: [ObjectIdentifier: [NSManagedObject]] = [:]

    mutating func associate(_ source: NSManagedObject, _ destination: NSManagedObject, mapping name: String) {
        let sourceKey = ObjectIdentifier(source)
        let destinationKey = ObjectIdentifier(destination)
        if sourceByDestination[name]?[destinationKey] != nil { return }
        if destinationsBySource[name]?[sourceKey] == nil { sources[name, default: []].append(source) }
        destinationsBySource[name, default: [:]][sourceKey, default: []].append(destination)
        sourceByDestination[name, default: [:]][destinationKey] = source
        destinations[name, default: []].append(destination)
        destinationsOfSource[sourceKey, default: []].append(destination)
    }
}

/// When a mapping runs through managed objects instead of the streaming row path.
enum ObjectGraphMigration {
    /// Whether `mapping` needs managed objects: an entity migration policy, a custom entity
    /// mapping, a source expression other than "every object of the source entity", or a value
    /// expression other than the forms the row path reads (`$source.key`, the inferred
    /// relationship functions, constants).
    static func isNeeded(for mapping: NSMappingModel) -> Bool {
        for entityMapping in mapping.entityMappings ?? [] {
            if entityMapping.mappingType == .customEntityMappingType { return true }
            if let name = entityMapping.entityMigrationPolicyClassName, !name.isEmpty, name != "NSEntityMigrationPolicy" { return true }
            if let expression = entityMapping.sourceExpression, !fetchesEverySourceObject(expression, of: entityMapping) { return true }
            for property in (entityMapping.attributeMappings ?? []) + (entityMapping.relationshipMappings ?? []) {
                guard let expression = property.valueExpression else { continue }
                if property.sourceKey == nil, expression.expressionType != .constantValue { return true }
                if case .function = expression.expressionType, expression.function == "destinationInstancesForEntityMappingNamed:sourceInstances:" {
                    // The row path maps a relationship through the source entity's own mapping;
                    // a mapping named for another entity needs the association table.
                    guard let arguments = expression.arguments, arguments.count == 2, arguments[0].expressionType == .constantValue,
                          let named = arguments[0].constantValue as? String,
                          let target = mapping.entityMappingsByName[named], target.sourceEntityName == target.destinationEntityName
                    else { return true }
                }
            }
        }
        return false
    }

    /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", entity,
    /// "TRUEPREDICATE"), $manager.sourceContext, NO)` for the mapping's own source entity: what
    /// Xcode writes for a mapping without a filter.
    private static func fetchesEverySourceObject(_ expression: NSExpression, of mapping: NSEntityMapping) -> Bool {
        guard let fetch = expression as? NSFetchRequestExpression, !fetch.isCountOnlyRequest,
              fetch.requestExpression.expressionType == .function,
              fetch.requestExpression.function == "fetchRequestForSourceEntityNamed:predicateString:",
              let arguments = fetch.requestExpression.arguments, arguments.count == 2,
              arguments.allSatisfy({ $0.expressionType == .constantValue })
        else { return false }
        return arguments[0].constantValue as? String == mapping.sourceEntityName
            && (arguments[1].constantValue as? String)?.trimmingCharacters(in: .whitespaces) == "TRUEPREDICATE"
    }
}

// MARK: - Apple's association API

extension NSMigrationManager {
    /// Records that `destinationInstance` was made from `sourceInstance` by `entityMapping`; the
    /// relationship stage and ``destinationInstances(forEntityMappingName:sourceInstances:)`` read it.
    /// A policy that creates destination objects itself must call this for each.
    public func associate(sourceInstance: NSManagedObject, withDestinationInstance destinationInstance: NSManagedObject, for entityMapping: NSEntityMapping) {
        associations.associate(sourceInstance, destinationInstance, mapping: entityMapping.name ?? "")
    }

    /// The destination objects the mapping named `mappingName` made from `sourceInstances`, in
    /// order; every destination object of the mapping when `sourceInstances` is `nil`.
    public func destinationInstances(forEntityMappingName mappingName: String, sourceInstances: [NSManagedObject]?) -> [NSManagedObject] {
        guard let sourceInstances else { return associations.destinations[mappingName] ?? [] }
        let bySource = associations.destinationsBySource[mappingName] ?? [:]
        return sourceInstances.flatMap { bySource[ObjectIdentifier($0)] ?? [] }
    }

    /// The source objects the destination objects of the mapping named `mappingName` were made
    /// from; every source object of the mapping when `destinationInstances` is `nil`.
    public func sourceInstances(forEntityMappingName mappingName: String, destinationInstances: [NSManagedObject]?) -> [NSManagedObject] {
        guard let destinationInstances else { return associations.sources[mappingName] ?? [] }
        let byDestination = associations.sourceByDestination[mappingName] ?? [:]
        return destinationInstances.compactMap { byDestination[ObjectIdentifier($0)] }
    }

    /// The source model's entity for `mEntity`'s source; `nil` for an added entity.
    public func sourceEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.sourceEntityName.flatMap { sourceModel.entitiesByName[$0] }
    }

    /// The destination model's entity for `mEntity`'s destination; `nil` for a removed entity.
    public func destinationEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.destinationEntityName.flatMap { destinationModel.entitiesByName[$0] }
    }
}

// MARK: - `$manager` in value expressions

extension NSMigrationManager: PredicateFunctionReceiver, KeyValueReadable {
    /// The functions Apple's value expressions call on `$manager`:
    /// `destinationInstancesForEntityMappingNamed:sourceInstances:`,
    /// `destinationInstancesForSourceRelationshipNamed:sourceInstances:`,
    /// `sourceInstancesForEntityMappingNamed:destinationInstances:` and
    /// `fetchRequestForSourceEntityNamed:predicateString:`. A single object where a collection is
    /// expected counts as a collection of one; `nil` for an unknown function or wrong arguments.
    public func predicateFunction(_ selector: String, arguments: [Any?]) -> Any? {
        switch selector {
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            guard arguments.count == 2, let name = arguments[0] as? String else { return nil }
            return destinationInstances(forEntityMappingName: name, sourceInstances: Self.objects(in: arguments[1]))
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            guard arguments.count == 2 else { return nil }
            return Self.objects(in: arguments[1]).flatMap { associations.destinationsOfSource[ObjectIdentifier($0)] ?? [] }
        case "sourceInstancesForEntityMappingNamed:destinationInstances:":
            guard arguments.count == 2, let name = arguments[0] as? String else { return nil }
            return sourceInstances(forEntityMappingName: name, destinationInstances: Self.objects(in: arguments[1]))
        case "fetchRequestForSourceEntityNamed:predicateString:":
            guard arguments.count == 2, let name = arguments[0] as? String, let format = arguments[1] as? String,
                  let predicate = try? NSPredicate(validatingFormat: format)
            else { return nil }
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: name)
            request.predicate = predicate
            // Each entity of a hierarchy has its own mapping.
            request.includesSubentities = false
            return request
        default:
            return nil
        }
    }

    /// The manager's properties by name, for key paths in value expressions
    /// (`$manager.sourceContext`, `$manager.destinationModel`, …).
    public func value(forKey key: String) -> Any? {
        switch key {
        case "sourceContext": return sourceContext
        case "destinationContext": return destinationContext
        case "sourceModel": return sourceModel
        case "destinationModel": return destinationModel
        case "mappingModel": return mappingModel
        case "currentEntityMapping": return currentEntityMapping
        case "migrationProgress": return migrationProgress
        case "userInfo": return userInfo
        default: return nil
        }
    }

    /// The managed objects in a value: one object, or a collection of them.
    static func objects(in value: Any?) -> [NSManagedObject] {
        switch value {
        case nil, is NSNull: return []
        case let object as NSManagedObject: return [object]
        default: return NSManagedObject.objects(in: value, key: "sourceInstances")
        }
    }
}

// MARK: - The three stages over managed objects

extension NSMigrationManager {
    /// Runs Apple's three stages through managed objects: for each entity mapping its policy
    /// creates the destination objects of every source object; then sets their relationships;
    /// then validates them (the policies' custom validation, then the model's rules) and saves
    /// the destination context.
    ///
    /// Memory: every source and destination object of the migration is held at once, as Apple's
    /// manager holds them; mappings without policies or general expressions take the streaming
    /// row path instead.
    func runWithObjects(_ mapping: NSMappingModel, from source: NSPersistentStore, to destination: NSPersistentStore) throws {
        migratedObjectCounts = [:]
        associations = MigrationAssociations()
        let sourceContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        sourceContext.persistentStoreCoordinator = source.persistentStoreCoordinator
        sourceContext.name = "migration source"
        let destinationContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        destinationContext.persistentStoreCoordinator = destination.persistentStoreCoordinator
        destinationContext.name = "migration destination"
        self.sourceContext = sourceContext
        self.destinationContext = destinationContext
        defer {
            // The objects of a finished migration are not kept alive by the manager.
            associations = MigrationAssociations()
            self.sourceContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            self.destinationContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        }

        let mappings = mapping.entityMappings ?? []
        let policies = try mappings.map(policy(for:))
        let steps = Float(max(1, mappings.count * 3))
        var done: Float = 0
        func advance() throws {
            try checkCancellation()
            done += 1
            migrationProgress = min(0.99, done / steps)
            progress?.completedUnitCount = Int64(Double(migrationProgress) * Double(Self.progressUnits))
        }

        // Instances.
        for (entityMapping, policy) in zip(mappings, policies) {
            currentEntityMapping = entityMapping
            try policy.begin(entityMapping, with: self)
            for (index, sourceObject) in try sourceObjects(of: entityMapping).enumerated() {
                if index % 1_000 == 999 { try checkCancellation() }
                try policy.createDestinationInstances(forSource: sourceObject, in: entityMapping, manager: self)
            }
            try policy.endInstanceCreation(forMapping: entityMapping, manager: self)
            try advance()
        }
        // Relationships.
        for (entityMapping, policy) in zip(mappings, policies) {
            currentEntityMapping = entityMapping
            for (index, destinationObject) in destinationInstances(forEntityMappingName: entityMapping.name ?? "", sourceInstances: nil).enumerated() {
                if index % 1_000 == 999 { try checkCancellation() }
                try policy.createRelationships(forDestination: destinationObject, in: entityMapping, manager: self)
            }
            try policy.endRelationshipCreation(forMapping: entityMapping, manager: self)
            try advance()
        }
        // Validation: the policies' own, each mapping's end, then (as Apple's save does) the
        // model's rules for every object made.
        for (entityMapping, policy) in zip(mappings, policies) {
            currentEntityMapping = entityMapping
            try policy.performCustomValidation(forMapping: entityMapping, manager: self)
        }
        for (entityMapping, policy) in zip(mappings, policies) {
            currentEntityMapping = entityMapping
            try policy.end(entityMapping, manager: self)
            try advance()
        }
        currentEntityMapping = nil
        let made = destinationContext.insertedObjects.sorted { ($0.entity.name ?? "") < ($1.entity.name ?? "") }
        for object in made {
            do {
                try object.validateForInsert()
            } catch let error as NSError {
                throw validationFailure(of: object, error)
            }
        }

        try copyMetadata(from: source.engine, to: destination.engine)
        var counts: [String: Int] = [:]
        for object in destinationContext.insertedObjects { counts[object.entity.name ?? "", default: 0] += 1 }
        do {
            try destinationContext.save()
        } catch let error as NSError {
            throw coreDataError(NSMigrationError, "the migrated objects could not be saved: \(error.localizedDescription)", [NSUnderlyingErrorKey: error])
        }
        migratedObjectCounts = counts
    }

    /// A failed validation of a migrated object, as 134110 naming the mapping, the source
    /// object and the property.
    private func validationFailure(of object: NSManagedObject, _ error: NSError) -> NSError {
        var source: NSManagedObject?
        var mappingName: String?
        for entityMapping in mappingModel?.entityMappings ?? [] {
            if let found = sourceInstances(forEntityMappingName: entityMapping.name ?? "", destinationInstances: [object]).first {
                source = found
                mappingName = entityMapping.name
                break
            }
        }
        let key = error.userInfo[NSValidationKeyErrorKey] as? String
        var info: [String: Any] = [NSUnderlyingErrorKey: error, "destinationObject": object]
        if let key { info[NSValidationKeyErrorKey] = key }
        if let source { info["sourceObject"] = source.objectID.description }
        let origin = source.map { " migrated from \($0.objectID) by mapping \(mappingName ?? "")" } ?? " made by an entity migration policy"
        return coreDataError(
            NSMigrationError,
            "a migrated \(object.entity.name ?? "object")\(origin) is not valid\(key.map { " (\(object.entity.name ?? "").\($0))" } ?? ""): \(error.localizedDescription)",
            info)
    }

    /// The policy an entity mapping names, or the default policy.
    ///
    /// - Throws: `NSEntityMigrationPolicyError` (134170) naming a class that is not found.
    private func policy(for mapping: NSEntityMapping) throws -> NSEntityMigrationPolicy {
        guard let name = mapping.entityMigrationPolicyClassName, !name.isEmpty, name != "NSEntityMigrationPolicy" else {
            return NSEntityMigrationPolicy()
        }
        guard let type = NSEntityMigrationPolicy.policyClass(named: name) else {
            throw coreDataError(
                NSEntityMigrationPolicyError,
                "entity mapping \(mapping.name ?? "") names the migration policy class '\(name)', which is not known: register it with NSEntityMigrationPolicy.registerSubclasses(_:) (Linux has no Objective-C runtime to find a class by name)",
                ["entityMapping": mapping.name ?? ""])
        }
        return type.init()
    }

    /// The source objects an entity mapping migrates: its source expression's result, or every
    /// object of its source entity (not of its subentities, which have mappings of their own).
    private func sourceObjects(of mapping: NSEntityMapping) throws -> [NSManagedObject] {
        guard let sourceName = mapping.sourceEntityName, mapping.mappingType != .addEntityMappingType,
              mapping.mappingType != .removeEntityMappingType, mapping.destinationEntityName != nil || mapping.mappingType == .customEntityMappingType
        else { return [] }
        guard let entity = sourceModel.entitiesByName[sourceName] else {
            throw coreDataError(NSMigrationMissingSourceModelError, "entity mapping \(mapping.name ?? "") names source entity '\(sourceName)', which the source model does not have")
        }
        if let expression = mapping.sourceExpression {
            let value = expression.expressionValue(with: nil, context: variables(mapping: mapping, policy: nil, source: nil, destination: nil, property: nil))
            if value == nil, let fetch = expression as? NSFetchRequestExpression {
                // An expression has no way to throw: run its fetch again to report why it failed.
                guard let request = fetch.requestExpression.expressionValue(with: nil, context: variables(mapping: mapping, policy: nil, source: nil, destination: nil, property: nil))
                    as? NSFetchRequest<NSFetchRequestResult>
                else {
                    throw coreDataError(NSMigrationError, "entity mapping \(mapping.name ?? ""): its source expression \(expression) does not give a fetch request")
                }
                _ = try sourceContext.fetch(request)
            }
            return Self.objects(in: value)
        }
        guard !entity.isAbstract else { return [] }
        let request = NSFetchRequest<NSManagedObject>(entityName: sourceName)
        request.includesSubentities = false
        return try sourceContext.fetch(request)
    }

    /// The variables a value expression of `mapping` sees.
    private func variables(
        mapping: NSEntityMapping, policy: NSEntityMigrationPolicy?, source: NSManagedObject?, destination: NSManagedObject?, property: NSPropertyMapping?
    ) -> NSMutableDictionary {
        let variables = NSMutableDictionary()
        variables[NSMigrationManagerKey] = self
        variables[NSMigrationEntityMappingKey] = mapping
        if let policy { variables[NSMigrationEntityPolicyKey] = policy }
        if let source { variables[NSMigrationSourceObjectKey] = source }
        if let destination { variables[NSMigrationDestinationObjectKey] = destination }
        if let property { variables[NSMigrationPropertyMappingKey] = property }
        return variables
    }

    /// ``NSEntityMigrationPolicy``'s default instance creation.
    func createDefaultDestinationInstance(for source: NSManagedObject, in mapping: NSEntityMapping, policy: NSEntityMigrationPolicy) throws {
        guard let name = mapping.destinationEntityName else { return }
        guard let entity = destinationModel.entitiesByName[name] else {
            throw coreDataError(NSMigrationError, "entity mapping \(mapping.name ?? "") names destination entity '\(name)', which the destination model does not have")
        }
        let destination = NSManagedObject(entity: entity, insertInto: destinationContext)
        for propertyMapping in Self.attributeMappings(of: mapping, destination: entity) {
            guard let key = propertyMapping.name, let expression = propertyMapping.valueExpression else { continue }
            guard let attribute = entity.attributesByName[key] else {
                throw coreDataError(NSMigrationError, "\(mapping.name ?? "").\(key): the destination entity \(name) has no attribute '\(key)'", [NSValidationKeyErrorKey: key])
            }
            let raw = expression.expressionValue(with: source, context: variables(mapping: mapping, policy: policy, source: source, destination: destination, property: propertyMapping))
            destination.setValue(try converted(raw, to: attribute, mapping: mapping, source: source), forKey: key)
        }
        associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
    }

    /// A value an expression gave, as the attribute's own type (`NSNumber` to `Int16`, …).
    private func converted(_ value: Any?, to attribute: NSAttributeDescription, mapping: NSEntityMapping, source: NSManagedObject) throws -> Any? {
        guard let value, !(value is NSNull) else { return nil }
        switch attribute.attributeType {
        case .transformableAttributeType, .undefinedAttributeType, .objectIDAttributeType, .compositeAttributeType:
            return value
        default:
            guard let stored = StoreValue(attributeValue: value, type: attribute.attributeType) else {
                throw coreDataError(
                    NSMigrationError,
                    "\(mapping.name ?? "").\(attribute.name): the value \(value) (\(type(of: value))) migrated from \(source.objectID) is not a \(attribute.attributeType)",
                    [NSValidationKeyErrorKey: attribute.name, "sourceObject": source.objectID.description])
            }
            return stored.attributeValue(as: attribute.attributeType)
        }
    }

    /// ``NSEntityMigrationPolicy``'s default relationship creation.
    func createDefaultRelationships(for destination: NSManagedObject, in mapping: NSEntityMapping, policy: NSEntityMigrationPolicy) throws {
        let source = sourceInstances(forEntityMappingName: mapping.name ?? "", destinationInstances: [destination]).first
        let entity = destination.entity
        for propertyMapping in Self.relationshipMappings(of: mapping, destination: entity) {
            guard let key = propertyMapping.name, let expression = propertyMapping.valueExpression else { continue }
            guard let relationship = entity.relationshipsByName[key] else {
                throw coreDataError(NSMigrationError, "\(mapping.name ?? "").\(key): the destination entity \(entity.name ?? "") has no relationship '\(key)'", [NSValidationKeyErrorKey: key])
            }
            let value = expression.expressionValue(with: source, context: variables(mapping: mapping, policy: policy, source: source, destination: destination, property: propertyMapping))
            let targets = Self.objects(in: value)
            if let stranger = targets.first(where: { $0.managedObjectContext !== destinationContext }) {
                throw coreDataError(
                    NSMigrationError,
                    "\(mapping.name ?? "").\(key): the value expression \(expression) gave \(stranger.objectID), which is not a migrated object",
                    [NSValidationKeyErrorKey: key])
            }
            if relationship.isToMany {
                destination.setValue(relationship.isOrdered ? NSOrderedSet(array: targets) as Any : Set(targets) as Any, forKey: key)
            } else if targets.count > 1 {
                throw coreDataError(
                    NSMigrationError,
                    "\(entity.name ?? "").\(key) of the object migrated from \(source?.objectID.description ?? "nothing"): \(targets.count) destinations cannot become a to-one relationship",
                    [NSValidationKeyErrorKey: key])
            } else {
                destination.setValue(targets.first, forKey: key)
            }
        }
    }

    /// Throws the cancellation a caller asked for, if any.
    func checkCancellation() throws {
        if let cancellation { throw cancellation }
        if let progress, progress.isCancelled { throw coreDataError(NSMigrationCancelledError, "the migration was cancelled; the source store is unchanged") }
    }

    /// Carries the source's metadata over, except what the destination records itself.
    func copyMetadata(from source: any PersistentStoreEngine, to destination: any PersistentStoreEngine) throws {
        try mapStoreError { () throws(StoreError) in
            var metadata = try destination.metadata()
            for (key, value) in try source.metadata().values
            where ![NSStoreUUIDKey, NSStoreTypeKey, NSStoreModelVersionHashesKey, NSStoreModelVersionIdentifiersKey].contains(key) {
                metadata[key] = value
            }
            try destination.setMetadata(metadata)
        }
    }
}
