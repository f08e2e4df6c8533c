import CoreDataBinaryStore
import CoreDataModel
import CoreDataSQLiteStore
import CoreDataStorage
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation

/// Connects a model to the stores that hold its objects, and routes each entity to its store.
///
/// Matches Apple's `NSPersistentStoreCoordinator`. Creating a coordinator freezes its model.
/// Threading: every method is safe to call from any thread; the stores list is guarded by a lock.
open class NSPersistentStoreCoordinator: NSObject, @unchecked Sendable {
    /// The coordinator's model, frozen.
    public let managedObjectModel: NSManagedObjectModel

    private let lock = NSRecursiveLock()
    private var stores: [NSPersistentStore] = []

    /// Creates a coordinator for a model and freezes the model.
    ///
    /// A model that fails its consistency check (an inverse that does not point back, …) is a
    /// programmer error, as on Apple platforms: this traps with the check's message. Models
    /// loaded from files are checked when they load.
    public init(managedObjectModel model: NSManagedObjectModel) {
        do {
            try model.freeze()
        } catch {
            preconditionFailure("CoreData: NSPersistentStoreCoordinator was given an inconsistent model: \(error)")
        }
        self.managedObjectModel = model
        super.init()
        EntityClassRegistry.noteModel(model)
    }

    /// The stores, in the order they were added.
    public var persistentStores: [NSPersistentStore] {
        lock.lock()
        defer { lock.unlock() }
        return stores
    }

    /// The store a URL names, if it was added.
    public func persistentStore(for url: URL) -> NSPersistentStore? {
        persistentStores.first { $0.url?.standardizedFileURL == url.standardizedFileURL }
    }

