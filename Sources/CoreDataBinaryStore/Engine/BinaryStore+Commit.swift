import CoreDataModel
import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// What publishing a save changes for readers.
struct PublishSet: Sendable {
    var locations: [(entityID: Int, key: Int64, location: UInt64?, version: Int64)] = []
    var tombstones: [(entityID: Int, key: Int64, location: UInt64)] = []
    var metadata: StoreMetadata?
    /// The new value of every indexed attribute (``BinaryStore/indexedAttributes``) of each
    /// saved row, so built secondary indexes follow the save; `nil` when the values are not
    /// known (a save another process made, or one that began with no index built), which drops
    /// the indexes of the entities it changes.
    var indexValues: [IndexedValue]?

    /// A saved row's new value of one indexed attribute.
    typealias IndexedValue = (entityID: Int, key: Int64, attribute: String, value: StoreValue)
}

/// One save's frames, queued for the group-commit leader (Formats/wal.md §5).
final class CommitBatch: @unchecked Sendable {
    let id: Int
    let offset: UInt64
    let bytes: [UInt8]
    let publish: PublishSet
    var done = false
    var error: StoreError?
    /// Built the first time a later save asks about an object of this batch (rare: only saves
    /// that overlap in time need it), so a bulk save pays nothing for it.
    private var objects: [ObjectKey: PendingObject]?

