import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataModel
import CoreDataStorage
import Foundation

/// The binary store's record rewrite (Formats/migration.md §5): when every entity mapping moves
/// values as they are (renamed, added with a default or a constant, removed, numbers widened,
/// relationships kept to-one or to-many), the migration rewrites each record's bytes into the
/// new file, with no row built and no log written: the way compaction copies a store.
extension NSMigrationManager {
    /// The record rewrite of `mapping` against the source store's catalog; `nil` when some
    /// mapping needs rows (a relationship changing between to-one and to-many, two mappings into
    /// one entity, one source property feeding two destination properties).
    func recordTranscoding(_ mapping: NSMappingModel, from source: BinaryStore) throws -> RecordTranscoding? {
        let catalog = source.currentCatalog
        let plans = try (mapping.entityMappings ?? []).compactMap(plan(for:))
        var destination = Catalog()
        var entities = [RecordTranscoding.Entity?](repeating: nil, count: catalog.entities.count)
        var referenceTargets = [Int](repeating: -1, count: catalog.entities.count)
        var destinations = Set<String>()
        var pending: [(sourceID: Int, plan: Plan)] = []
        for plan in plans {
            guard let destinationName = plan.destination.name, destinations.insert(destinationName).inserted else { return nil }
            guard let sourceName = plan.source.name, let sourceID = catalog.entityID(of: sourceName) else { continue }
            destination.register(entity: destinationName, properties: plan.destinationLayout.names)
            destination.setNextPrimaryKey(catalog.entities[sourceID].nextPrimaryKey, of: destinationName)
            referenceTargets[sourceID] = destination.entityID(of: destinationName) ?? -1
            pending.append((sourceID, plan))
        }
        // Persistent history moves as it is (Formats/binary-store.md §14): its change lists name
        // objects by entity name, so they need no mapping, and tokens stay valid.
        if let historyID = catalog.entityID(of: HistoryRecordCodec.entityName), !destinations.contains(HistoryRecordCodec.entityName) {
            let history = catalog.entities[historyID]
            destination.register(entity: history.name, properties: history.properties)
            destination.setNextPrimaryKey(history.nextPrimaryKey, of: history.name)
            if let destinationID = destination.entityID(of: history.name) {
                entities[historyID] = RecordTranscoding.Entity(destinationEntityID: destinationID, columns: Array(history.properties.indices))
            }
        }
        for (sourceID, plan) in pending {
            guard let destinationName = plan.destination.name, let destinationID = destination.entityID(of: destinationName) else { return nil }
            let target = destination.entities[destinationID]
            var columnOfSource: [String: Int] = [:]
            var fills: [(column: Int, value: [UInt8])] = []
            // Two mappings naming one destination property: the row path lets the last win.
            var filled = Set<Int>()
            for attribute in plan.attributes {
                guard let column = target.index(of: attribute.attribute.name), filled.insert(column).inserted else { return nil }
                if let from = attribute.from {
                    guard columnOfSource.updateValue(column, forKey: from) == nil else { return nil }
                    if !attribute.fallback.isNull, let bytes = RecordCodec.encodedValue(attribute.fallback) { fills.append((column, bytes)) }
                } else {
                    let value = attribute.constant.isNull ? attribute.fallback : attribute.constant
                    if !value.isNull, let bytes = RecordCodec.encodedValue(value) { fills.append((column, bytes)) }
                }
            }
            for relationship in plan.relationships {
                guard let old = plan.source.relationshipsByName[relationship.from], old.isToMany == relationship.relationship.isToMany,
                      let column = target.index(of: relationship.relationship.name), filled.insert(column).inserted,
                      columnOfSource.updateValue(column, forKey: relationship.from) == nil
                else { return nil }
            }
            let mandatory = mandatorySlots(of: plan.destination).compactMap { _, property in
                target.index(of: property.name).map { (column: $0, name: property.name) }
            }
            entities[sourceID] = RecordTranscoding.Entity(
                destinationEntityID: destinationID,
                columns: catalog.entities[sourceID].properties.map { columnOfSource[$0] ?? -1 },
                fills: fills, mandatory: mandatory)
        }
        return RecordTranscoding(destination: destination, entities: entities, referenceTargets: referenceTargets)
    }

    /// Writes the migrated store at `url` by rewriting the source's records (through the
    /// source store's file layer, which the in-place migration shares with the destination).
    /// A failed or cancelled export leaves no file at `url`.
    func exportRecords(from source: BinaryStore, by transcoding: RecordTranscoding, to url: URL, configuration: String?, in fileSystem: any StoreFileSystem) throws {
        var metadata = try mapStoreError { () throws(StoreError) in try source.metadata() }
        let members = destinationModel.entities(forConfigurationName: configuration) ?? destinationModel.entities
        var hashes: [String: Data] = [:]
        for entity in members { if let name = entity.name { hashes[name] = entity.versionHash } }
        metadata[NSStoreTypeKey] = NSBinaryStoreType
        metadata[NSStoreModelVersionHashesKey] = hashes
        metadata[NSStoreModelVersionIdentifiersKey] = Array(destinationModel.versionIdentifiers.map { "\($0)" })
        let progress = self.progress
        let counts: [Int: Int]
        do {
            counts = try source.exportTranscoded(
                to: url.path, transcoding: transcoding, metadata: metadata,
                progress: { [weak self] done, total in
                    guard let self, total > 0 else { return }
                    self.migrationProgress = min(0.99, Float(done) / Float(total))
                    progress?.completedUnitCount = Int64(Double(self.migrationProgress) * Double(Self.progressUnits))
                },
                shouldStop: { [weak self] in self?.cancellation != nil || (progress?.isCancelled ?? false) })
        } catch is CancellationError {
            try checkCancellation()
            throw coreDataError(NSMigrationCancelledError, "the migration was cancelled; the source store is unchanged")
        } catch let missing as RecordTranscoding.MissingValue {
            throw coreDataError(
                NSMigrationError,
                "\(missing.destinationEntity).\(missing.property) is mandatory, and the object \(missing.sourceEntity) \(missing.primaryKey) has no value for it",
                [NSValidationKeyErrorKey: missing.property, "sourceObject": "\(missing.sourceEntity) \(missing.primaryKey)"])
        } catch StoreError.corrupt(let detail) {
            throw coreDataError(NSMigrationManagerSourceStoreError, "the source store is damaged, so it was not migrated: \(detail)")
        } catch let error as StoreError {
            throw coreDataError(NSMigrationManagerDestinationStoreError, "cannot write the migrated store at \(url.path): \(error)", [NSUnderlyingErrorKey: error as NSError])
        }
        do {
            try checkCancellation()
        } catch {
            try? StoreMigration.removeFiles(of: url.path, in: fileSystem)
            throw error
        }
        migratedObjectCounts = [:]
        for (entityID, count) in counts { migratedObjectCounts[transcoding.destination.entities[entityID].name] = count }
    }
}