    /// Adds a store.
    ///
    /// - Parameters:
    ///   - storeType: ``NSInMemoryStoreType`` or another registered type. ``NSSQLiteStoreType``
    ///     opens an existing SQLite file in Apple's layout and otherwise the binary store;
    ///     ``NSAppleSQLiteStoreType`` always Apple's SQLite layout.
    ///   - configuration: the model configuration whose entities the store holds; `nil` for all.
    ///   - storeURL: the store's file; ignored by the in-memory store.
    ///   - options: the store's options (read-only, migration, the store type's own keys); `nil` for none.
    /// - Throws: `NSError`s in `NSCocoaErrorDomain`: `NSPersistentStoreInvalidTypeError` (134000)
    ///   for an unknown type or configuration, `NSPersistentStoreIncompatibleVersionHashError`
    ///   (134100) when the store was saved with a different model (the message names the
    ///   entities), `NSPersistentStoreIncompatibleSchemaError` (134020) when a relationship would
    ///   cross two stores.
    @discardableResult
    open func addPersistentStore(
        ofType storeType: String, configurationName configuration: String?, at storeURL: URL?, options: [AnyHashable: Any]? = nil
    ) throws -> NSPersistentStore {
        guard let registration = StoreTypeRegistry.registration(for: storeType) else {
            if let product = StoreTypeRegistry.providingModules[storeType]?.product {
                throw coreDataError(
                    NSPersistentStoreInvalidTypeError,
                    "the store type '\(storeType)' is in the \(product) product: add it to the app's dependencies and import \(product)")
            }
            throw coreDataError(
                NSPersistentStoreInvalidTypeError,
                "unknown store type '\(storeType)': registered types are \(StoreTypeRegistry.registeredTypes.joined(separator: ", "))")
        }
        let configurationName = configuration == NSPersistentStore.defaultConfigurationName || configuration == "Default" ? nil : configuration
        guard let members = managedObjectModel.entities(forConfigurationName: configurationName) else {
            throw coreDataError(
                NSPersistentStoreInvalidTypeError,
                "the model has no configuration named '\(configurationName ?? "")'; it has \(managedObjectModel.configurations)")
        }
        let identifier = (options?[PrivateStoreOption.storeUUID] as? String) ?? UUID().uuidString
        var fresh = StoreMetadata()
        fresh[NSStoreTypeKey] = storeType
        fresh[NSStoreUUIDKey] = identifier
        fresh[NSStoreModelVersionHashesKey] = Self.hashes(of: members)
        fresh[NSStoreModelVersionIdentifiersKey] = Array(managedObjectModel.versionIdentifiers.map { "\($0)" })
        let store: NSPersistentStore
        switch registration {
        case .engine(let factory):
            let engine: any PersistentStoreEngine
            do {
                engine = try factory(managedObjectModel, storeURL, options ?? [:], fresh)
            } catch {
                // A store saved with another model version may not even open with this one (an
                // XML store maps its objects as it reads them): that, not the file, is the problem.
                // Apple's SQLite store checks its tables against the model and reports a
                // mismatch itself; a damaged value is damage, whatever the hashes say.
                if StoreTypeRegistry.holdsAppleSQLiteStore(storeURL), (error as NSError).code == NSPersistentStoreInvalidFileError { throw error }
                let provided = StoreTypeRegistry.registeredProvider(storeType) != nil
                guard let storeURL, provided || PrivateStoreOption.fileSystem(options).fileExists(storeURL.path),
                      let metadata = try? Self.metadataForPersistentStore(ofType: storeType, at: storeURL, options: options),
                      let recorded = metadata[NSStoreModelVersionHashesKey] as? [String: Any],
                      let mismatch = incompatibility(recorded: recorded, members: members, url: storeURL)
                else { throw error }
                return try addMigrating(ofType: storeType, configuration: configuration, at: storeURL, options: options, metadata: metadata, mismatch: mismatch)
            }
            store = NSPersistentStore(
                type: storeType, url: storeURL, configurationName: configurationName, options: options,
                engine: engine, identifier: identifier)
            if let history = engine as? any StoreHistoryRecording, history.hasRecordedHistory, !history.recordsHistory {
                // Apple's rule: saves without history would leave holes in it that readers of
                // the history could not see, so the store opens read-only.
                store.isReadOnly = true
            }
        case .storeClass(let storeClass):
            // Apple's initializer takes a URL; a store added without one gets /dev/null.
            store = storeClass.init(
                persistentStoreCoordinator: self, configurationName: configurationName,
                at: storeURL ?? URL(fileURLWithPath: "/dev/null"), options: options)
            store.registeredType = storeType
            store.url = storeURL
            store.persistentStoreCoordinator = self
            store.isBeingAdded = true
            defer { store.isBeingAdded = false }
            do {
                try store.prepareToAdd(freshMetadata: fresh)
            } catch {
                try? store.engine.close()
                throw error
            }
        }
        let engine = store.engine
        do {
            let metadata = try mapStoreError { () throws(StoreError) -> StoreMetadata in try engine.metadata() }
            if let recorded = metadata[NSStoreModelVersionHashesKey] as? [String: Any],
               let mismatch = incompatibility(recorded: recorded, members: members, url: storeURL) {
                guard let storeURL else { throw mismatch }
                try? engine.close()
                return try addMigrating(ofType: storeType, configuration: configuration, at: storeURL, options: options, metadata: metadata.values, mismatch: mismatch)
            }
            store.identifier = (metadata[NSStoreUUIDKey] as? String) ?? identifier
        } catch {
            // Release the files (and a binary store's lock) of a store that is not added.
            try? engine.close()
            throw error
        }
        lock.lock()
        do {
            try checkNoCrossStoreRelationships(adding: members)
        } catch {
            lock.unlock()
            try? engine.close()
            throw error
        }
        store.persistentStoreCoordinator = self
        stores.append(store)
        lock.unlock()
        store.didAdd(to: self)
        startRemoteChangeNotifications(for: store)
        return store
    }

