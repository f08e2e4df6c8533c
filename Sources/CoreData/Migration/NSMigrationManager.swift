import CoreDataModel
import CoreDataStorage
import Foundation

/// Runs a mapping model: reads every object of a store saved with the source model and writes
/// the migrated objects into a new store of the destination model.
///
/// Matches Apple's `NSMigrationManager` and its three stages: instances (one destination object
/// per source object, attributes set), relationships (destinations re-linked through the map of
/// source to destination objects), validation (every destination object's mandatory properties
/// checked). The source store is opened read-only and never changed; the destination is saved in
/// one save, so a migration that fails leaves no objects behind and the caller deletes the
/// destination file.
///
/// Linux differences: entity migration policies (custom entity mappings) and value expressions
/// other than Apple's inferred forms (`$source.key`, `FUNCTION($source, "valueForKey:", …)`,
/// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", …)`)
/// and constants are refused with `NSMigrationError` naming the mapping. Objects keep their
/// primary keys where the destination store hands out the same ones.
///
/// Threading: one migration at a time per manager; it blocks the calling thread.
/// Memory: every row of the source store is held at once (O(objects)).
open class NSMigrationManager: NSObject {
    /// The model the source store was saved with.
    public let sourceModel: NSManagedObjectModel
    /// The model the destination store is made with.
    public let destinationModel: NSManagedObjectModel
    /// The mapping of the running (or last) migration.
    public private(set) var mappingModel: NSMappingModel?
    /// The entity mapping being run.
    public private(set) var currentEntityMapping: NSEntityMapping?
    /// How far the running migration is, from 0 to 1.
    public private(set) var migrationProgress: Float = 0
    /// Values for the developer's own use.
    open var userInfo: [AnyHashable: Any]?

    private var cancellation: Error?

    /// Creates a manager for one pair of model versions.
    public init(sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        super.init()
    }

    /// Asks the running migration to stop; it throws `error` at its next entity mapping.
    open func cancelMigrationWithError(_ error: Error) { cancellation = error }

    /// Migrates the store at `sourceURL` into a new store at `destinationURL`.
    ///
    /// - Throws: `NSMigrationMissingMappingModelError` (134140) without a mapping;
    ///   `NSMigrationMissingSourceModelError` (134130) when the source store was not saved with
    ///   ``sourceModel``; `NSMigrationManagerSourceStoreError` (134150) /
    ///   `NSMigrationManagerDestinationStoreError` (134160) when a store cannot be opened or made
    ///   (a file already at `destinationURL` included); `NSMigrationError` (134110) for a value
    ///   that cannot be migrated or an object that fails validation, naming the object and the
    ///   property; the error given to ``cancelMigrationWithError(_:)``. On any error the
    ///   destination store is deleted.
    open func migrateStore(
        from sourceURL: URL, sourceType: String, options sourceOptions: [AnyHashable: Any]? = nil, with mapping: NSMappingModel?,
        toDestinationURL destinationURL: URL, destinationType: String, destinationOptions: [AnyHashable: Any]? = nil
    ) throws {
        guard let mapping else {
            throw coreDataError(NSMigrationMissingMappingModelError, "no mapping model was given for the migration of \(sourceURL.path)")
        }
        mappingModel = mapping
        migrationProgress = 0
        cancellation = nil
        defer { currentEntityMapping = nil }

        var readOptions = sourceOptions ?? [:]
        readOptions[NSReadOnlyPersistentStoreOption] = true
        readOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        let sourceCoordinator = NSPersistentStoreCoordinator(managedObjectModel: sourceModel)
        let source: NSPersistentStore
        do {
            source = try sourceCoordinator.addPersistentStore(ofType: sourceType, configurationName: nil, at: sourceURL, options: readOptions)
        } catch let error as NSError where error.code == NSPersistentStoreIncompatibleVersionHashError {
            throw coreDataError(NSMigrationMissingSourceModelError, "the store at \(sourceURL.path) was not saved with the migration's source model: \(error.localizedDescription)", [NSUnderlyingErrorKey: error])
        } catch let error as NSError {
            throw coreDataError(NSMigrationManagerSourceStoreError, "cannot open the source store at \(sourceURL.path): \(error.localizedDescription)", [NSUnderlyingErrorKey: error])
        }
        defer { try? sourceCoordinator.remove(source) }

        let fileSystem = PrivateStoreOption.fileSystem(destinationOptions)
        if destinationType != NSInMemoryStoreType, fileSystem.fileExists(destinationURL.path) {
            throw coreDataError(NSMigrationManagerDestinationStoreError, "cannot migrate into \(destinationURL.path): a file is already there")
        }
        let destinationCoordinator = NSPersistentStoreCoordinator(managedObjectModel: destinationModel)
        var writeOptions = destinationOptions ?? [:]
        writeOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        if writeOptions[NSStoreUUIDKey] == nil, let uuid = (try? mapStoreError { () throws(StoreError) in try source.engine.metadata() })?[NSStoreUUIDKey] as? String {
            // The migrated store keeps the source's identity, so object URIs stay valid.
            writeOptions[PrivateStoreOption.storeUUID] = uuid
        }
        let destination: NSPersistentStore
        do {
            destination = try destinationCoordinator.addPersistentStore(ofType: destinationType, configurationName: nil, at: destinationURL, options: writeOptions)
        } catch let error as NSError {
            throw coreDataError(NSMigrationManagerDestinationStoreError, "cannot make the destination store at \(destinationURL.path): \(error.localizedDescription)", [NSUnderlyingErrorKey: error])
        }
        do {
            try run(mapping, from: source.engine, to: destination.engine)
            try destinationCoordinator.remove(destination)
        } catch {
            if destinationCoordinator.persistentStores.contains(where: { $0 === destination }) { try? destinationCoordinator.remove(destination) }
            if destinationType != NSInMemoryStoreType { try? StoreMigration.removeFiles(of: destinationURL.path, in: fileSystem) }
            throw error
        }
        migrationProgress = 1
    }

