import CoreDataModel
import CoreDataStorage
import Foundation

extension NSPersistentStoreCoordinator {
    /// Migrates the store at `url` to this coordinator's model in place, as `addPersistentStore`
    /// does with `NSMigratePersistentStoresAutomaticallyOption`: finds the model version the store
    /// was saved with, infers a mapping (directly, else version by version through the package),
    /// migrates into a staging file beside the store and installs it with one rename.
    /// `metadata` is the store's, as the add already read it.
    ///
    /// - Throws: `NSMigrationMissingSourceModelError` (134130) when no known model version matches
    ///   the store; `NSMigrationMissingMappingModelError` (134140) when no mapping is found or can
    ///   be inferred (the message lists each change inference refused; the 134190 error is the
    ///   underlying error); the migration manager's errors. The store is unchanged on any error.
    func migrateStore(ofType storeType: String, at url: URL, configuration: String?, options: [AnyHashable: Any], metadata: [String: Any]) throws {
        if let staged = options[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager {
            return try migrateStore(ofType: storeType, at: url, configuration: configuration, options: options, metadata: metadata, stages: staged)
        }
        let plan = try MigrationPlan(
            store: url.storeLocation, metadata: metadata, versions: StoreMigration.knownVersions(of: managedObjectModel),
            destination: managedObjectModel, configuration: configuration,
            mappingFolders: StoreMigration.mappingFolders(of: managedObjectModel),
            infers: (options[NSInferMappingModelAutomaticallyOption] as? Bool) ?? false)
        try migrateInPlace(
            ofType: storeType, at: url, configuration: configuration, options: options,
            steps: plan.steps.map { ($0.source.model, $0.destination.model, $0.mapping) })
    }

    /// Migrates the store at `url` in place along `plan` (the CLI plans with a mapping model file
    /// of its own before it migrates).
    package func migrateStore(ofType storeType: String, at url: URL, configuration: String?, options: [AnyHashable: Any], plan: MigrationPlan) throws {
        try migrateInPlace(
            ofType: storeType, at: url, configuration: configuration, options: options,
            steps: plan.steps.map { ($0.source.model, $0.destination.model, $0.mapping) })
    }

    /// Runs `steps` (each a source version, a destination version and the mapping between them)
    /// on the store at `url`: each step migrates into a staging store beside it, then the last
    /// staging store is installed in its place (`Formats/migration.md` §3).
    private func migrateInPlace(
        ofType storeType: String, at url: URL, configuration: String?, options: [AnyHashable: Any],
        steps: [(NSManagedObjectModel, NSManagedObjectModel, NSMappingModel)]
    ) throws {
        guard let source = steps.first?.0 else { return }
        // An Apple SQLite file stays one: its staging copy must not become a binary store.
        let storeType = storeType == NSSQLiteStoreType && StoreTypeRegistry.holdsAppleSQLiteStore(url) ? NSAppleSQLiteStoreType : storeType
        let fileSystem = PrivateStoreOption.fileSystem(options)
        // The log must be empty before the files are swapped: add and remove the store with its
        // own model, which checkpoints it.
        var ownOptions = options
        ownOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        ownOptions[NSPersistentStoreStagedMigrationManagerOptionKey] = nil
        ownOptions[PrivateStoreOption.configuration] = configuration
        let checkpoint = NSPersistentStoreCoordinator(managedObjectModel: source)
        try checkpoint.remove(try checkpoint.addPersistentStore(ofType: storeType, configurationName: configuration, at: url, options: ownOptions))

        if let provider = StoreTypeRegistry.provider(for: storeType), let staging = provider.staging {
            return try migrateInPlace(ofType: storeType, at: url, configuration: configuration, options: ownOptions, steps: steps, provider: provider, staging: staging)
        }
        var current = url
        var staged: [String] = []
        var counts: [String: Int] = [:]
        do {
            for (index, (from, to, mapping)) in steps.enumerated() {
                let staging = url.path + StoreMigration.stagingSuffix(index + 1)
                try StoreMigration.removeFiles(of: staging, in: fileSystem)
                let manager = NSMigrationManager(sourceModel: from, destinationModel: to)
                try manager.migrateStore(
                    from: current, sourceType: storeType, options: ownOptions, with: mapping,
                    toDestinationURL: URL(fileURLWithPath: staging), destinationType: storeType, destinationOptions: ownOptions)
                staged.append(staging)
                current = URL(fileURLWithPath: staging)
                counts = manager.migratedObjectCounts
            }
            for path in staged.dropLast() { try StoreMigration.removeFiles(of: path, in: fileSystem) }
            if let final = staged.last, let destination = steps.last?.1 {
                try Self.verifyStaged(final, ofType: storeType, model: destination, configuration: configuration, options: ownOptions, expecting: counts)
                try StoreMigration.install(final, at: url.path, keepingStagedLog: false, in: fileSystem)
            }
        } catch {
            for path in staged { try? StoreMigration.removeFiles(of: path, in: fileSystem) }
            throw error
        }
    }

    /// A staged migration (``NSStagedMigrationManager``): the stages' versions in order form the
    /// chain; from the version the store was saved with, each step is inferred, migrated and
    /// installed on its own, with a custom stage's handlers before and after its step.
    ///
    /// - Throws: 134130 when the store's version, or a version a stage names, is not found;
    ///   134140 when the stages do not end at this coordinator's model or a step cannot be
    ///   inferred; a handler's error as it was thrown. The store keeps every step completed.
    private func migrateStore(
        ofType storeType: String, at url: URL, configuration: String?, options: [AnyHashable: Any], metadata: [String: Any],
        stages manager: NSStagedMigrationManager
    ) throws {
        var transitions: [(from: String, to: String, custom: NSCustomMigrationStage?)] = []
        var last: String?
        var models: [String: NSManagedObjectModel] = [:]
        for version in StoreMigration.knownVersions(of: managedObjectModel) { models[version.model.versionChecksum] = version.model }
        models[managedObjectModel.versionChecksum] = managedObjectModel
        for stage in manager.stages {
            if let lightweight = stage as? NSLightweightMigrationStage {
                for checksum in lightweight.versionChecksums {
                    if let previous = last, previous != checksum { transitions.append((previous, checksum, nil)) }
                    last = checksum
                }
            } else if let custom = stage as? NSCustomMigrationStage {
                for reference in [custom.currentModel, custom.nextModel] where models[reference.versionChecksum] == nil {
                    guard let model = reference.model else {
                        throw coreDataError(NSMigrationMissingSourceModelError, "the custom migration stage '\(custom.label ?? "")' names a model (checksum \(reference.versionChecksum)) that cannot be loaded or has another checksum")
                    }
                    try? model.freeze()
                    models[reference.versionChecksum] = model
                }
                if let previous = last, previous != custom.currentModel.versionChecksum { transitions.append((previous, custom.currentModel.versionChecksum, nil)) }
                transitions.append((custom.currentModel.versionChecksum, custom.nextModel.versionChecksum, custom))
                last = custom.nextModel.versionChecksum
            }
        }
        guard last == managedObjectModel.versionChecksum else {
            throw coreDataError(NSMigrationMissingMappingModelError, "the migration stages end at the model version with checksum \(last ?? "none"), not at the coordinator's model (\(managedObjectModel.versionChecksum))")
        }
        let chain = [transitions.first?.from].compactMap { $0 } + transitions.map(\.to)
        guard let position = chain.firstIndex(where: { models[$0]?.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata) ?? false }) else {
            throw coreDataError(NSMigrationMissingSourceModelError, "the store at \(url.storeLocation) was saved with a model version none of the migration stages names")
        }
        for transition in transitions.dropFirst(position) {
            guard let from = models[transition.from], let to = models[transition.to] else {
                throw coreDataError(NSMigrationMissingSourceModelError, "a lightweight migration stage names the model version with checksum \(models[transition.from] == nil ? transition.from : transition.to), which is not among the model's versions")
            }
            if let custom = transition.custom, let handler = custom.willMigrateHandler {
                try withContainer(on: url, ofType: storeType, model: from, options: options, for: manager) { try handler(manager, custom) }
            }
            let mapping: NSMappingModel
            do {
                mapping = try NSMappingModel.inferredMappingModel(forSourceModel: from, destinationModel: to)
            } catch let refused as NSError {
                throw MigrationPlan.missingMapping("cannot migrate the store at \(url.storeLocation) in stage '\(transition.custom?.label ?? "lightweight")'", refused: refused)
            }
            try migrateInPlace(ofType: storeType, at: url, configuration: configuration, options: options, steps: [(from, to, mapping)])
            if let custom = transition.custom, let handler = custom.didMigrateHandler {
                try withContainer(on: url, ofType: storeType, model: to, options: options, for: manager) { try handler(manager, custom) }
            }
        }
    }

