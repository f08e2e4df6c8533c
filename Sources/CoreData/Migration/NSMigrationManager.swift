import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataModel
import CoreDataStorage
import Foundation

/// Runs a mapping model: reads every object of a store saved with the source model and writes
/// the migrated objects into a new store of the destination model.
///
/// Matches Apple's `NSMigrationManager` and its three stages: instances (one destination object
/// per source object, attributes set), relationships (destinations re-linked through the map of
/// source to destination objects), validation (every destination object checked against the
/// model). The source store is opened read-only and never changed; the destination is deleted
/// when the migration fails, so a failed migration leaves nothing behind.
///
/// A mapping runs one of two ways:
/// - *Rows* (what inferred mappings and plain copies need): no entity migration policy, and value
///   expressions of Apple's inferred forms (`$source.key`, `FUNCTION($source, "valueForKey:", …)`,
///   `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", …)`)
///   or constants. Records are rewritten batch by batch without managed objects; objects keep
///   their primary keys where the destination store hands out the same ones.
///   Memory: 16 bytes per object (its source and destination keys) and one batch of 10,000 rows
///   (a destination whose saves rewrite it whole, as the XML store's do, takes every row in one save).
/// - *Objects* (anything else): Apple's algorithm over ``sourceContext`` and
///   ``destinationContext``, with each mapping's ``NSEntityMigrationPolicy`` (found by class
///   name through its registry) and value expressions evaluated with `$manager`, `$source`,
///   `$destination`, `$entityMapping`, `$propertyMapping` and `$entityPolicy`. Memory: every
///   object of the migration at once, as Apple's manager.
///
/// Either way, every migrated object of an entity with derived attributes
/// (`NSDerivedAttributeDescription`) holds the values its derivations give over its destination
/// values (`now()`: the migration's time): the object path's destination save computes them, the
/// row path reads the written objects back in chunks of 1,000 and saves those that change.
///
/// Threading: one migration at a time per manager; it blocks the calling thread, and its
/// contexts are used on that thread (policies run there too).
open class NSMigrationManager: NSObject {
    /// The model the source store was saved with.
    public let sourceModel: NSManagedObjectModel
    /// The model the destination store is made with.
    public let destinationModel: NSManagedObjectModel
    /// The mapping of the running (or last) migration.
    public private(set) var mappingModel: NSMappingModel?
    /// The entity mapping being run.
    public internal(set) var currentEntityMapping: NSEntityMapping?
    /// How far the running migration is, from 0 to 1.
    public internal(set) var migrationProgress: Float = 0
    /// Values for the developer's own use.
    open var userInfo: [AnyHashable: Any]?

    /// The context the source objects are fetched into while a mapping with entity migration
    /// policies or general value expressions runs (read-only; confinement, used on the
    /// migration's thread). Outside such a migration it has no store.
    public internal(set) var sourceContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    /// The context destination objects are created in while a mapping with entity migration
    /// policies or general value expressions runs; saved to the destination store at the end.
    public internal(set) var destinationContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    /// Which source objects became which destination objects, per entity mapping.
    var associations = MigrationAssociations()
    /// Whether the store type's own migration manager is used; there is none on Linux: every
    /// store type migrates through this class.
    open var usesStoreSpecificMigrationManager = false

    var cancellation: Error?
    /// The running migration's progress: a child of the `Progress` current when
    /// ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)``
    /// was called, so cancelling that progress cancels the migration.
    var progress: Progress?
    /// Objects the last migration wrote, by destination entity; the in-place migration checks
    /// the staging store holds exactly these before it installs it.
    var migratedObjectCounts: [String: Int] = [:]
    static let progressUnits: Int64 = 1_000

    /// Creates a manager for one pair of model versions.
    public init(sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        super.init()
    }

    /// Forgets the associations of source and destination objects and the migration contexts
    /// (Apple's `reset()`), so the manager can run another migration.
    open func reset() {
        associations = MigrationAssociations()
        sourceContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        destinationContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        currentEntityMapping = nil
        migrationProgress = 0
    }

    /// Asks the running migration to stop; it throws `error` at its next batch. Cancelling the
    /// `Progress` that was current when the migration started stops it too, with
    /// `NSMigrationCancelledError` (134120).
    open func cancelMigrationWithError(_ error: Error) { cancellation = error }