    /// Apple's `StoreType`-spelled ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)``.
    open func migrateStore(
        from sourceURL: URL, type sourceType: NSPersistentStore.StoreType, options sourceOptions: [AnyHashable: Any]? = nil, mapping: NSMappingModel,
        to destinationURL: URL, type destinationType: NSPersistentStore.StoreType, options destinationOptions: [AnyHashable: Any]? = nil
    ) throws {
        try migrateStore(
            from: sourceURL, sourceType: sourceType.rawValue, options: sourceOptions, with: mapping,
            toDestinationURL: destinationURL, destinationType: destinationType.rawValue, destinationOptions: destinationOptions)
    }

    // MARK: The three stages

    /// One entity mapping ready to run: its entities and, per destination slot, where the value comes from.
    private struct Plan {
        let mapping: NSEntityMapping
        let source: NSEntityDescription
        let destination: NSEntityDescription
        var rows: [StoreRow] = []
        var attributes: [(slot: Int, attribute: NSAttributeDescription, from: String?, constant: Any??)] = []
        var relationships: [(slot: Int, relationship: NSRelationshipDescription, from: String)] = []
    }

    private func run(_ mapping: NSMappingModel, from source: any PersistentStoreEngine, to destination: any PersistentStoreEngine) throws {
        var plans = try (mapping.entityMappings ?? []).compactMap(plan(for:))
        let total = Float(max(1, plans.count * 3))
        var done: Float = 0
        func step() throws {
            if let cancellation { throw cancellation }
            done += 1
            migrationProgress = min(0.99, done / total)
        }

        // Instances: read each source entity's rows, then give each object its destination ID.
        for index in plans.indices {
            currentEntityMapping = plans[index].mapping
            try step()
            let entity = plans[index].source
            plans[index].rows = try mapStoreError { () throws(StoreError) -> [StoreRow] in
                try NSPersistentStoreCoordinator.allRows(of: entity, in: source).filter { $0.objectID.entityName == entity.name }
            }
        }
        let newIDs = try assignKeys(plans, in: destination)

        // Relationships and values: build each destination row.
        var inserted: [StoreRow] = []
        inserted.reserveCapacity(newIDs.count)
        for plan in plans {
            currentEntityMapping = plan.mapping
            try step()
            let layout = plan.destination.propertyLayout
            for row in plan.rows {
                guard let id = newIDs[row.objectID] else { continue }
                var slots = [StoreValue?](repeating: nil, count: layout.count)
                for (slot, attribute, from, constant) in plan.attributes {
                    var value: StoreValue = .null
                    if let from {
                        value = row.contains(from) ? row[from] : .null
                    } else if let constant {
                        value = StoreValue(attributeValue: constant, type: attribute.attributeType) ?? .null
                    }
                    if value.isNull, let fallback = attribute.defaultValue, !(from != nil && attribute.isOptional) {
                        value = StoreValue(attributeValue: fallback, type: attribute.attributeType) ?? .null
                    }
                    if !value.isNull { slots[slot] = value }
                }
                for (slot, relationship, from) in plan.relationships {
                    var stored = row.contains(from) ? row[from] : .null
                    if !row.contains(from) {
                        stored = try mapStoreError { () throws(StoreError) -> StoreValue in try source.destinations(of: row.objectID, relationship: from) }
                    }
                    let targets: [StoreObjectID]
                    switch stored {
                    case .reference(let target): targets = newIDs[target].map { [$0] } ?? []
                    case .references(let list): targets = list.compactMap { newIDs[$0] }
                    default: targets = []
                    }
                    if relationship.isToMany {
                        slots[slot] = .references(targets)
                    } else if targets.count > 1 {
                        throw migrationError(
                            "\(plan.destination.name ?? "").\(relationship.name) of the object migrated from \(row.objectID): \(targets.count) destinations cannot become a to-one relationship",
                            object: row.objectID, property: relationship.name)
                    } else {
                        slots[slot] = targets.first.map(StoreValue.reference) ?? .null
                    }
                }
                inserted.append(StoreRow(objectID: id, version: 0, layout: layout, slots: slots))
            }
        }

        // Validation: every mandatory property has a value.
        for plan in plans {
            currentEntityMapping = plan.mapping
            try step()
            let layout = plan.destination.propertyLayout
            var mandatory: [(Int, NSPropertyDescription)] = []
            for property in plan.destination.properties where !property.isOptional && !property.isTransient {
                guard let slot = layout.slot(of: property.name) else { continue }
                if let relationship = property as? NSRelationshipDescription, relationship.isToMany { continue }
                mandatory.append((slot, property))
            }
            guard !mandatory.isEmpty else { continue }
            for row in inserted where row.layout === layout {
                for (slot, property) in mandatory where row.slots[slot]?.isNull ?? true {
                    throw migrationError(
                        "\(plan.destination.name ?? "").\(property.name) is mandatory, and the object \(row.objectID) migrated with mapping \(plan.mapping.name ?? "") has no value for it",
                        object: row.objectID, property: property.name)
                }
            }
        }

        currentEntityMapping = nil
        try mapStoreError { () throws(StoreError) in
            var metadata = try destination.metadata()
            for (key, value) in try source.metadata().values
            where ![NSStoreUUIDKey, NSStoreTypeKey, NSStoreModelVersionHashesKey, NSStoreModelVersionIdentifiersKey].contains(key) {
                metadata[key] = value
            }
            try destination.setMetadata(metadata)
            if !inserted.isEmpty { _ = try destination.save(StoreChangeSet(inserted: inserted)) }
        }
    }