    /// What this batch does to an object, if anything. Caller holds the store's `commitLock`.
    func lookup(_ key: ObjectKey) -> PendingObject? {
        if objects == nil {
            var built: [ObjectKey: PendingObject] = [:]
            built.reserveCapacity(publish.locations.count)
            for item in publish.locations {
                built[ObjectKey(entityID: item.entityID, key: item.key)] = PendingObject(location: item.location, version: item.version, batch: id)
            }
            objects = built
        }
        return objects?[key]
    }

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
        return try write(draining: false) { () throws(StoreError) -> StoreChangeSet? in changes } ?? [:]
    }

    /// One write: under the commit lock (after every queued save is published, when
    /// `draining`, so `build` reads the latest state) and the write lock, `build` makes the
    /// change set (`nil`: nothing to write), which is validated, queued and group-committed.
    /// Saves, batch requests and history deletion all write this way.
    ///
    /// - Returns: the saved versions (``prepare(_:recordingHistory:)``), `nil` when `build` found nothing to write.
    func write(
        draining: Bool, recordingHistory: Bool = true, _ build: () throws(StoreError) -> StoreChangeSet?
    ) throws(StoreError) -> [StoreObjectID: Int64]? {
        commitLock.lock()
        if draining { drainGroupCommits() }
        let batch: CommitBatch
        let versions: [StoreObjectID: Int64]
        do {
            try beginWrite()
            guard let changes = try build() else {
                releaseWriteLockIfIdle()
                commitLock.unlock()
                return nil
            }
            (batch, versions) = try prepare(changes, recordingHistory: recordingHistory)
        } catch {
            releaseWriteLockIfIdle()
            commitLock.unlock()
            throw error
        }
        enqueue(batch)
        commitLock.unlock()
        try waitAndEndWrite(batch)
        scheduleCheckpointIfNeeded()
        return versions
    }

    /// Validates a change set against the latest state (published and queued) and encodes it.
    /// Caller holds `commitLock`.
    ///
    /// Complexity: O(1) per inserted row whose key is above every key the store has seen (keys
    /// from ``newPrimaryKeys(entityName:count:)`` always are), an index lookup per updated or
    /// deleted row and per referenced object.
    func prepare(_ changes: StoreChangeSet, recordingHistory: Bool = true) throws(StoreError) -> (CommitBatch, [StoreObjectID: Int64]) {
        var changes = changes
        if recordingHistory, let transaction = try historyTransaction(for: changes) {
            // The transaction is a record of the same save: on disk with it or not at all (§14).
            changes.inserted.append(try historyRow(for: transaction))
        }
        let published = rw.withReadLock { publishedBatchID }
        // Batches are queued in the order of their IDs: the published ones are a prefix.
        if let kept = pendingBatches.firstIndex(where: { $0.id > published }) {
            if kept > 0 { pendingBatches.removeFirst(kept) }
        } else if !pendingBatches.isEmpty {
            pendingBatches = []
        }
        var versions: [StoreObjectID: Int64] = [:]
        // Reserving even 0 costs a Dictionary about 1,000 instructions, 3% of a one-object save.
        if !changes.updated.isEmpty { versions.reserveCapacity(changes.updated.count) }
        var conflicts: [StoreVersionConflict] = []

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

        // Inserts: a key above the entity's high-water mark cannot exist; keys in increasing
        // order cannot repeat. Only the rest pay for a lookup or a set.
        // By entity, in the order first inserted: a save names few entities, and a Dictionary
        // cost a one-object save two more hashes of the name and an allocation.
        var highWater: [(name: String, mark: Int64)] = []
        var unordered = false
        var entity: EntityNumber?
        var name = ""
        var mark: Int64 = 0
        var last: Int64 = 0
        func noteMark() {
            if let index = highWater.firstIndex(where: { $0.name == name }) { highWater[index].mark = mark } else { highWater.append((name, mark)) }
        }
        for insert in changes.inserted {
            let id = insert.objectID
            if id.entity != entity {
                if entity != nil { noteMark() }
                entity = id.entity
                name = id.entityName
                // Rows of an entity seen before in this save: order says nothing; use the set.
                if let seen = highWater.first(where: { $0.name == name }) {
                    unordered = true
                    mark = seen.mark
                } else {
                    mark = savedHighWater[name, default: 0]
                }
                last = 0
            }
            guard id.primaryKey >= 1, id.primaryKey <= BinaryStoreLayout.largestPrimaryKey else {
                throw .io(detail: "cannot insert \(id): the binary store's primary keys run from 1 to 2^62 (binary-store.md §5)")
            }
            if id.primaryKey <= mark, try currentVersion(of: id) != nil { throw .duplicateObjectID(id) }
            if id.primaryKey <= last { unordered = true }
            last = id.primaryKey
            mark = max(mark, id.primaryKey)
        }
        if entity != nil { noteMark() }
        if unordered {
            var seen = Set<StoreObjectID>()
            for insert in changes.inserted where !seen.insert(insert.objectID).inserted {
                throw .duplicateObjectID(insert.objectID)
            }
        }
        if !changes.updated.isEmpty, !changes.inserted.isEmpty {
            // An object both inserted and updated.
            let insertedIDs = Set(changes.inserted.map(\.objectID))
            if let twice = changes.updated.first(where: { insertedIDs.contains($0.objectID) }) { throw .duplicateObjectID(twice.objectID) }
        }

        var pendingUnique: UniquenessIndex?
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
            pendingUnique = next
        }

        if changes.checksReferences { try checkReferences(changes, versions: versions) }
        // Files before frames: a durable frame never names a file that is not (§15.2).
        let externals = try writeExternalValues(changes)

        // Encode against the current catalog; a save that names something new (rare after the
        // first) registers it and starts over with a catalog entry first.
        var newCatalog = catalog
        var newLayouts = layouts
        var catalogChanged = false
        for (id, _) in changes.deleted where newCatalog.register(entity: id.entityName, properties: []) { catalogChanged = true }
        let count = changes.inserted.count + changes.updated.count + changes.deleted.count
        var frames: LogFrameWriter
        var refs: [(entry: Int, entityID: Int, key: Int64, version: Int64, tombstone: Bool)] = []
        while true {
            frames = frameWriter(capacity: 96 * count + 256)
            refs.removeAll(keepingCapacity: true)
            refs.reserveCapacity(count)
            if catalogChanged {
                let encoded = newCatalog.encoded()
                frames.appendEntry(kind: .catalog, sizeHint: encoded.count) { $0.append(encoded) }
            }
            if catalogChanged, newLayouts.catalog != newCatalog { newLayouts = RecordLayouts(catalog: newCatalog, models: modelLayouts) }
            var encoder = RecordEncoder(layouts: newLayouts)
            var entityIDs = EntityIDCache(catalog: newCatalog)
            var complete = true
            for (rows, updating) in [(changes.inserted, false), (changes.updated, true)] {
                for row in rows where complete {
                    let version = updating ? versions[row.objectID] ?? row.version + 1 : 1
                    var fits = true
                    let entry = frames.appendEntry(kind: .put, sizeHint: 256, limit: BinaryStoreLayout.maximumRecordSize) {
                        fits = encoder.encode(row, version: version, external: externals.isEmpty ? [:] : externals[row.objectID] ?? [:], into: &$0)
                    }
                    if let oversized = frames.oversizedEntry {
                        // binary-store.md §5: a record must fit one log entry and one data page.
                        throw .recordTooLarge(row.objectID, bytes: oversized.length, limit: BinaryStoreLayout.maximumRecordSize)
                    }
                    guard fits else {
                        complete = false
                        break
                    }
                    refs.append((entry, entityIDs.id(of: row.objectID.entity), row.objectID.primaryKey, version, false))
                }
            }
            if !complete {
                for row in changes.inserted + changes.updated { RecordCodec.register(row, in: &newCatalog) }
                catalogChanged = true
                continue
            }
            for (id, version) in changes.deleted {
                let entry = frames.appendEntry(kind: .tombstone, sizeHint: 32) { RecordCodec.encodeTombstone(id, version: version, catalog: newCatalog, into: &$0) }
                refs.append((entry, entityIDs.id(of: id.entity), id.primaryKey, version, true))
            }
            break
        }
        frames.finish()
        // Only a save that passed every check (the record sizes last) changes what the next one
        // validates against.
        if let next = pendingUnique { unique = next }
        if catalogChanged {
            // Append-only: readers never see a record that needs the new names before it is published.
            rw.withWriteLock { layouts = newLayouts }
        }

        let start = logEnd
        var publish = PublishSet()
        publish.locations.reserveCapacity(refs.count)
        for ref in refs {
            let location = (start + UInt64(ref.entry)) | RecordLocation.logBit
            if ref.tombstone {
                publish.locations.append((ref.entityID, ref.key, nil, 0))
                publish.tombstones.append((ref.entityID, ref.key, location))
            } else {
                publish.locations.append((ref.entityID, ref.key, location, ref.version))
            }
        }
        // Values only while some index is built: a bulk import into an entity nobody has queried
        // pays nothing. An index a fetch builds before this save publishes is dropped then (no
        // values), as after another process's save.
        if !indexedAttributes.isEmpty, secondaryLock.withLock({ !secondaryIndexes.isEmpty }) {
            publish.indexValues = indexValues(of: changes, catalog: newCatalog)
        }
        let batch = appendBatch(frames, publish: publish)
        pendingBatches.append(batch)
        for (name, mark) in highWater {
            savedHighWater[name] = mark
            keyLock.lock()
            // One hash of the name through the subscript's in-place access, not a read and a write.
            Self.raise(&nextKeys[name, default: 1], to: mark + 1)
            keyLock.unlock()
        }
        return (batch, versions)
    }

    @inline(__always)
    private static func raise(_ value: inout Int64, to floor: Int64) {
        if value < floor { value = floor }
    }

    /// The new value of each indexed attribute of each row `changes` inserts or updates (a row
    /// that leaves the attribute out saves it as nil, `.null`). Deletes need none: the
    /// published locations say which keys are gone.
    private func indexValues(of changes: StoreChangeSet, catalog: Catalog) -> [PublishSet.IndexedValue] {
        var values: [PublishSet.IndexedValue] = []
        var entityIDs = EntityIDCache(catalog: catalog)
        // Rows of one entity share a layout: names are looked up once per layout, not per row.
        var lastLayout: PropertyLayout?
        var lastEntity: EntityNumber?
        var slots: [(attribute: String, slot: Int?)] = []
        for rows in [changes.inserted, changes.updated] {
            for row in rows {
                if row.layout !== lastLayout || row.objectID.entity != lastEntity {
                    lastLayout = row.layout
                    lastEntity = row.objectID.entity
                    let attributes = indexedAttributes[row.objectID.entityName]?.keys.sorted() ?? []
                    slots = attributes.map { ($0, row.layout.slot(of: $0)) }
                }
                guard !slots.isEmpty else { continue }
                let entityID = entityIDs.id(of: row.objectID.entity)
                for (attribute, slot) in slots {
                    values.append((entityID, row.objectID.primaryKey, attribute, slot.flatMap { row.slots[$0] } ?? .null))
                }
            }
        }
        return values
    }

    /// Every relationship of a saved row must point at an object that exists after the save.
    private func checkReferences(_ changes: StoreChangeSet, versions: [StoreObjectID: Int64]) throws(StoreError) {
        var deleted: Set<StoreObjectID>?
        var inserted: Set<StoreObjectID>?
        func exists(_ target: StoreObjectID) throws(StoreError) -> Bool {
            if !changes.deleted.isEmpty {
                if deleted == nil { deleted = Set(changes.deleted.map(\.objectID)) }
                if deleted?.contains(target) == true { return false }
            }
            if versions[target] != nil { return true }
            if !changes.inserted.isEmpty {
                if inserted == nil { inserted = Set(changes.inserted.map(\.objectID)) }
                if inserted?.contains(target) == true { return true }
            }
            return try currentVersion(of: target) != nil
        }
        // Rows of one layout are mostly consecutive, and saves repeat layouts: the slots to
        // look at are found once per run of rows, and kept for the next save.
        var candidates = referenceSlots
        for rows in [changes.inserted, changes.updated] {
            for row in rows {
                if row.layout !== candidates?.layout || row.objectID.entity != candidates?.entity {
                    candidates = (row.layout, row.objectID.entity, slotsThatMayReference(row))
                    referenceSlots = candidates
                }
                for slot in candidates?.slots ?? [] {
                    switch row.slots[slot] {
                    case .reference(let target)?:
                        if try !exists(target) { throw .danglingReference(from: row.objectID, property: row.layout.names[slot], to: target) }
                    case .references(let targets)?:
                        for target in targets where try !exists(target) {
                            throw .danglingReference(from: row.objectID, property: row.layout.names[slot], to: target)
                        }
                    default:
                        continue
                    }
                }
            }
        }
    }

    /// The slots of `row` that may hold a reference: every slot but those of the model's
    /// attributes, when the row is laid out in its entity's layout (or one extending it);
    /// every slot otherwise. Reading each value of a row to find none cost a bulk insert 5% of
    /// its instructions and a one-object save 4%.
    private func slotsThatMayReference(_ row: StoreRow) -> [Int] {
        guard let entity = entities[row.objectID.entityName], row.layout.extends(entity.propertyLayout) else {
            return Array(row.slots.indices)
        }
        let traits = entity.layoutTraits
        return row.slots.indices.filter { $0 >= traits.count || traits[$0].attributeType == nil }
    }

    /// A frame writer for the next save at the log's end. With full durability it starts with a
    /// sync marker when every frame before it is synced by this handle, so recovery can tell a
    /// frame damaged after it was synced from a torn write (Formats/wal.md §3, §7): the same
    /// bytes as the marker ``writeSyncMarker()`` left there. Caller holds `commitLock`.
    func frameWriter(capacity: Int) -> LogFrameWriter {
        var frames = LogFrameWriter(salt: root.logSalt, sequence: logSequence, chain: logChain, capacity: capacity + LogLayout.frameHeaderSize + LogLayout.frameTrailerSize)
        if options.durability == .full, logEnd > UInt64(LogLayout.firstFrameOffset) {
            group.lock()
            let synced = syncedLogEnd == logEnd
            group.unlock()
            if synced { frames.appendSyncMarker() }
        }
        return frames
    }

    /// Writes a sync marker right after the frames this handle has just synced, when nothing was
    /// queued behind them, so the last save before a crash is certified like every other
    /// (Formats/wal.md §3, §5). One `pwrite` of an empty frame, not synced: the next save's sync
    /// or the close carries it. The log position does not move past it: the next save, of this
    /// handle or another process, writes over it (this handle's next save begins with the same
    /// marker bytes, ``frameWriter(capacity:)``), so no handle's idea of the log's end depends on
    /// a frame no counter announced. Caller holds `commitLock` (and, when sharing, the write lock).
    ///
    /// - Throws: ``StoreError/io(detail:)`` when the marker cannot be written. The save before it
    ///   is durable, but the handle is poisoned, as after any failed write: the caller learns it
    ///   at the save that met the failure, not at the next one.
    func writeSyncMarker() throws(StoreError) {
        guard options.durability == .full, let logFile, logEnd > UInt64(LogLayout.firstFrameOffset) else { return }
        group.lock()
        let synced = syncedLogEnd == logEnd && queue.isEmpty && !leaderActive && poisoned == nil
        group.unlock()
        guard synced else { return }
        var frames = LogFrameWriter(salt: root.logSalt, sequence: logSequence, chain: logChain, capacity: LogLayout.frameHeaderSize + LogLayout.frameTrailerSize)
        frames.appendSyncMarker()
        do {
            try logFile.write(frames.bytes, at: logEnd)
        } catch {
            let failure = StoreError.io(detail: "the save was synced, but the log could not be written after it; the store must be reopened: \(error)")
            group.lock()
            if poisoned == nil { poisoned = failure }
            group.unlock()
            throw failure
        }
        logAllocatedEnd = max(logAllocatedEnd, logEnd + UInt64(frames.bytes.count))
    }

    /// Queues finished frames at the log's end and advances the writer's log position.
    /// Caller holds `commitLock`.
    func appendBatch(_ frames: LogFrameWriter, publish: PublishSet) -> CommitBatch {
        let start = logEnd
        logSequence = frames.sequence
        logChain = frames.chain
        logEnd = start + UInt64(frames.bytes.count)
        nextBatchID += 1
        return CommitBatch(id: nextBatchID, offset: start, bytes: frames.bytes, publish: publish)
    }

    /// The version of an object in the latest state, `nil` when it does not exist.
    /// Caller holds `commitLock`.
    func currentVersion(of id: StoreObjectID) throws(StoreError) -> Int64? {
        guard let entityID = catalog.entityID(of: id.entity) else { return nil }
        let key = ObjectKey(entityID: entityID, key: id.primaryKey)
        let published = rw.withReadLock { publishedBatchID }
        for batch in pendingBatches.reversed() where batch.id > published {
            if let pending = batch.lookup(key) { return pending.location == nil ? nil : pending.version }
        }
        return try rw.withReadLock { () throws(StoreError) -> Int64? in
            guard let location = try location(entityID: entityID, key: id.primaryKey) else { return nil }
            return try recordHeader(at: location).version
        }
    }

    /// The row of an object in the latest state. A queued save's row is read after waiting for
    /// its publication. Caller holds `commitLock`.
    func currentRow(_ id: StoreObjectID) throws(StoreError) -> StoreRow? {
        guard let entityID = catalog.entityID(of: id.entity) else { return nil }
        let key = ObjectKey(entityID: entityID, key: id.primaryKey)
        let published = rw.withReadLock { publishedBatchID }
        if pendingBatches.contains(where: { $0.id > published && $0.lookup(key) != nil }) {
            drainGroupCommits()
        }
        return try rw.withReadLock { () throws(StoreError) -> StoreRow? in
            guard let location = try location(entityID: entityID, key: id.primaryKey) else { return nil }
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
            for (entityID, table) in try loadedIndex().tables.enumerated() {
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

    /// Waits for `batch`, then lets the write lock of a shared store go if no save needs it.
    /// After it, a sync marker follows the synced frames when nothing was queued behind them.
    func waitAndEndWrite(_ batch: CommitBatch) throws(StoreError) {
        var failure: StoreError?
        do { try wait(for: batch) } catch { failure = error }
        commitLock.lock()
        if failure == nil {
            do { try writeSyncMarker() } catch { failure = error }
        }
        releaseWriteLockIfIdle()
        commitLock.unlock()
        if let failure { throw failure }
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
                if error == nil, options.durability == .full, let last = batches.last {
                    syncedLogEnd = last.offset + UInt64(last.bytes.count)
                }
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
        let end = first.offset + UInt64(bytes.count)
        let step = UInt64(LogLayout.preallocationStep)
        if end > logAllocatedEnd, bytes.count <= LogLayout.preallocationStep / 4 {
            // Formats/wal.md §5: zeros up to the next step in the same write, so the next saves'
            // syncs overwrite bytes in place instead of also committing a new file size.
            let padded = (end / step + 1) * step
            // An array, not repeatElement: the generic append is ~1,000× slower in debug builds.
            bytes.append(contentsOf: [UInt8](repeating: 0, count: Int(padded - end)))
        }
        announce(.writesBegun)
        do {
            try logFile.write(bytes, at: first.offset)
            logAllocatedEnd = max(logAllocatedEnd, first.offset + UInt64(bytes.count))
            if options.durability == .full { try logFile.sync() }
        } catch {
            return .io(detail: "the save could not be made durable; the store must be reopened: \(error)")
        }
        rw.withWriteLock {
            for batch in batches { apply(batch.publish) }
            // Batches publish in ID order, so this marks every overlay entry up to it stale.
            if let last = batches.last {
                publishedBatchID = last.id
                publishedLogEnd = last.offset + UInt64(last.bytes.count)
            }
        }
        announce(.commits)
        return nil
    }

    /// Brings the built secondary indexes of the entities a save changed up to date, or drops
    /// them when the save's values are not known. Caller holds `rw` exclusively.
    private func applyToSecondaryIndexes(_ publish: PublishSet) {
        secondaryLock.withLock {
            let changed = Set(publish.locations.lazy.map(\.entityID).filter { self.secondaryIndexes[$0] != nil })
            guard !changed.isEmpty else { return }
            guard let values = publish.indexValues else {
                for entityID in changed { secondaryIndexes[entityID] = nil }
                return
            }
            var changes: [Int: [String: [(key: Int64, value: StoreValue)]]] = [:]
            for value in values where changed.contains(value.entityID) {
                changes[value.entityID, default: [:]][value.attribute, default: []].append((value.key, value.value))
            }
            // A deleted object leaves every index of its entity.
            for item in publish.locations where item.location == nil && changed.contains(item.entityID) {
                for attribute in secondaryIndexes[item.entityID, default: [:]].keys {
                    changes[item.entityID, default: [:]][attribute, default: []].append((item.key, .null))
                }
            }
            for (entityID, byAttribute) in changes {
                // In place: no fetch holds a copy while `rw` is held exclusively.
                for (attribute, list) in byAttribute { secondaryIndexes[entityID]?[attribute]?.apply(list) }
            }
        }
    }

    /// Applies a published save to the reader-visible state. Caller holds `rw` exclusively.
    func apply(_ publish: PublishSet) {
        if !indexedAttributes.isEmpty { applyToSecondaryIndexes(publish) }
        indexLock.withLock {
            for (entityID, key, location, _) in publish.locations { publishLocation(entityID: entityID, key: key, location: location) }
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