    /// Migrates the store at `sourceURL` into a new store at `destinationURL`.
    ///
    /// - Throws: `NSMigrationMissingMappingModelError` (134140) without a mapping;
    ///   `NSMigrationMissingSourceModelError` (134130) when the source store was not saved with
    ///   ``sourceModel``; `NSMigrationManagerSourceStoreError` (134150) /
    ///   `NSMigrationManagerDestinationStoreError` (134160) when a store cannot be opened or made
    ///   (a file already at `destinationURL` included); `NSMigrationError` (134110) for a value
    ///   that cannot be migrated or an object that fails validation, naming the object and the
    ///   property; the error given to ``cancelMigrationWithError(_:)``, or
    ///   `NSMigrationCancelledError` (134120) when the caller's `Progress` is cancelled. On any error the
    ///   destination store is deleted.
    open func migrateStore(
        from sourceURL: URL, sourceType: String, options sourceOptions: [AnyHashable: Any]? = nil, with mapping: NSMappingModel?,
        toDestinationURL destinationURL: URL, destinationType: String, destinationOptions: [AnyHashable: Any]? = nil
    ) throws {
        guard let mapping else {
            throw coreDataError(NSMigrationMissingMappingModelError, "no mapping model was given for the migration of \(sourceURL.path)")
        }
        mappingModel = mapping
        mapping.resolveGeneratedExpressions(from: sourceModel, to: destinationModel)
        migrationProgress = 0
        cancellation = nil
        let progress = Progress(totalUnitCount: Self.progressUnits)
        self.progress = progress
        defer { self.progress = nil }
        if progress.isCancelled { throw Self.cancelled(sourceURL) }
        defer { currentEntityMapping = nil }

        // A store added with a configuration holds (and records the hashes of) its entities only.
        let configuration = sourceOptions?[PrivateStoreOption.configuration] as? String
        var readOptions = sourceOptions ?? [:]
        readOptions[NSReadOnlyPersistentStoreOption] = true
        readOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        let sourceCoordinator = NSPersistentStoreCoordinator(managedObjectModel: sourceModel)
        let source: NSPersistentStore
        do {
            source = try sourceCoordinator.addPersistentStore(ofType: sourceType, configurationName: configuration, at: sourceURL, options: readOptions)
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
        // Between binary stores, a mapping that moves values as they are rewrites the records
        // themselves into the new file (Formats/migration.md §5).
        // Derived attributes are computed over the migrated objects, which needs the rows.
        if sourceType == NSBinaryStoreType, destinationType == NSBinaryStoreType, destinationOptions?[NSStoreUUIDKey] == nil,
           destinationModel.derivationIndex == nil, let binary = source.engine as? BinaryStore,
           !ObjectGraphMigration.isNeeded(for: mapping), let transcoding = try recordTranscoding(mapping, from: binary) {
            try exportRecords(from: binary, by: transcoding, to: destinationURL, configuration: configuration, in: fileSystem)
            migrationProgress = 1
            progress.completedUnitCount = Self.progressUnits
            return
        }
        let destinationCoordinator = NSPersistentStoreCoordinator(managedObjectModel: destinationModel)
        var writeOptions = destinationOptions ?? [:]
        writeOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        // The destination is synced when it is closed at the end, and deleted if the migration
        // fails before: its batches need no sync of their own.
        if writeOptions[NSBinaryStoreDurabilityOption] == nil { writeOptions[NSBinaryStoreDurabilityOption] = "normal" }
        if writeOptions[NSStoreUUIDKey] == nil, let uuid = (try? mapStoreError { () throws(StoreError) in try source.engine.metadata() })?[NSStoreUUIDKey] as? String {
            // The migrated store keeps the source's identity, so object URIs stay valid.
            writeOptions[PrivateStoreOption.storeUUID] = uuid
        }
        let destination: NSPersistentStore
        do {
            destination = try destinationCoordinator.addPersistentStore(ofType: destinationType, configurationName: configuration, at: destinationURL, options: writeOptions)
        } catch let error as NSError {
            throw coreDataError(NSMigrationManagerDestinationStoreError, "cannot make the destination store at \(destinationURL.path): \(error.localizedDescription)", [NSUnderlyingErrorKey: error])
        }
        do {
            if ObjectGraphMigration.isNeeded(for: mapping) {
                // The destination context's save computes the derived attributes of the objects it inserts.
                try runWithObjects(mapping, from: source, to: destination)
            } else {
                try run(mapping, from: source.engine, to: destination.engine)
                try computeDerivedAttributes(in: destination, of: destinationCoordinator)
            }
            try destinationCoordinator.remove(destination)
        } catch {
            if destinationCoordinator.persistentStores.contains(where: { $0 === destination }) { try? destinationCoordinator.remove(destination) }
            if destinationType != NSInMemoryStoreType { try? StoreMigration.removeFiles(of: destinationURL.path, in: fileSystem) }
            throw error
        }
        migrationProgress = 1
        progress.completedUnitCount = Self.progressUnits
    }

    /// Sets the derived attributes of the objects the row path migrated (written as rows, with
    /// no context to compute them) from their destination values; `now()` is the migration's time.
    private func computeDerivedAttributes(in destination: NSPersistentStore, of coordinator: NSPersistentStoreCoordinator) throws {
        guard let recomputation = DerivedValueRecomputation(coordinator: coordinator, history: nil) else { return }
        do {
            try recomputation.recomputeAll(in: destination)
        } catch {
            throw coreDataError(NSMigrationError, "the derived attributes of the migrated objects could not be computed: \(error.localizedDescription)", [NSUnderlyingErrorKey: error])
        }
    }

    private static func cancelled(_ url: URL) -> NSError {
        coreDataError(NSMigrationCancelledError, "the migration of \(url.path) was cancelled; the source store is unchanged")
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

    /// One entity mapping ready to run: its entities, its objects' keys, and per destination slot
    /// where the value comes from.
    struct Plan {
        let mapping: NSEntityMapping
        let source: NSEntityDescription
        let destination: NSEntityDescription
        let sourceLayout: PropertyLayout
        let destinationLayout: PropertyLayout
        /// The source objects' keys, ascending.
        var sourceKeys: [Int64] = []
        /// The destination key of each source object; empty when every object keeps its key.
        var destinationKeys: [Int64] = []
        /// Per destination attribute: its slot, the source attribute's name and its slot in the
        /// source layout (`nil` for a constant or the default), the constant (``StoreValue/null``
        /// for none), and the value an empty one takes: the default of an added attribute or of
        /// one that became mandatory (an optional one stays empty, as Apple's migration leaves it).
        var attributes: [(slot: Int, attribute: NSAttributeDescription, from: String?, fromSlot: Int?, constant: StoreValue, fallback: StoreValue)] = []
        var relationships: [(slot: Int, relationship: NSRelationshipDescription, from: String, fromSlot: Int?)] = []

        /// The destination key of the source object with `key`, `nil` when it is not migrated.
        func destinationKey(of key: Int64) -> Int64? {
            var low = 0
            var high = sourceKeys.count
            while low < high {
                let middle = (low + high) / 2
                if sourceKeys[middle] < key { low = middle + 1 } else { high = middle }
            }
            guard low < sourceKeys.count, sourceKeys[low] == key else { return nil }
            return destinationKeys.isEmpty ? key : destinationKeys[low]
        }
    }

    /// Objects read, converted and saved at a time into a store that appends saves (the binary
    /// store); a store whose saves rewrite it whole (``PersistentStoreEngine/savesWholeStore``)
    /// takes them in one save.
    private static let batchSize = 10_000

    /// Runs Apple's three stages, streaming: the instance stage lists each entity's keys and
    /// gives each object its destination key (memory: 16 bytes per object); then, batch by
    /// batch, the relationship stage reads the source rows and re-links their destinations
    /// through those keys, and the validation stage checks each destination row before its
    /// batch is saved. Memory holds one batch of rows at a time.
    private func run(_ mapping: NSMappingModel, from source: any PersistentStoreEngine, to destination: any PersistentStoreEngine) throws {
        migratedObjectCounts = [:]
        var plans = try (mapping.entityMappings ?? []).compactMap(plan(for:))
        var done: Float = 0
        var total = Float(max(1, plans.count))
        func advance(_ amount: Float) throws {
            try checkCancellation()
            done += amount
            migrationProgress = min(0.99, done / total)
            progress?.completedUnitCount = Int64(Double(migrationProgress) * Double(Self.progressUnits))
        }

        // Instances: every source object's key, and its key in the destination.
        for index in plans.indices {
            currentEntityMapping = plans[index].mapping
            try advance(1)
            let entity = plans[index].source
            let request = StoreFetchRequest(entity: entity, includesSubentities: false, resultType: .objectIDs)
            let ids = try mapStoreError { () throws(StoreError) -> [StoreObjectID] in
                switch try source.execute(request) {
                case .objectIDs(let ids): return ids
                case .rows(let rows): return rows.map(\.objectID)
                case .count: return []
                }
            }
            plans[index].sourceKeys = ids.lazy.filter { $0.entityName == entity.name }.map(\.primaryKey).sorted()
        }
        try assignKeys(&plans, in: destination)
        var planBySourceEntity: [String: Int] = [:]
        for (index, plan) in plans.enumerated() { if let name = plan.source.name { planBySourceEntity[name] = index } }
        func migratedID(_ id: StoreObjectID) -> StoreObjectID? {
            guard let index = planBySourceEntity[id.entityName], plans[index].destination.name != nil,
                  let key = plans[index].destinationKey(of: id.primaryKey) else { return nil }
            return StoreObjectID(entity: plans[index].destination.entityNumber, primaryKey: key)
        }

        try copyMetadata(from: source, to: destination)

        // Relationships, values and validation, batch by batch.
        let batchSize = destination.savesWholeStore ? Int.max : Self.batchSize
        let objects = plans.reduce(0) { $0 + $1.sourceKeys.count }
        total = Float(plans.count) + Float(max(1, objects)) / Float(Self.batchSize)
        var pending: [StoreRow] = []
        func flush() throws {
            guard !pending.isEmpty else { return }
            let batch = pending
            pending = []
            var changes = StoreChangeSet(inserted: batch)
            changes.checksReferences = false
            _ = try mapStoreError { () throws(StoreError) -> [StoreObjectID: Int64] in try destination.save(changes) }
        }
        for plan in plans {
            currentEntityMapping = plan.mapping
            guard let sourceName = plan.source.name else { continue }
            let layout = plan.destinationLayout
            let mandatory = mandatorySlots(of: plan.destination)
            let sourceEntity = EntityNumber(sourceName)
            var start = 0
            while start < plan.sourceKeys.count {
                let end = min(plan.sourceKeys.count, start + Self.batchSize)
                let ids = plan.sourceKeys[start..<end].map { StoreObjectID(entity: sourceEntity, primaryKey: $0) }
                var rows = try mapStoreError { () throws(StoreError) -> [StoreRow] in try source.rows(for: ids) }
                rows.sort { $0.objectID.primaryKey < $1.objectID.primaryKey }
                for row in rows {
                    guard let id = migratedID(row.objectID) else { continue }
                    let migrated = StoreRow(objectID: id, version: 0, layout: layout, slots: try values(of: row, by: plan, in: source, mapping: migratedID))
                    for (slot, property) in mandatory where migrated.slots[slot]?.isNull ?? true {
                        throw migrationError(
                            "\(plan.destination.name ?? "").\(property.name) is mandatory, and the object \(row.objectID) migrated with mapping \(plan.mapping.name ?? "") has no value for it",
                            object: row.objectID, property: property.name)
                    }
                    pending.append(migrated)
                    migratedObjectCounts[id.entityName, default: 0] += 1
                }
                if pending.count >= batchSize { try flush() }
                try advance(Float(end - start) / Float(Self.batchSize))
                start = end
            }
        }
        try flush()
        currentEntityMapping = nil
    }

    /// The destination values of one source row, by slot of the destination layout.
    private func values(
        of row: StoreRow, by plan: Plan, in source: any PersistentStoreEngine, mapping migratedID: (StoreObjectID) -> StoreObjectID?
    ) throws -> [StoreValue?] {
        var slots: [StoreValue?] = .emptySlots(plan.destinationLayout.count)
        // Rows in the source entity's own layout (the common case) are read by slot.
        let bySlot = row.layout === plan.sourceLayout
        for (slot, _, from, fromSlot, constant, fallback) in plan.attributes {
            var value = constant
            if bySlot, let fromSlot {
                value = row.slots[fromSlot] ?? .null
            } else if let from {
                value = row.contains(from) ? row[from] : .null
            }
            if value.isNull { value = fallback }
            if !value.isNull { slots[slot] = value }
        }
        for (slot, relationship, from, fromSlot) in plan.relationships {
            // A row without the relationship (a store that loads them lazily) is asked for it.
            var stored: StoreValue? = bySlot ? fromSlot.flatMap { row.slots[$0] } : (row.contains(from) ? row[from] : nil)
            if stored == nil {
                stored = try mapStoreError { () throws(StoreError) -> StoreValue in try source.destinations(of: row.objectID, relationship: from) }
            }
            let targets: [StoreObjectID]
            switch stored ?? .null {
            case .reference(let target): targets = migratedID(target).map { [$0] } ?? []
            case .references(let list): targets = list.compactMap(migratedID)
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
        return slots
    }

    /// The slots of the mandatory attributes and to-one relationships the validation stage checks.
    func mandatorySlots(of entity: NSEntityDescription) -> [(Int, NSPropertyDescription)] {
        let layout = entity.propertyLayout
        var mandatory: [(Int, NSPropertyDescription)] = []
        for property in entity.properties where !property.isOptional && !property.isTransient {
            guard let slot = layout.slot(of: property.name) else { continue }
            if let relationship = property as? NSRelationshipDescription, relationship.isToMany { continue }
            // Computed after the rows are written (computeDerivedAttributes(in:of:)), not migrated.
            if property is NSDerivedAttributeDescription { continue }
            mandatory.append((slot, property))
        }
        return mandatory
    }

    /// Gives every source object its destination key. Keys are kept where the destination
    /// hands them out again: keys are asked for in the order of the source keys, run by run (a
    /// run is consecutive keys of one entity), skipping ahead over the gaps deleted objects
    /// left, so a fresh store whose counters are per entity (binary) or store-wide (XML) gives
    /// every object its old key and its object URI stays valid. Where a key cannot be kept (the
    /// destination's counter is already past it, or the gap is too wide to skip), the run gets
    /// new keys.
    private func assignKeys(_ plans: inout [Plan], in destination: any PersistentStoreEngine) throws {
        var order: [(plan: Int, position: Int)] = []
        order.reserveCapacity(plans.reduce(0) { $0 + $1.sourceKeys.count })
        for (planIndex, plan) in plans.enumerated() {
            for position in plan.sourceKeys.indices { order.append((planIndex, position)) }
        }
        func key(_ entry: (plan: Int, position: Int)) -> Int64 { plans[entry.plan].sourceKeys[entry.position] }
        order.sort { lhs, rhs in
            let (l, r) = (key(lhs), key(rhs))
            return l != r ? l < r : lhs.plan < rhs.plan
        }
        let widestSkip = Int64(order.count) + 1_000_000
        var assigned = plans.map { [Int64](repeating: 0, count: $0.sourceKeys.count) }
        var start = 0
        while start < order.count {
            let planIndex = order[start].plan
            let first = key(order[start])
            var end = start + 1
            while end < order.count, order[end].plan == order[start].plan, key(order[end]) == first &+ Int64(end - start) { end += 1 }
            let run = end - start
            guard let name = plans[planIndex].destination.name else { start = end; continue }
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
            for offset in 0..<run { assigned[planIndex][order[start + offset].position] = keys[offset] }
            start = end
        }
        for index in plans.indices {
            plans[index].destinationKeys = assigned[index] == plans[index].sourceKeys ? [] : assigned[index]
        }
    }

    /// Resolves an entity mapping against the two models; `nil` for one that moves no objects.
    func plan(for mapping: NSEntityMapping) throws -> Plan? {
        switch mapping.mappingType {
        case .addEntityMappingType, .removeEntityMappingType, .undefinedEntityMappingType:
            return nil
        case .customEntityMappingType:
            // ObjectGraphMigration.isNeeded sends a mapping with a custom entity mapping to the
            // object path, so the row path never gets one.
            preconditionFailure("CoreData: the row migration was given the custom entity mapping \(mapping.name ?? "")")
        case .copyEntityMappingType, .transformEntityMappingType:
            break
        }
        guard let sourceName = mapping.sourceEntityName, let sourceEntity = sourceModel.entitiesByName[sourceName] else {
            throw coreDataError(NSMigrationMissingSourceModelError, "entity mapping \(mapping.name ?? "") names source entity '\(mapping.sourceEntityName ?? "")', which the source model does not have")
        }
        guard let destinationName = mapping.destinationEntityName, let destinationEntity = destinationModel.entitiesByName[destinationName] else {
            throw coreDataError(NSMigrationError, "entity mapping \(mapping.name ?? "") names destination entity '\(mapping.destinationEntityName ?? "")', which the destination model does not have")
        }
        if !mapping.versionHashesAreApples, let hash = mapping.sourceEntityVersionHash, hash != sourceEntity.versionHash {
            throw coreDataError(NSMigrationMissingSourceModelError, "entity mapping \(mapping.name ?? "") was made for another version of source entity '\(sourceName)'")
        }
        guard !sourceEntity.isAbstract else { return nil }
        var plan = Plan(
            mapping: mapping, source: sourceEntity, destination: destinationEntity,
            sourceLayout: sourceEntity.propertyLayout, destinationLayout: destinationEntity.propertyLayout)
        let layout = destinationEntity.propertyLayout
        let attributeMappings = Self.attributeMappings(of: mapping, destination: destinationEntity)
        for propertyMapping in attributeMappings {
            guard let name = propertyMapping.name, let attribute = destinationEntity.attributesByName[name], !attribute.isTransient,
                  let slot = layout.slot(of: name) else { continue }
            let fallback = attribute.defaultValue.flatMap { StoreValue(attributeValue: $0, type: attribute.attributeType) } ?? .null
            if let key = propertyMapping.sourceKey {
                guard let old = sourceEntity.attributesByName[key], MappingInference.converts(old.attributeType, to: attribute.attributeType) else {
                    throw coreDataError(NSMigrationError, "\(mapping.name ?? "").\(name): the source has no attribute '\(key)' of a type that converts to \(attribute.attributeType)")
                }
                plan.attributes.append((slot, attribute, key, sourceEntity.propertyLayout.slot(of: key), .null, attribute.isOptional ? .null : fallback))
            } else if let expression = propertyMapping.valueExpression {
                guard expression.expressionType == .constantValue else {
                    throw coreDataError(NSMigrationError, "\(mapping.name ?? "").\(name): the value expression \(expression) is not supported on Linux yet (only $source.key, valueForKey: and constants)")
                }
                plan.attributes.append((slot, attribute, nil, nil, StoreValue(attributeValue: expression.storedConstantValue, type: attribute.attributeType) ?? .null, fallback))
            } else {
                plan.attributes.append((slot, attribute, nil, nil, .null, fallback))
            }
        }
        let relationshipMappings = Self.relationshipMappings(of: mapping, destination: destinationEntity)
        for propertyMapping in relationshipMappings {
            guard let name = propertyMapping.name, let relationship = destinationEntity.relationshipsByName[name], !relationship.isTransient,
                  let slot = layout.slot(of: name) else { continue }
            guard let expression = propertyMapping.valueExpression else { continue }
            guard let key = propertyMapping.sourceKey, sourceEntity.relationshipsByName[key] != nil else {
                throw coreDataError(NSMigrationError, "\(mapping.name ?? "").\(name): the value expression \(expression) does not name a relationship of '\(sourceName)'")
            }
            plan.relationships.append((slot, relationship, key, sourceEntity.propertyLayout.slot(of: key)))
        }
        return plan
    }

    /// A mapping's attribute mappings; a copy mapping without any reads every attribute of its
    /// destination entity from the source property of the same name.
    static func attributeMappings(of mapping: NSEntityMapping, destination: NSEntityDescription) -> [NSPropertyMapping] {
        guard mapping.mappingType == .copyEntityMappingType, mapping.attributeMappings == nil else { return mapping.attributeMappings ?? [] }
        return destination.attributesByName.keys.sorted().map { NSPropertyMapping(name: $0, valueExpression: NSPropertyMapping.readingSource($0)) }
    }

    /// A mapping's relationship mappings; a copy mapping without any maps every relationship of
    /// its destination entity to the migrated destinations of the source relationship.
    static func relationshipMappings(of mapping: NSEntityMapping, destination: NSEntityDescription) -> [NSPropertyMapping] {
        guard mapping.mappingType == .copyEntityMappingType, mapping.relationshipMappings == nil else { return mapping.relationshipMappings ?? [] }
        return destination.relationshipsByName.keys.sorted().map { NSPropertyMapping(name: $0, valueExpression: NSPropertyMapping.migratedDestinations(relationship: $0)) }
    }

    func migrationError(_ description: String, object: StoreObjectID, property: String) -> NSError {
        coreDataError(NSMigrationError, description, [NSValidationKeyErrorKey: property, "sourceObject": object.description])
    }
}