    /// The destination ID of every source object. Keys are kept where the destination hands
    /// them out again: keys are asked for in the order of the source keys, run by run (a run is
    /// consecutive keys of one entity), skipping ahead over the gaps deleted objects left, so a
    /// fresh store whose counters are per entity (binary) or store-wide (XML) gives every object
    /// its old key and its object URI stays valid. Where a key cannot be kept (the destination's
    /// counter is already past it, or the gap is too wide to skip), the run gets new keys.
    private func assignKeys(_ plans: [Plan], in destination: any PersistentStoreEngine) throws -> [StoreObjectID: StoreObjectID] {
        var order: [(plan: Int, row: Int)] = []
        for (planIndex, plan) in plans.enumerated() { for rowIndex in plan.rows.indices { order.append((planIndex, rowIndex)) } }
        order.sort { lhs, rhs in
            let (l, r) = (plans[lhs.plan].rows[lhs.row].objectID.primaryKey, plans[rhs.plan].rows[rhs.row].objectID.primaryKey)
            return l != r ? l < r : lhs.plan < rhs.plan
        }
        let widestSkip = Int64(order.count) + 1_000_000
        var newIDs: [StoreObjectID: StoreObjectID] = [:]
        newIDs.reserveCapacity(order.count)
        var start = 0
        while start < order.count {
            let plan = plans[order[start].plan]
            let first = plan.rows[order[start].row].objectID.primaryKey
            var end = start + 1
            while end < order.count, order[end].plan == order[start].plan,
                  plan.rows[order[end].row].objectID.primaryKey == first &+ Int64(end - start) { end += 1 }
            let run = end - start
            guard let name = plan.destination.name else { start = end; continue }
            let keys = try mapStoreError { () throws(StoreError) -> [Int64] in
                var probe = try destination.newPrimaryKeys(entityName: name, count: 1)
                guard let next = probe.first else { return [] }
                let (gap, overflow) = first.subtractingReportingOverflow(next)
                if !overflow, gap > 0, gap <= widestSkip {
                    if gap > 1 { _ = try destination.newPrimaryKeys(entityName: name, count: Int(gap - 1)) }
                    probe = try destination.newPrimaryKeys(entityName: name, count: 1)
                }
                return run > 1 ? probe + (try destination.newPrimaryKeys(entityName: name, count: run - 1)) : probe
            }
            guard keys.count == run else {
                throw coreDataError(NSMigrationManagerDestinationStoreError, "the destination store handed out \(keys.count) keys for \(run) objects of \(name)")
            }
            for offset in 0..<run {
                let row = plan.rows[order[start + offset].row]
                newIDs[row.objectID] = StoreObjectID(entityName: name, primaryKey: keys[offset])
            }
            start = end
        }
        return newIDs
    }