    /// Adds the store at `url` with `model` to a container, sets it as the manager's
    /// ``NSStagedMigrationManager/container`` while `body` runs, then removes it.
    private func withContainer(
        on url: URL, ofType storeType: String, model: NSManagedObjectModel, options: [AnyHashable: Any],
        for manager: NSStagedMigrationManager, _ body: () throws -> Void
    ) throws {
        let container = NSPersistentContainer(name: "StagedMigration", managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: url)
        description.type = storeType
        for (key, value) in options { if let key = key as? String { description.options[key] = value } }
        description.options[NSPersistentStoreStagedMigrationManagerOptionKey] = nil
        description.shouldMigrateStoreAutomatically = false
        container.persistentStoreDescriptions = [description]
        var failure: Error?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        manager.container = container
        defer {
            manager.container = nil
            for store in container.persistentStoreCoordinator.persistentStores { try? container.persistentStoreCoordinator.remove(store) }
        }
        try body()
    }

    /// Checks a closed staging store before it replaces the store (§3 step 3): it opens from
    /// the file (header, root, catalog, metadata and index checksums), with the destination
    /// model's version hashes, and holds exactly the objects the migration wrote, entity by entity.
    /// ``migrateInPlace(ofType:at:configuration:options:steps:)`` for a store another module
    /// provides (the PostgreSQL store): each step migrates into the store at the provider's
    /// staging URL, and the provider installs the last one in the store's place.
    private func migrateInPlace(
        ofType storeType: String, at url: URL, configuration: String?, options: [AnyHashable: Any],
        steps: [(NSManagedObjectModel, NSManagedObjectModel, NSMappingModel)], provider: StoreEngineProvider,
        staging: StoreEngineProvider.Staging
    ) throws {
        var current = url
        var staged: [URL] = []
        var counts: [String: Int] = [:]
        do {
            for (index, (from, to, mapping)) in steps.enumerated() {
                let target = try staging.url(url, index + 1)
                try? provider.destroy(target, options)
                let manager = NSMigrationManager(sourceModel: from, destinationModel: to)
                try manager.migrateStore(
                    from: current, sourceType: storeType, options: options, with: mapping,
                    toDestinationURL: target, destinationType: storeType, destinationOptions: options)
                staged.append(target)
                current = target
                counts = manager.migratedObjectCounts
            }
            for target in staged.dropLast() { try provider.destroy(target, options) }
            if let final = staged.last, let destination = steps.last?.1 {
                try Self.verifyStaged(final, ofType: storeType, model: destination, configuration: configuration, options: options, expecting: counts)
                try staging.install(final, url, options)
            }
        } catch {
            for target in staged { try? provider.destroy(target, options) }
            throw error
        }
    }