    /// Adds a store saved with another model version (its `metadata`, already read): migrates it
    /// in place first when the options ask for it (then adds it once more, as it now matches the
    /// model), else throws `mismatch` (`NSPersistentStoreIncompatibleVersionHashError`). The
    /// store is closed on entry.
    private func addMigrating(
        ofType storeType: String, configuration: String?, at storeURL: URL, options: [AnyHashable: Any]?,
        metadata: [String: Any], mismatch: NSError
    ) throws -> NSPersistentStore {
        guard Self.migratesAutomatically(storeType, options) else { throw mismatch }
        let configurationName = configuration == NSPersistentStore.defaultConfigurationName || configuration == "Default" ? nil : configuration
        try migrateStore(ofType: storeType, at: storeURL, configuration: configurationName, options: options ?? [:], metadata: metadata)
        var migrated = options ?? [:]
        migrated[NSMigratePersistentStoresAutomaticallyOption] = false
        return try addPersistentStore(ofType: storeType, configurationName: configuration, at: storeURL, options: migrated)
    }

    /// Registers a store class for a type name, so that `addPersistentStore(ofType:…)` with that
    /// name opens a store of the class; `nil` removes the registration.
    ///
    /// The class must subclass ``NSIncrementalStore`` or ``NSAtomicStore``. Registrations are
    /// process-wide, as on Apple platforms; register before adding stores of the type.
    /// Threading: safe from any thread.
    open class func registerStoreClass(_ storeClass: AnyClass?, type storeType: String) {
        guard let storeClass else {
            StoreTypeRegistry.register(storeType, storeClass: nil)
            return
        }
        guard let persistentStoreClass = storeClass as? NSPersistentStore.Type else {
            preconditionFailure("CoreData: registerStoreClass(_:type:) needs a subclass of NSPersistentStore (NSIncrementalStore or NSAtomicStore); \(storeClass) is not one")
        }
        StoreTypeRegistry.register(storeType, storeClass: persistentStoreClass)
    }

    /// Adds a store described by `description`, calling `completionHandler` when done (at once,
    /// or on a background queue when `shouldAddStoreAsynchronously` is set).
    open func addPersistentStore(
        with description: NSPersistentStoreDescription, completionHandler: @escaping (NSPersistentStoreDescription, Error?) -> Void
    ) {
        let add = {
            do {
                var options = description.options
                // Apple's descriptions default both to on; an option set explicitly wins.
                options[NSMigratePersistentStoresAutomaticallyOption] = options[NSMigratePersistentStoresAutomaticallyOption] ?? description.shouldMigrateStoreAutomatically
                options[NSInferMappingModelAutomaticallyOption] = options[NSInferMappingModelAutomaticallyOption] ?? description.shouldInferMappingModelAutomatically
                if description.isReadOnly { options[NSReadOnlyPersistentStoreOption] = true }
                try self.addPersistentStore(
                    ofType: description.type, configurationName: description.configuration, at: description.url,
                    options: options)
                completionHandler(description, nil)
            } catch {
                completionHandler(description, error)
            }
        }
        if description.shouldAddStoreAsynchronously {
            nonisolated(unsafe) let work = add
            DispatchQueue.global().async { work() }
        } else {
            add()
        }
    }

