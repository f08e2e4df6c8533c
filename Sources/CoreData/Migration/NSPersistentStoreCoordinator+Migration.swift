import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataFileSystem
import CoreDataModel
import CoreDataStorage
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation

extension NSPersistentStoreCoordinator {
    // MARK: A store's metadata without adding it

    /// The metadata of the store at `url`, read without a model and without changing the file:
    /// `NSStoreUUIDKey`, `NSStoreTypeKey`, `NSStoreModelVersionHashes` and the app's own entries.
    ///
    /// The usual "does this store need migration?" check is
    /// `model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)`.
    ///
    /// - Throws: `NSFileReadNoSuchFileError` (260) when no file is there; the store's open errors
    ///   (`NSPersistentStoreInvalidFileError` for a damaged file); `NSPersistentStoreInvalidTypeError`
    ///   for a type without files (in-memory) or a custom store class.
    /// Threading: safe from any thread. Complexity: a binary store reads its header pages and
    /// replays its log; an XML store parses the whole file.
    public class func metadataForPersistentStore(ofType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        let fileSystem = PrivateStoreOption.fileSystem(options)
        guard fileSystem.fileExists(url.path) else {
            throw coreDataError(NSFileReadNoSuchFileError, "no store file at \(url.path)", [NSFilePathErrorKey: url.path])
        }
        switch storeType {
        case NSBinaryStoreType, NSSQLiteStoreType:
            return try mapStoreError { () throws(StoreError) -> [String: Any] in
                var settings = BinaryStoreOptions()
                settings.fileSystem = fileSystem
                settings.readOnly = true
                let store = try BinaryStore(path: url.path, model: emptyModel, metadata: StoreMetadata(), options: settings)
                defer { try? store.close() }
                return try store.metadata().values
            }
        case NSXMLStoreType:
            return XMLStoreSchema.storeMetadata(of: try readXMLDocument(at: url, in: fileSystem).info).values
        default:
            throw coreDataError(NSPersistentStoreInvalidTypeError, "cannot read the metadata of a store of type '\(storeType)' without adding it")
        }
    }

    /// Apple's `StoreType`-spelled ``metadataForPersistentStore(ofType:at:options:)``.
    public class func metadataForPersistentStore(type storeType: NSPersistentStore.StoreType, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        try metadataForPersistentStore(ofType: storeType.rawValue, at: url, options: options)
    }