    /// Resolves an entity mapping against the two models; `nil` for one that moves no objects.
    private func plan(for mapping: NSEntityMapping) throws -> Plan? {
        switch mapping.mappingType {
        case .addEntityMappingType, .removeEntityMappingType, .undefinedEntityMappingType:
            return nil
        case .customEntityMappingType:
            throw coreDataError(
                NSEntityMigrationPolicyError,
                "entity mapping \(mapping.name ?? "") is custom (policy \(mapping.entityMigrationPolicyClassName ?? "none")); entity migration policies are not supported on Linux yet")
        case .copyEntityMappingType, .transformEntityMappingType:
            break
        }
        guard let sourceName = mapping.sourceEntityName, let sourceEntity = sourceModel.entitiesByName[sourceName] else {
            throw coreDataError(NSMigrationMissingSourceModelError, "entity mapping \(mapping.name ?? "") names source entity '\(mapping.sourceEntityName ?? "")', which the source model does not have")
        }
        guard let destinationName = mapping.destinationEntityName, let destinationEntity = destinationModel.entitiesByName[destinationName] else {
            throw coreDataError(NSMigrationError, "entity mapping \(mapping.name ?? "") names destination entity '\(mapping.destinationEntityName ?? "")', which the destination model does not have")
        }
        if let hash = mapping.sourceEntityVersionHash, hash != sourceEntity.versionHash {
            throw coreDataError(NSMigrationMissingSourceModelError, "entity mapping \(mapping.name ?? "") was made for another version of source entity '\(sourceName)'")
        }
        guard !sourceEntity.isAbstract else { return nil }
        var plan = Plan(mapping: mapping, source: sourceEntity, destination: destinationEntity)
        let layout = destinationEntity.propertyLayout
        let attributeMappings = mapping.mappingType == .copyEntityMappingType && mapping.attributeMappings == nil
            ? destinationEntity.attributesByName.keys.map { NSPropertyMapping(name: $0, valueExpression: NSPropertyMapping.readingSource($0)) }
            : mapping.attributeMappings ?? []
        for propertyMapping in attributeMappings {
            guard let name = propertyMapping.name, let attribute = destinationEntity.attributesByName[name], !attribute.isTransient,
                  let slot = layout.slot(of: name) else { continue }
            if let key = propertyMapping.sourceKey {
                guard let old = sourceEntity.attributesByName[key], MappingInference.converts(old.attributeType, to: attribute.attributeType) else {
                    throw coreDataError(NSMigrationError, "\(mapping.name ?? "").\(name): the source has no attribute '\(key)' of a type that converts to \(attribute.attributeType)")
                }
                plan.attributes.append((slot, attribute, key, nil))
            } else if let expression = propertyMapping.valueExpression {
                guard expression.expressionType == .constantValue else {
                    throw coreDataError(NSMigrationError, "\(mapping.name ?? "").\(name): the value expression \(expression) is not supported on Linux yet (only $source.key, valueForKey: and constants)")
                }
                plan.attributes.append((slot, attribute, nil, .some(expression.constantValue)))
            } else {
                plan.attributes.append((slot, attribute, nil, nil))
            }
        }
        let relationshipMappings = mapping.mappingType == .copyEntityMappingType && mapping.relationshipMappings == nil
            ? destinationEntity.relationshipsByName.keys.map { NSPropertyMapping(name: $0, valueExpression: NSPropertyMapping.migratedDestinations(relationship: $0)) }
            : mapping.relationshipMappings ?? []
        for propertyMapping in relationshipMappings {
            guard let name = propertyMapping.name, let relationship = destinationEntity.relationshipsByName[name], !relationship.isTransient,
                  let slot = layout.slot(of: name) else { continue }
            guard let expression = propertyMapping.valueExpression else { continue }
            guard let key = propertyMapping.sourceKey, sourceEntity.relationshipsByName[key] != nil else {
                throw coreDataError(NSMigrationError, "\(mapping.name ?? "").\(name): the value expression \(expression) does not name a relationship of '\(sourceName)'")
            }
            plan.relationships.append((slot, relationship, key))
        }
        return plan
    }

    private func migrationError(_ description: String, object: StoreObjectID, property: String) -> NSError {
        coreDataError(NSMigrationError, description, [NSValidationKeyErrorKey: property, "sourceObject": object.description])
    }
}

