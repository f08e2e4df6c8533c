import CoreDataModel
import CoreDataStorage
import Foundation

extension NSPersistentStoreCoordinator {
    /// Copies a store to a new location and type and replaces it in the coordinator with the
    /// copy (Apple's `migratePersistentStore(_:to:options:type:)`, used for "Save As" and to move
    /// between store types: binary ↔ XML ↔ in-memory).
    ///
    /// Every object, every relationship (order kept for ordered ones) and every metadata entry is
    /// copied. The copy gets its own `NSStoreUUIDKey` and `NSStoreTypeKey`, and objects get new
    /// primary keys (store types number objects differently: an XML store numbers them store-wide),
    /// assigned in the order of the old ones, entity by entity; object IDs of the source store do
    /// not name objects of the copy. The source store is removed from the coordinator (its file is
    /// left as it was); managed objects fetched from it must be fetched again.
    ///
    /// - Parameters:
    ///   - store: a store of this coordinator.
    ///   - url: where the copy goes; must not hold a file already (ignored for in-memory stores).
    ///   - options: the options the copy is added with.
    ///   - storeType: the copy's type.
    /// - Returns: the new store, added to this coordinator with the source's configuration.
    /// - Throws: `NSPersistentStoreOperationError` when `store` is not in this coordinator or a
    ///   file is in the way; the errors of `addPersistentStore` and of the stores' reads and
    ///   saves. On any error the coordinator keeps the source store and no copy is left behind.
    /// Threading: do not save to the source store while it is copied.
    /// Complexity: O(objects) reads and one save into the copy.
    @discardableResult
    public func migratePersistentStore(
        _ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]? = nil, type storeType: NSPersistentStore.StoreType
    ) throws -> NSPersistentStore {
        try migratePersistentStore(store, to: url, options: options, withType: storeType.rawValue)
    }

    /// The string-typed spelling of ``migratePersistentStore(_:to:options:type:)``.
    @discardableResult
    public func migratePersistentStore(
        _ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]? = nil, withType storeType: String
    ) throws -> NSPersistentStore {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw coreDataError(NSPersistentStoreOperationError, "the store \(store.identifier) is not in this coordinator")
        }
        if storeType != NSInMemoryStoreType, FileManager.default.fileExists(atPath: url.path) {
            throw coreDataError(NSPersistentStoreOperationError, "cannot migrate the store \(store.identifier) to \(url.path): a file is already there")
        }
        let configuration = store.configurationName == NSPersistentStore.defaultConfigurationName ? nil : store.configurationName
        let copied = entities(of: store)
            .filter { !$0.isAbstract && $0.name != nil }
            .sorted { ($0.name ?? "") < ($1.name ?? "") }
        let source = store.engine
        let sourceMetadata = try mapStoreError { () throws(StoreError) -> StoreMetadata in try source.metadata() }
        let rowsByEntity = try mapStoreError { () throws(StoreError) -> [(NSEntityDescription, [StoreRow])] in
            try copied.map { entity throws(StoreError) in (entity, try Self.allRows(of: entity, in: source)) }
        }

        let copy = try addPersistentStore(ofType: storeType, configurationName: configuration, at: url, options: options)
        do {
            let destination = copy.engine
            try mapStoreError { () throws(StoreError) in
                var newIDs: [StoreObjectID: StoreObjectID] = [:]
                for (entity, rows) in rowsByEntity where !rows.isEmpty {
                    guard let name = entity.name else { continue }
                    let keys = try destination.newPrimaryKeys(entityName: name, count: rows.count)
                    let number = EntityNumber(name)
                    for (row, key) in zip(rows, keys) { newIDs[row.objectID] = StoreObjectID(entity: number, primaryKey: key) }
                }
                // `from` and `property` name the row that refers to `id`, for the error.
                func renamed(_ id: StoreObjectID, from source: StoreObjectID, property: String) throws(StoreError) -> StoreObjectID {
                    guard let new = newIDs[id] else {
                        throw .danglingReference(from: source, property: property, to: id)
                    }
                    return new
                }
                // The copy's own identity and model hashes, then every entry of the source; set
                // while the copy is empty, so a whole-file store writes its objects only once.
                var metadata = try destination.metadata()
                for (key, value) in sourceMetadata.values where key != NSStoreUUIDKey && key != NSStoreTypeKey {
                    metadata[key] = value
                }
                try destination.setMetadata(metadata)
                var inserted: [StoreRow] = []
                inserted.reserveCapacity(newIDs.count)
                for (_, rows) in rowsByEntity {
                    for row in rows {
                        var values: [String: StoreValue] = [:]
                        for (property, value) in row.values {
                            switch value {
                            case .reference(let target):
                                values[property] = .reference(try renamed(target, from: row.objectID, property: property))
                            case .references(let targets):
                                var mapped: [StoreObjectID] = []
                                mapped.reserveCapacity(targets.count)
                                for target in targets { mapped.append(try renamed(target, from: row.objectID, property: property)) }
                                values[property] = .references(mapped)
                            default: values[property] = value
                            }
                        }
                        inserted.append(StoreRow(objectID: try renamed(row.objectID, from: row.objectID, property: "(object)"), version: 0, values: values))
                    }
                }
                if !inserted.isEmpty { _ = try destination.save(StoreChangeSet(inserted: inserted)) }
            }
        } catch {
            try? destroyPersistentStore(at: url, ofType: storeType, options: options)
            if persistentStores.contains(where: { $0 === copy }) { try? remove(copy) }
            throw error
        }
        try remove(store)
        return copy
    }

    /// Every row of one entity (not its subentities), with relationships a lazy store left out of
    /// the row read through ``PersistentStoreEngine/destinations(of:relationship:)``, by key.
    static func allRows(of entity: NSEntityDescription, in engine: any PersistentStoreEngine) throws(StoreError) -> [StoreRow] {
        let request = StoreFetchRequest(entity: entity, includesSubentities: false, resultType: .rows)
        var rows: [StoreRow]
        switch try engine.execute(request) {
        case .rows(let found): rows = found
        case .objectIDs(let ids): rows = try engine.rows(for: ids)
        case .count: rows = []
        }
        let relationships = entity.relationshipsByName.values.filter { !$0.isTransient }
        for index in rows.indices {
            for relationship in relationships where !rows[index].contains(relationship.name) {
                let value = try engine.destinations(of: rows[index].objectID, relationship: relationship.name)
                if !value.isNull { rows[index][relationship.name] = value }
            }
        }
        return rows.sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
    }
}