    /// Replaces the metadata of the store at `url` without adding it; the store's own keys
    /// (`NSStoreUUIDKey`, `NSStoreTypeKey`, the version hashes) are kept when `metadata` leaves
    /// them out.
    ///
    /// - Throws: as ``metadataForPersistentStore(ofType:at:options:)``, and the store's write errors.
    public class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreOfType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil) throws {
        let fileSystem = PrivateStoreOption.fileSystem(options)
        guard fileSystem.fileExists(url.path) else {
            throw coreDataError(NSFileReadNoSuchFileError, "no store file at \(url.path)", [NSFilePathErrorKey: url.path])
        }
        func merged(_ current: StoreMetadata) -> StoreMetadata {
            var result = StoreMetadata()
            for key in [NSStoreUUIDKey, NSStoreTypeKey, NSStoreModelVersionHashesKey] { result[key] = current[key] }
            for (key, value) in metadata ?? [:] { result[key] = value }
            return result
        }
        switch storeType {
        case NSBinaryStoreType, NSSQLiteStoreType:
            try mapStoreError { () throws(StoreError) in
                var settings = BinaryStoreOptions()
                settings.fileSystem = fileSystem
                let store = try BinaryStore(path: url.path, model: emptyModel, metadata: StoreMetadata(), options: settings)
                defer { try? store.close() }
                try store.setMetadata(merged(try store.metadata()))
            }
        case NSXMLStoreType:
            let described = XMLStoreDescribedModel.describe(try readXMLDocument(at: url, in: fileSystem))
            if let problem = described.problems.first {
                throw coreDataError(NSPersistentStoreInvalidFileError, "\(url.path): \(problem)")
            }
            try? described.model.freeze()
            try mapStoreError { () throws(StoreError) in
                var settings = XMLStoreOptions()
                settings.fileSystem = fileSystem
                let store = try XMLStore(path: url.path, model: described.model, metadata: StoreMetadata(), options: settings)
                defer { try? store.close() }
                try store.setMetadata(merged(try store.metadata()))
            }
        default:
            throw coreDataError(NSPersistentStoreInvalidTypeError, "cannot set the metadata of a store of type '\(storeType)' without adding it")
        }
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL` (Apple's
    /// `replacePersistentStore`): the destination's files are replaced by one atomic rename, the
    /// folder synced; the source stays. A missing destination is created.
    ///
    /// - Throws: `NSPersistentStoreOperationError` when either store is added to a coordinator
    ///   (remove it first) or a file operation fails.
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [AnyHashable: Any]? = nil, ofType storeType: String
    ) throws {
        guard storeType != NSInMemoryStoreType else { return }
        for url in [destinationURL, sourceURL] where persistentStore(for: url) != nil {
            throw coreDataError(NSPersistentStoreOperationError, "cannot replace a store while the store at \(url.path) is added to the coordinator")
        }
        let fileSystem = POSIXFileSystem()
        let staging = destinationURL.path + StoreMigration.stagingSuffix(0)
        try StoreMigration.removeFiles(of: staging, in: fileSystem)
        do {
            try FileManager.default.copyItem(atPath: sourceURL.path, toPath: staging)
            if FileManager.default.fileExists(atPath: sourceURL.path + "-wal") {
                try FileManager.default.copyItem(atPath: sourceURL.path + "-wal", toPath: staging + "-wal")
            }
        } catch {
            try? StoreMigration.removeFiles(of: staging, in: fileSystem)
            throw coreDataError(NSPersistentStoreOperationError, "cannot copy the store at \(sourceURL.path): \(error.localizedDescription)")
        }
        try StoreMigration.install(staging, at: destinationURL.path, keepingStagedLog: true, in: fileSystem)
    }

    /// Apple's `StoreType`-spelled ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)``.
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [AnyHashable: Any]? = nil, type storeType: NSPersistentStore.StoreType
    ) throws {
        try replacePersistentStore(
            at: destinationURL, destinationOptions: destinationOptions, withPersistentStoreFrom: sourceURL, sourceOptions: sourceOptions,
            ofType: storeType.rawValue)
    }

    // MARK: Migration when a store is added

    /// Migrates the store at `url` to this coordinator's model in place, as `addPersistentStore`
    /// does with `NSMigratePersistentStoresAutomaticallyOption`: finds the model version the store
    /// was saved with, infers a mapping (directly, else version by version through the package),
    /// migrates into a staging file beside the store and installs it with one rename.
    ///
    /// - Throws: `NSMigrationMissingSourceModelError` (134130) when no known model version matches
    ///   the store; `NSMigrationMissingMappingModelError` (134140) when no mapping is found or can
    ///   be inferred (the message lists each change inference refused; the 134190 error is the
    ///   underlying error); the migration manager's errors. The store is unchanged on any error.
    func migrateStore(ofType storeType: String, at url: URL, configuration: String?, options: [AnyHashable: Any]) throws {
        if let staged = options[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager {
            return try migrateStore(ofType: storeType, at: url, configuration: configuration, options: options, stages: staged)
        }
        let metadata = try Self.metadataForPersistentStore(ofType: storeType, at: url, options: options)
        let plan = try MigrationPlan(
            store: url.path, metadata: metadata, versions: StoreMigration.knownVersions(of: managedObjectModel),
            destination: managedObjectModel, configuration: configuration,
            infers: (options[NSInferMappingModelAutomaticallyOption] as? Bool) ?? false)
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
        let fileSystem = PrivateStoreOption.fileSystem(options)
        // The log must be empty before the files are swapped: add and remove the store with its
        // own model, which checkpoints it.
        var ownOptions = options
        ownOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        ownOptions[NSPersistentStoreStagedMigrationManagerOptionKey] = nil
        ownOptions[PrivateStoreOption.configuration] = configuration
        let checkpoint = NSPersistentStoreCoordinator(managedObjectModel: source)
        try checkpoint.remove(try checkpoint.addPersistentStore(ofType: storeType, configurationName: configuration, at: url, options: ownOptions))

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
        ofType storeType: String, at url: URL, configuration: String?, options: [AnyHashable: Any], stages manager: NSStagedMigrationManager
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
        let metadata = try Self.metadataForPersistentStore(ofType: storeType, at: url, options: options)
        let chain = [transitions.first?.from].compactMap { $0 } + transitions.map(\.to)
        guard let position = chain.firstIndex(where: { models[$0]?.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata) ?? false }) else {
            throw coreDataError(NSMigrationMissingSourceModelError, "the store at \(url.path) was saved with a model version none of the migration stages names")
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
                throw coreDataError(
                    NSMigrationMissingMappingModelError, "cannot migrate the store at \(url.path) in stage '\(transition.custom?.label ?? "lightweight")': \(refused.localizedDescription)",
                    [NSUnderlyingErrorKey: refused, "changes": refused.userInfo["changes"] ?? []])
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
    private static func verifyStaged(
        _ path: String, ofType storeType: String, model: NSManagedObjectModel, configuration: String?,
        options: [AnyHashable: Any], expecting counts: [String: Int]
    ) throws {
        var readOptions = options
        readOptions[NSReadOnlyPersistentStoreOption] = true
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store: NSPersistentStore
        do {
            store = try coordinator.addPersistentStore(ofType: storeType, configurationName: configuration, at: URL(fileURLWithPath: path), options: readOptions)
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

    private static var emptyModel: NSManagedObjectModel {
        let model = NSManagedObjectModel()
        try? model.freeze()
        return model
    }

    private static func readXMLDocument(at url: URL, in fileSystem: any StoreFileSystem) throws -> XMLStoreDocument {
        let reader = XMLStoreReader()
        do {
            let file = try fileSystem.open(url.path, create: false, readOnly: true)
            defer { file.close() }
            let size = try file.size()
            var offset: UInt64 = 0
            while offset < size {
                let chunk = try file.read(at: offset, count: Int(min(UInt64(XMLStoreLayout.readChunkSize), size - offset)))
                if chunk.isEmpty { break }
                try reader.feed(chunk)
                offset += UInt64(chunk.count)
            }
            return try reader.finish()
        } catch let error as XMLStoreError {
            throw coreDataError(NSPersistentStoreInvalidFileError, "\(url.path): \(error)")
        } catch {
            throw coreDataError(NSPersistentStoreOpenError, "cannot read the store at \(url.path): \(error)")
        }
    }
}

/// How a store saved with one model version reaches another: the version it was saved with,
/// and the mapping of each step (one when the versions map directly, else one per version
/// between them).
package struct MigrationPlan {
    /// One model version, by its name in its package.
    package typealias Version = (name: String, model: NSManagedObjectModel)
    /// One migration from a version to the next.
    package struct Step {
        package let source: Version
        package let destination: Version
        package let mapping: NSMappingModel
        /// Whether the mapping was inferred (no mapping model was found).
        package let inferred: Bool
    }

    /// The version the store was saved with.
    package let source: Version
    /// The steps, in order; empty when the store is already at the destination version.
    package let steps: [Step]

    /// Plans the migration of a store whose metadata is `metadata` to `destination`.
    ///
    /// - Parameters:
    ///   - store: the store's path, for messages.
    ///   - versions: the model versions known, in version order (``StoreMigration/knownVersions(of:)``).
    ///   - infers: whether a mapping may be inferred when no mapping model is found.
    /// - Throws: 134130 when no version matches the store, 134140 when no mapping is found or
    ///   can be inferred (the inference's 134190 error underneath, its changes in `userInfo`).
    package init(
        store: String, metadata: [String: Any], versions: [Version], destination: NSManagedObjectModel,
        configuration: String?, infers: Bool
    ) throws {
        let destinationName = versions.first { $0.model.versionChecksum == destination.versionChecksum }?.name ?? "current"
        if destination.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata) {
            source = (destinationName, destination)
            steps = []
            return
        }
        guard let sourceIndex = versions.firstIndex(where: { $0.model.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata) }) else {
            let recorded = (metadata[NSStoreModelVersionHashesKey] as? [String: Any])?.keys.sorted() ?? []
            throw coreDataError(
                NSMigrationMissingSourceModelError,
                "the store at \(store) was saved with a model version this app does not have (its entities: \(recorded.joined(separator: ", "))); searched \(versions.isEmpty ? "no model package (load the model from its .xcdatamodeld)" : versions.map(\.name).joined(separator: ", "))")
        }
        source = versions[sourceIndex]
        let target: Version = (destinationName, destination)
        if let mapping = NSMappingModel(from: nil, forSourceModel: source.model, destinationModel: destination) {
            steps = [Step(source: source, destination: target, mapping: mapping, inferred: false)]
            return
        }
        guard infers else {
            throw coreDataError(
                NSMigrationMissingMappingModelError,
                "the store at \(store) was saved with model version '\(source.name)': no mapping model to version '\(destinationName)' was found, and NSInferMappingModelAutomaticallyOption is off")
        }
        do {
            steps = [Step(source: source, destination: target, mapping: try NSMappingModel.inferredMappingModel(forSourceModel: source.model, destinationModel: destination), inferred: true)]
        } catch let direct as NSError {
            // No direct mapping: walk the versions between, each step inferred.
            let destinationIndex = versions.firstIndex { $0.model.versionChecksum == destination.versionChecksum }
            guard let destinationIndex, destinationIndex > sourceIndex + 1,
                  let chain = try? (sourceIndex..<destinationIndex).map({ index in
                      Step(
                          source: versions[index], destination: index + 1 == destinationIndex ? target : versions[index + 1],
                          mapping: try NSMappingModel.inferredMappingModel(forSourceModel: versions[index].model, destinationModel: versions[index + 1].model),
                          inferred: true)
                  })
            else {
                throw coreDataError(
                    NSMigrationMissingMappingModelError,
                    "cannot migrate the store at \(store) from model version '\(source.name)': \(direct.localizedDescription)",
                    [NSUnderlyingErrorKey: direct, "changes": direct.userInfo["changes"] ?? []])
            }
            steps = chain
        }
    }
}

/// The file work of a migration: staging files beside the store, and installing one in its
/// place (`Formats/migration.md`).
package enum StoreMigration {
    /// The suffix of the n-th staging store beside a store (0: a replacement copy); §2.
    static func stagingSuffix(_ step: Int) -> String { ".migrating-\(step)" }

    /// Removes a store file and its side files (`-wal`, `-shm`, an XML store's pending copy).
    static func removeFiles(of path: String, in fileSystem: any StoreFileSystem) throws {
        for file in [path, path + "-wal", path + "-shm", path + XMLStoreLayout.pendingFileSuffix] where fileSystem.fileExists(file) {
            do {
                try fileSystem.remove(file)
            } catch {
                throw coreDataError(NSMigrationError, "cannot remove \(file): \(error)")
            }
        }
    }

    /// Puts the complete, closed store at `staging` in place of the store at `path` (§3 step 4).
    ///
    /// Crash-safe: the staged file is synced first; the old store's log (which must hold no
    /// frames: it was checkpointed) is removed and the folder synced; then one rename swaps the
    /// data file and the folder is synced again. A crash leaves the old store or the new one.
    /// A staged binary store's log holds only its header after a clean close and is dropped
    /// unless `keepingStagedLog` (a copied store may have frames in it).
    static func install(_ staging: String, at path: String, keepingStagedLog: Bool, in fs: any StoreFileSystem) throws {
        do throws(StoreIOError) {
            let file = try fs.open(staging, create: false, readOnly: false)
            defer { file.close() }
            try file.sync()
            if fs.fileExists(path + "-wal") {
                let log = try fs.open(path + "-wal", create: false, readOnly: true)
                let size = try log.size()
                log.close()
                guard size <= UInt64(LogLayout.firstFrameOffset) else {
                    throw StoreIOError(operation: "install", path: path + "-wal", code: 0, reason: "the store's log still holds \(size) bytes of saves; it was not checkpointed")
                }
            }
            if fs.fileExists(staging + "-wal") {
                if keepingStagedLog {
                    let log = try fs.open(staging + "-wal", create: false, readOnly: false)
                    try log.sync()
                    log.close()
                } else {
                    try fs.remove(staging + "-wal")
                }
            }
            if fs.fileExists(path + "-wal") { try fs.remove(path + "-wal") }
            if fs.fileExists(path + XMLStoreLayout.pendingFileSuffix) { try fs.remove(path + XMLStoreLayout.pendingFileSuffix) }
            try fs.syncDirectory(containing: path)
            try fs.rename(staging, to: path)
            if keepingStagedLog, fs.fileExists(staging + "-wal") { try fs.rename(staging + "-wal", to: path + "-wal") }
            try fs.syncDirectory(containing: path)
        } catch {
            throw coreDataError(NSMigrationError, "cannot install the migrated store at \(path): \(error)")
        }
    }

    /// Every version of the model package `model` was loaded from, in version order, then the
    /// packages among the main bundle's resources; empty when the model came from elsewhere.
    package static func knownVersions(of model: NSManagedObjectModel) -> [(name: String, model: NSManagedObjectModel)] {
        var packages: [URL] = []
        if let url = model.versionPackageURL { packages.append(url) }
        if let resources = Bundle.main.resourceURL, let names = try? FileManager.default.contentsOfDirectory(atPath: resources.path) {
            for name in names.sorted() where name.hasSuffix(".xcdatamodeld") || name.hasSuffix(".momd") {
                let url = resources.appendingPathComponent(name)
                if !packages.contains(where: { $0.standardizedFileURL == url.standardizedFileURL }) { packages.append(url) }
            }
        }
        var versions: [(name: String, model: NSManagedObjectModel)] = []
        for url in packages {
            guard let package = try? XcodeModelPackage(contentsOf: url) else { continue }
            for name in package.versionNames {
                if let version = try? package.loadModel(version: name) {
                    try? version.freeze()
                    versions.append((name, version))
                }
            }
        }
        return versions
    }
}