    /// Removes a store; its objects can no longer be fetched or saved.
    open func remove(_ store: NSPersistentStore) throws {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw coreDataError(NSPersistentStoreOperationError, "the store \(store.identifier) is not in this coordinator")
        }
        store.willRemove(from: self)
        stopRemoteChangeNotifications(for: store)
        lock.lock()
        defer { lock.unlock() }
        guard let index = stores.firstIndex(where: { $0 === store }) else {
            throw coreDataError(NSPersistentStoreOperationError, "the store \(store.identifier) is not in this coordinator")
        }
        stores.remove(at: index)
        store.persistentStoreCoordinator = nil
        try mapStoreError { () throws(StoreError) in try store.engine.close() }
    }

    /// Removes the store at `url` from this coordinator if it was added, and deletes its files.
    /// An in-memory store has no files.
    ///
    /// A binary or XML store is deleted under its lock, as a save takes it, so another process's
    /// save is never cut in half; a binary store another process (or coordinator) still has open
    /// is not deleted: the call fails with a lock-conflict error (`NSPersistentStoreTimeoutOption`
    /// bounds the wait for a save in progress).
    open func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws {
        if let store = persistentStore(for: url) { try remove(store) }
        let options = options ?? [:]
        switch storeType {
        case NSInMemoryStoreType:
            return
        case NSAppleSQLiteStoreType:
            try mapStoreError { () throws(StoreError) in try AppleSQLiteStore.destroy(path: url.path) }
        case NSSQLiteStoreType where StoreTypeRegistry.holdsAppleSQLiteStore(url):
            try mapStoreError { () throws(StoreError) in try AppleSQLiteStore.destroy(path: url.path) }
        case NSBinaryStoreType, NSSQLiteStoreType:
            var settings = BinaryStoreOptions()
            settings.fileSystem = PrivateStoreOption.fileSystem(options)
            if let timeout = StoreTypeRegistry.lockTimeout(options) { settings.lockTimeout = timeout }
            try mapStoreError { () throws(StoreError) in try BinaryStore.destroy(path: url.path, options: settings) }
        case NSXMLStoreType:
            var settings = XMLStoreOptions()
            settings.fileSystem = PrivateStoreOption.fileSystem(options)
            if let timeout = StoreTypeRegistry.lockTimeout(options) { settings.lockTimeout = timeout }
            try mapStoreError { () throws(StoreError) in try XMLStore.destroy(path: url.path, options: settings) }
        default:
            if let provider = StoreTypeRegistry.provider(for: storeType) {
                try provider.destroy(url, options)
                return
            }
            // A user's store type: its file and what SQLite-like stores keep beside it.
            for path in [url.path, url.path + "-wal", url.path + "-shm"] where FileManager.default.fileExists(atPath: path) {
                try FileManager.default.removeItem(atPath: path)
            }
        }
    }

    /// The metadata of a store of this coordinator.
    open func metadata(for store: NSPersistentStore) -> [String: Any] { store.metadata ?? [:] }

    /// Replaces the metadata of a store; saved with the store's next save.
    open func setMetadata(_ metadata: [String: Any]?, for store: NSPersistentStore) {
        store.metadata = metadata ?? [:]
    }

    /// The ID a URI from `NSManagedObjectID.uriRepresentation()` names, or `nil` when the URI
    /// names no store of this coordinator or no entity of its model. Temporary IDs have no URI
    /// that outlives their object, so they give `nil`.
    open func managedObjectID(forURIRepresentation url: URL) -> NSManagedObjectID? {
        guard url.scheme == "x-coredata", let host = url.host, !host.isEmpty else { return nil }
        let parts = url.path.split(separator: "/").map(String.init)
        guard parts.count == 2, let entity = managedObjectModel.entitiesByName[parts[0]],
              parts[1].hasPrefix("p"), let key = Int64(parts[1].dropFirst()), key > 0,
              let store = persistentStores.first(where: { $0.identifier == host })
        else { return nil }
        return NSManagedObjectID(entity: entity, store: store, storeID: StoreObjectID(entityName: parts[0], primaryKey: key))
    }

    /// The store types that can be opened, by name.
    open class var registeredStoreTypes: [String] { StoreTypeRegistry.registeredTypes }

    // MARK: Routing

    /// The store that holds objects of `entity`: the first added store whose configuration
    /// includes it.
    func store(for entity: NSEntityDescription) -> NSPersistentStore? {
        persistentStores.first { store in entities(of: store).contains { $0 === entity } }
    }

    /// Whether `addPersistentStore` migrates an out-of-date store of this type with these
    /// options: Apple's `NSMigratePersistentStoresAutomaticallyOption`, on file stores we can
    /// rewrite (binary, XML), never for a read-only store.
    private static func migratesAutomatically(_ storeType: String, _ options: [AnyHashable: Any]?) -> Bool {
        guard (options?[NSMigratePersistentStoresAutomaticallyOption] as? Bool) == true,
              (options?[NSReadOnlyPersistentStoreOption] as? Bool) != true else { return false }
        if [NSBinaryStoreType, NSSQLiteStoreType, NSAppleSQLiteStoreType, NSXMLStoreType].contains(storeType) { return true }
        // A store another module provides migrates when it can stage and install (PostgreSQL).
        if StoreTypeRegistry.registeredProvider(storeType)?.staging != nil { return true }
        // An atomic store's data is the file at its URL, so it migrates as the file stores do
        // (into a staging file, installed by rename). An incremental store's data may live
        // anywhere: its migration stays the app's (NSMigrationManager), as on Apple platforms.
        if case .storeClass(let storeClass)? = StoreTypeRegistry.registration(for: storeType), storeClass is NSAtomicStore.Type { return true }
        return false
    }

    private static func hashes(of entities: [NSEntityDescription]) -> [String: Data] {
        var hashes: [String: Data] = [:]
        for entity in entities { if let name = entity.name { hashes[name] = entity.versionHash } }
        return hashes
    }

    /// The 134100 error for a store whose recorded hashes are not those of `members`, naming the
    /// entities that differ; `nil` when they match.
    private func incompatibility(recorded: [String: Any], members: [NSEntityDescription], url: URL?) -> NSError? {
        var differing: [String] = []
        var known: Set<String> = []
        for entity in members {
            guard let name = entity.name else { continue }
            known.insert(name)
            // Apple's hashes count too: a store Core Data wrote on an Apple platform records them.
            if !((recorded[name] as? Data).map(entity.matchesVersionHash) ?? false) { differing.append(name) }
        }
        for name in recorded.keys where !known.contains(name) { differing.append(name) }
        guard !differing.isEmpty else { return nil }
        let names = differing.sorted().map { "'\($0)'" }.joined(separator: ", ")
        return coreDataError(
            NSPersistentStoreIncompatibleVersionHashError,
            "the model used to open the store is incompatible with the one used to create it: entities \(names) differ"
                + (url.map { " (store at \($0.storeLocation))" } ?? ""),
            ["entities": differing.sorted()])
    }

    /// The entities of the configuration `store` was added with (every entity for the default one).
    func entities(of store: NSPersistentStore) -> [NSEntityDescription] {
        let configuration = store.configurationName == NSPersistentStore.defaultConfigurationName ? nil : store.configurationName
        return managedObjectModel.entities(forConfigurationName: configuration) ?? []
    }

    private func checkNoCrossStoreRelationships(adding members: [NSEntityDescription]) throws {
        let existing = stores.flatMap { store -> [NSEntityDescription] in
            entities(of: store)
        }
        let memberIDs = Set(members.map(ObjectIdentifier.init))
        let existingIDs = Set(existing.map(ObjectIdentifier.init))
        for entity in members where !existingIDs.contains(ObjectIdentifier(entity)) {
            for relationship in entity.relationshipsByName.values.sorted(by: { $0.name < $1.name }) {
                guard let destination = relationship.destinationEntity else { continue }
                let here = memberIDs.contains(ObjectIdentifier(destination))
                let elsewhere = existingIDs.contains(ObjectIdentifier(destination))
                if !here && elsewhere {
                    throw coreDataError(
                        NSPersistentStoreIncompatibleSchemaError,
                        "relationship '\(entity.name ?? "").\(relationship.name)' would cross stores: its destination '\(destination.name ?? "")' is in another store")
                }
            }
        }
    }
}

/// Runs a store call and turns its ``StoreError`` into Apple's `NSError`.
func mapStoreError<T>(_ body: () throws(StoreError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw nsError(from: error)
    }
}

func nsError(from error: StoreError) -> NSError {
    switch error {
    case .optimisticLockingFailure: return coreDataError(NSManagedObjectMergeError, "\(error)")
    case .constraintConflict: return coreDataError(NSManagedObjectConstraintMergeError, "\(error)")
    case .danglingReference: return coreDataError(NSManagedObjectReferentialIntegrityError, "\(error)")
    case .duplicateObjectID, .recordTooLarge: return coreDataError(NSPersistentStoreSaveError, "\(error)")
    case .corrupt: return coreDataError(NSPersistentStoreInvalidFileError, "\(error)")
    case .io: return coreDataError(NSPersistentStoreOpenError, "\(error)")
    case .closed: return coreDataError(NSPersistentStoreOperationError, "\(error)")
    case .failed(let failure): return failure.error
    }
}