    private static func verifyStaged(
        _ path: String, ofType storeType: String, model: NSManagedObjectModel, configuration: String?,
        options: [AnyHashable: Any], expecting counts: [String: Int]
    ) throws {
        try verifyStaged(URL(fileURLWithPath: path), ofType: storeType, model: model, configuration: configuration, options: options, expecting: counts)
    }

    private static func verifyStaged(
        _ url: URL, ofType storeType: String, model: NSManagedObjectModel, configuration: String?,
        options: [AnyHashable: Any], expecting counts: [String: Int]
    ) throws {
        var readOptions = options
        readOptions[NSReadOnlyPersistentStoreOption] = true
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store: NSPersistentStore
        do {
            store = try coordinator.addPersistentStore(ofType: storeType, configurationName: configuration, at: url, options: readOptions)
        } catch {
            throw coreDataError(NSMigrationError, "the migrated store does not open, so the store was not replaced: \((error as NSError).localizedDescription)", [NSUnderlyingErrorKey: error])
        }
        defer { try? coordinator.remove(store) }
        for entity in coordinator.entities(of: store) where !entity.isAbstract {
            guard let name = entity.name else { continue }
            let request = StoreFetchRequest(entity: entity, includesSubentities: false, resultType: .count)
            let found = try mapStoreError { () throws(StoreError) -> Int in
                if case .count(let count) = try store.engine.execute(request) { return count }
                return -1
            }
            guard found == counts[name, default: 0] else {
                throw coreDataError(NSMigrationError, "the migrated store holds \(found) \(name) objects where the migration wrote \(counts[name, default: 0]), so the store was not replaced")
            }
        }
    }
}
