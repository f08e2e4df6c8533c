import CoreDataModel
import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// What publishing a save changes for readers.
struct PublishSet: Sendable {
    var locations: [(entityID: Int, key: Int64, location: UInt64?)] = []
    var tombstones: [(entityID: Int, key: Int64, location: UInt64)] = []
    var metadata: StoreMetadata?
}

/// One save's frames, queued for the group-commit leader (Formats/wal.md §5).
final class CommitBatch: @unchecked Sendable {
    let id: Int
    let offset: UInt64
    let bytes: [UInt8]
    let publish: PublishSet
    var done = false
    var error: StoreError?

    init(id: Int, offset: UInt64, bytes: [UInt8], publish: PublishSet) {
        self.id = id
        self.offset = offset
        self.bytes = bytes
        self.publish = publish
    }
}

extension BinaryStore {
    // MARK: Save

    public func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        try checkWritable()
        guard !changes.isEmpty else { return [:] }
        commitLock.lock()
        let batch: CommitBatch
        let versions: [StoreObjectID: Int64]
        do {
            (batch, versions) = try prepare(changes)
        } catch {
            commitLock.unlock()
            throw error
        }
        enqueue(batch)
        commitLock.unlock()
        try wait(for: batch)
        for row in changes.inserted { notePrimaryKey(row.objectID) }
        scheduleCheckpointIfNeeded()
        return versions
    }

    /// Validates a change set against the latest state (published and queued) and encodes it.
    /// Caller holds `commitLock`.
    func prepare(_ changes: StoreChangeSet) throws(StoreError) -> (CommitBatch, [StoreObjectID: Int64]) {
        if !overlay.isEmpty, rw.withReadLock({ publishedBatchID }) >= nextBatchID { overlay.removeAll(keepingCapacity: true) }
        var versions: [StoreObjectID: Int64] = [:]
        var conflicts: [StoreVersionConflict] = []
        let deletedIDs = Set(changes.deleted.map(\.objectID))

        for (id, expected) in changes.deleted {
            let current = try currentVersion(of: id)
            if current != expected {
                conflicts.append(StoreVersionConflict(objectID: id, expectedVersion: expected, storedRow: try currentRow(id)))
            }
        }
        for update in changes.updated {
            let current = try currentVersion(of: update.objectID)
            if current != update.version {
                conflicts.append(StoreVersionConflict(
                    objectID: update.objectID, expectedVersion: update.version, storedRow: try currentRow(update.objectID)))
            } else {
                versions[update.objectID] = update.version + 1
            }
        }
        if !conflicts.isEmpty { throw .optimisticLockingFailure(conflicts) }
        var insertedIDs = Set<StoreObjectID>()
        for insert in changes.inserted {
            guard try currentVersion(of: insert.objectID) == nil, insertedIDs.insert(insert.objectID).inserted else {
                throw .duplicateObjectID(insert.objectID)
            }
            versions[insert.objectID] = 1
        }

        if hasUniquenessConstraints {
            var next = try uniquenessIndex()
            for (id, _) in changes.deleted {
                if let row = try currentRow(id) { next.remove(row, entities: entities) }
            }
            for update in changes.updated {
                if let row = try currentRow(update.objectID) { next.remove(row, entities: entities) }
            }
            var constraintConflicts: [StoreConstraintConflict] = []
            for row in (changes.updated + changes.inserted).sorted(by: { $0.objectID < $1.objectID }) {
                constraintConflicts += next.add(row, entities: entities)
            }
            if !constraintConflicts.isEmpty { throw .constraintConflict(constraintConflicts) }
            unique = next
        }

        func exists(_ target: StoreObjectID) throws(StoreError) -> Bool {
            if deletedIDs.contains(target) { return false }
            if insertedIDs.contains(target) { return true }
            return try currentVersion(of: target) != nil
        }
        for row in changes.inserted + changes.updated {
            for (property, value) in row.values {
                switch value {
                case .reference(let target):
                    if try !exists(target) { throw .danglingReference(from: row.objectID, property: property, to: target) }
                case .references(let targets):
                    for target in targets where try !exists(target) {
                        throw .danglingReference(from: row.objectID, property: property, to: target)
                    }
                default:
                    continue
                }
            }
        }

        // Encode: a catalog entry first when the save names something new, then the records.
        var newCatalog = catalog
        var catalogChanged = false
        for row in changes.inserted + changes.updated where RecordCodec.register(row, in: &newCatalog) { catalogChanged = true }
        for (id, _) in changes.deleted where newCatalog.register(entity: id.entityName, properties: []) { catalogChanged = true }
        if catalogChanged {
            // Append-only: readers never see a record that needs the new names before it is published.
            rw.withWriteLock { catalog = newCatalog }
        }

        var payloads: [[UInt8]] = []
        var current = ByteWriter(capacity: 4096)
        var entryRefs: [(payload: Int, offsetInPayload: Int, entityID: Int, key: Int64, tombstone: Bool)] = []
        var record = ByteWriter(capacity: 256)
        func add(_ kind: LogEntry.Kind, _ body: [UInt8], entityID: Int, key: Int64) {
            if current.count > 0, current.count + LogLayout.entryHeaderSize + body.count > LogLayout.maximumFramePayload {
                payloads.append(current.bytes)
                current = ByteWriter(capacity: 4096)
            }
            if kind == .put || kind == .tombstone {
                entryRefs.append((payloads.count, current.count, entityID, key, kind == .tombstone))
            }
            LogEntryCodec.append(kind: kind, body: body[...], to: &current)
        }
        if catalogChanged { add(.catalog, newCatalog.encoded(), entityID: 0, key: 0) }
        for row in changes.inserted + changes.updated {
            var stored = row
            stored.version = versions[row.objectID] ?? 1
            record.bytes.removeAll(keepingCapacity: true)
            RecordCodec.encode(stored, catalog: newCatalog, into: &record)
            add(.put, record.bytes, entityID: newCatalog.entityID(of: row.objectID.entityName) ?? 0, key: row.objectID.primaryKey)
        }
        for (id, version) in changes.deleted {
            record.bytes.removeAll(keepingCapacity: true)
            RecordCodec.encodeTombstone(id, version: version, catalog: newCatalog, into: &record)
            add(.tombstone, record.bytes, entityID: newCatalog.entityID(of: id.entityName) ?? 0, key: id.primaryKey)
        }
        if current.count > 0 { payloads.append(current.bytes) }

        let batch = frameBatch(payloads: payloads, publish: PublishSet()) { frameOffsets in
            var publish = PublishSet()
            for ref in entryRefs {
                let location = (frameOffsets[ref.payload] + UInt64(LogLayout.frameHeaderSize + ref.offsetInPayload)) | RecordLocation.logBit
                if ref.tombstone {
                    publish.locations.append((ref.entityID, ref.key, nil))
                    publish.tombstones.append((ref.entityID, ref.key, location))
                } else {
                    publish.locations.append((ref.entityID, ref.key, location))
                }
            }
            return publish
        }
        for (entityID, key, location) in batch.publish.locations {
            let id = StoreObjectID(entityName: newCatalog.entities[entityID].name, primaryKey: key)
            overlay[ObjectKey(entityID: entityID, key: key)] = PendingObject(
                location: location, version: location == nil ? 0 : versions[id] ?? 1, batch: batch.id)
        }
        return (batch, versions)
    }

    /// Frames the payloads at the log's end and advances the writer's log position.
    /// Caller holds `commitLock`.
    func frameBatch(payloads: [[UInt8]], publish: PublishSet, locate: (([UInt64]) -> PublishSet)? = nil) -> CommitBatch {
        let start = logEnd
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payloads.reduce(0) { $0 + $1.count + LogLayout.frameHeaderSize + LogLayout.frameTrailerSize })
        var frameOffsets: [UInt64] = []
        for (index, payload) in payloads.enumerated() {
            frameOffsets.append(start + UInt64(bytes.count))
            logSequence += 1
            logChain = LogFrameCodec.append(
                payload: payload, commit: index == payloads.count - 1, salt: root.logSalt, sequence: logSequence,
                previousChecksum: logChain, to: &bytes)
        }
        logEnd = start + UInt64(bytes.count)
        nextBatchID += 1
        return CommitBatch(id: nextBatchID, offset: start, bytes: bytes, publish: locate?(frameOffsets) ?? publish)
    }

    /// The version of an object in the latest state, `nil` when it does not exist.
    /// Caller holds `commitLock`.
    func currentVersion(of id: StoreObjectID) throws(StoreError) -> Int64? {
        guard let entityID = catalog.entityID(of: id.entityName) else { return nil }
        let pending = overlay[ObjectKey(entityID: entityID, key: id.primaryKey)]
        return try rw.withReadLock { () throws(StoreError) -> Int64? in
            if let pending, pending.batch > publishedBatchID {
                return pending.location == nil ? nil : pending.version
            }
            guard let location = index.location(entityID: entityID, key: id.primaryKey) else { return nil }
            return try recordHeader(at: location).version
        }
    }

    /// The row of an object in the latest state: a queued save's record is already in the log
    /// file, because the leader writes before it publishes and validation waits for nothing
    /// else; reading it before the write would fail, so queued rows are read after a drain.
    /// Caller holds `commitLock`.
    func currentRow(_ id: StoreObjectID) throws(StoreError) -> StoreRow? {
        guard let entityID = catalog.entityID(of: id.entityName) else { return nil }
        if let pending = overlay[ObjectKey(entityID: entityID, key: id.primaryKey)], pending.batch > rw.withReadLock({ publishedBatchID }) {
            drainGroupCommits()
        }
        return try rw.withReadLock { () throws(StoreError) -> StoreRow? in
            guard let location = index.location(entityID: entityID, key: id.primaryKey) else { return nil }
            return try readRow(at: location)
        }
    }

    /// The uniqueness index, built from the stored rows the first time a save needs it.
    /// Caller holds `commitLock`.
    func uniquenessIndex() throws(StoreError) -> UniquenessIndex {
        if let unique { return unique }
        drainGroupCommits()
        var built = UniquenessIndex()
        try rw.withReadLock { () throws(StoreError) in
            for (entityID, table) in index.tables.enumerated() {
                guard entityID < catalog.entities.count, let entity = entities[catalog.entities[entityID].name],
                      hasConstraints(entity) else { continue }
                for position in table.keys.indices where table.locations[position] != 0 {
                    if let row = try readRow(at: table.locations[position]) { _ = built.add(row, entities: entities) }
                }
            }
        }
        unique = built
        return built
    }

    private func hasConstraints(_ entity: NSEntityDescription) -> Bool {
        var current: NSEntityDescription? = entity
        while let next = current {
            if !next.uniquenessConstraints.isEmpty { return true }
            current = next.superentity
        }
        return false
    }

    // MARK: Group commit

    /// Queues a batch; its frames are written in queue order. Caller holds `commitLock`, so
    /// queue order is log order.
    func enqueue(_ batch: CommitBatch) {
        group.lock()
        queue.append(batch)
        group.unlock()
    }

    /// Waits until `batch` is durable and published, leading a group write when no one else is.
    func wait(for batch: CommitBatch) throws(StoreError) {
        group.lock()
        while !batch.done {
            if !leaderActive, !queue.isEmpty {
                leaderActive = true
                let batches = queue
                queue = []
                let failure = poisoned
                group.unlock()
                let error = failure ?? writeAndPublish(batches)
                group.lock()
                if let error, poisoned == nil { poisoned = error }
                for item in batches {
                    item.done = true
                    item.error = error
                }
                leaderActive = false
                group.broadcast()
            } else {
                group.wait()
            }
        }
        group.unlock()
        if let error = batch.error { throw error }
    }

    /// One write and one sync for every queued batch, then publication in order.
    private func writeAndPublish(_ batches: [CommitBatch]) -> StoreError? {
        guard let logFile, let first = batches.first else { return nil }
        var bytes = first.bytes
        for batch in batches.dropFirst() { bytes.append(contentsOf: batch.bytes) }
        do {
            try logFile.write(bytes, at: first.offset)
            if options.durability == .full { try logFile.sync() }
        } catch {
            return .io(detail: "the save could not be made durable; the store must be reopened: \(error)")
        }
        rw.withWriteLock {
            for batch in batches { apply(batch.publish) }
            // Batches publish in ID order, so this marks every overlay entry up to it stale.
            if let last = batches.last { publishedBatchID = last.id }
        }
        return nil
    }

    /// Applies a published save to the reader-visible state. Caller holds `rw` exclusively.
    func apply(_ publish: PublishSet) {
        for (entityID, key, location) in publish.locations {
            if let location {
                index.set(entityID: entityID, key: key, location: location)
            } else {
                index.remove(entityID: entityID, key: key)
            }
        }
        logTombstones.append(contentsOf: publish.tombstones)
        if let metadata = publish.metadata { metadataValue = metadata }
    }

    /// Waits until every queued save is published. Caller holds `commitLock`, so no new ones come.
    func drainGroupCommits() {
        group.lock()
        while !queue.isEmpty || leaderActive {
            if !leaderActive {
                // The savers that queued will lead; wake any that sleep.
                group.broadcast()
            }
            group.wait()
        }
        group.unlock()
    }
}
