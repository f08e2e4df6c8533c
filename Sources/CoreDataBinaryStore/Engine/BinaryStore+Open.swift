import CoreDataBinaryFormat
import CoreDataModel
import CoreDataStorage
import Foundation

extension BinaryStore {
    /// Everything open finds, before the store object exists.
    struct Opened {
        var dataFile: any StoreFile
        var logFile: (any StoreFile)?
        var header: FileHeader
        var root: RootSlot
        var activeSlot: Int
        var catalog: Catalog
        /// The whole index, or (with `persisted`) the changes the log replay made over it.
        var index: ObjectIndex
        var persisted: PersistedIndex?
        /// The persisted secondary indexes (§7.2).
        var secondary: [SecondaryIndexID: SecondaryIndexListing]
        var metadata: StoreMetadata
        var logEnd: UInt64
        var logSequence: UInt64
        var logChain: UInt64
        var logTombstones: [(entityID: Int, key: Int64, location: UInt64)]
        var nextKeys: [String: Int64]
        var report: BinaryStore.OpenReport
    }

    /// - Parameter unheard: whether this handle has no shared counters: a shared writer then
    ///   marks `NAME-shm` before it writes anything (Formats/wal.md §9, unheard writers).
    static func open(path: String, model: NSManagedObjectModel, metadata: StoreMetadata, options: BinaryStoreOptions, unheard: Bool) throws(StoreError) -> Opened {
        if options.exclusiveAccess || options.readOnly { return try openAlone(path: path, model: model, metadata: metadata, options: options) }
        // Shared (Formats/wal.md §9): the log's write lock orders this open after every
        // creation, checkpoint and compaction in other processes; it is held only while opening.
        let fs = options.fileSystem
        let log = try lockedFile(path + "-wal", options: options, permissionsOf: path)
        do throws(StoreError) {
            // Under the write lock: a handle closing alone clears the mark under it too.
            if unheard { try markUnheardWriter(path: path, fileSystem: fs) }
            if !fs.fileExists(path) {
                try create(path: path, model: model, metadata: metadata, fileSystem: fs, log: log)
            } else if fs.fileExists(path + "-compact") {
                // A compaction that did not reach its rename: the old file is still the store.
                do { try fs.remove(path + "-compact") } catch { throw ioError(error) }
            }
            let dataFile = try presenceLockedDataFile(path: path, options: options)
            do {
                let opened = try recover(path: path, dataFile: dataFile, options: options, lockedLog: log)
                log.unlock()
                return opened
            } catch {
                dataFile.close()
                throw error
            }
        } catch {
            log.unlock()
            log.close()
            throw error
        }
    }

    /// Opens with the data file's lock held for the handle's life: exclusive for a writer that
    /// asked for exclusive access, shared for a reader (which a shared writer's lock admits).
    private static func openAlone(path: String, model: NSManagedObjectModel, metadata: StoreMetadata, options: BinaryStoreOptions) throws(StoreError) -> Opened {
        let fs = options.fileSystem
        // A writer takes the log's write lock for its open too, so it never creates, removes,
        // cuts or recovers under another process's creation, checkpoint or compaction
        // (Formats/wal.md §9).
        let log = options.readOnly ? nil : try lockedFile(path + "-wal", options: options, permissionsOf: path)
        defer {
            log?.unlock()
            log?.close()
        }
        if !fs.fileExists(path) {
            guard !options.readOnly, let log else { throw .io(detail: "there is no store at \(path)") }
            try create(path: path, model: model, metadata: metadata, fileSystem: fs, log: log)
        } else if !options.readOnly, fs.fileExists(path + "-compact") {
            // A compaction that did not reach its rename: the old file is still the store.
            do { try fs.remove(path + "-compact") } catch { throw ioError(error) }
        }
        let dataFile = try presenceLockedDataFile(path: path, options: options)
        do {
            return try recover(path: path, dataFile: dataFile, options: options)
        } catch {
            dataFile.close()
            throw error
        }
    }

    /// The data file, opened and locked: exclusively for a writer with exclusive access, shared
    /// otherwise. The lock is held on the file the path names once it is taken: a compaction
    /// that renamed another file into place meanwhile makes it try again.
    static func presenceLockedDataFile(path: String, options: BinaryStoreOptions) throws(StoreError) -> any StoreFile {
        let fs = options.fileSystem
        let exclusive = options.exclusiveAccess && !options.readOnly
        for _ in 0..<8 {
            let dataFile: any StoreFile
            do { dataFile = try fs.open(path, create: false, readOnly: options.readOnly) } catch { throw ioError(error) }
            do {
                guard try dataFile.lock(exclusive: exclusive, wait: options.waitForLock) else {
                    let holder = options.readOnly || !options.exclusiveAccess ? "a process holds it with exclusive access" : "it is open there"
                    throw StoreError.io(detail: "the store at \(path) \(lockConflictPhrase) (\(holder))")
                }
            } catch let error as StoreError {
                dataFile.close()
                throw error
            } catch {
                dataFile.close()
                throw .io(detail: "\(error)")
            }
            if let locked = dataFile.identity(), let named = fs.identity(of: path), locked != named {
                dataFile.close()
                continue
            }
            return dataFile
        }
        throw .io(detail: "the store at \(path) was replaced while it was being opened, again and again")
    }

    /// `path` opened (created when missing, never truncated, never through a symbolic link, with
    /// the permissions of `reference` when made here) and locked exclusively, waiting up to the
    /// lock timeout (Formats/wal.md §9: the log is the write lock of a shared store).
    static func lockedFile(_ path: String, options: BinaryStoreOptions, permissionsOf reference: String) throws(StoreError) -> any StoreFile {
        let fs = options.fileSystem
        for _ in 0..<8 {
            let file: any StoreFile
            do { file = try fs.openOwnFile(path, creation: .ifMissing, readOnly: false, permissionsOf: reference) } catch { throw ioError(error) }
            var pending: LockAttempt?
            do {
                try lockWaiting(file, path: path, timeout: options.lockTimeout, pending: &pending, closingOnTimeout: true)
            } catch {
                // A wait still blocked in the kernel closes the file when it ends.
                if pending == nil { file.close() }
                throw error
            }
            if let locked = file.identity(), let named = fs.identity(of: path), locked != named {
                file.unlock()
                file.close()
                continue
            }
            return file
        }
        throw .io(detail: "\(path) was replaced while it was being locked, again and again")
    }

    /// Takes `file`'s exclusive lock, waiting up to `timeout` seconds as ``LockWaiting`` does
    /// with the pauses of Formats/wal.md §9; a lock-conflict error when it is held all that time.
    static func lockWaiting(
        _ file: any StoreFile, path: String, timeout: Double, pending: inout LockAttempt?, closingOnTimeout: Bool = false
    ) throws(StoreError) {
        let waiting = LockWaiting(pollingTime: LogLayout.lockPollingTime, firstPause: LogLayout.lockRetryPauses.first, longestPause: LogLayout.lockRetryPauses.longest)
        let locked: Bool
        do { locked = try waiting.lockExclusively(file, timeout: timeout, pending: &pending, closingOnTimeout: closingOnTimeout) } catch { throw ioError(error) }
        // Worded only on failure: every save of a shared store takes this lock, and the message
        // (a path and a Double formatted) cost a save about 6,000 instructions.
        guard locked else {
            throw .io(detail: "the store at \(path.hasSuffix("-wal") ? String(path.dropLast(4)) : path) \(lockConflictPhrase) (its write lock was held for more than \(timeout) s)")
        }
    }

    /// The catalog a new store of `model` starts with: entities by name, each with its stored
    /// attributes, then its stored relationships, each sorted by name. (The fuzz targets decode
    /// records against the catalog of a new store of the test model without opening one.)
    package static func newCatalog(for model: NSManagedObjectModel) -> Catalog {
        var catalog = Catalog()
        for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            guard let name = entity.name else { continue }
            let properties = entity.slotAttributesByName.filter { !$0.value.isTransient }.keys.sorted()
                + entity.relationshipsByName.filter { !$0.value.isTransient }.keys.sorted()
            catalog.register(entity: name, properties: properties)
        }
        return catalog
    }

    /// Writes a new store beside its final name, syncs it and renames it into place, so a crash
    /// never leaves a half-made store under the store's name.
    /// The caller holds the log locked (every writer's open takes it first), so no other
    /// process creates, opens or saves meanwhile: the log is made empty here, never truncated
    /// through another handle.
    static func create(path: String, model: NSManagedObjectModel, metadata: StoreMetadata, fileSystem fs: any StoreFileSystem, log lockedLog: any StoreFile) throws(StoreError) {
        let catalog = newCatalog(for: model)
        let uuid = (metadata[NSStoreUUIDKeyName] as? String).flatMap(UUID.init(uuidString:)) ?? UUID()
        let header = FileHeader(storeUUID: uuid, created: UInt64(max(0, Date().timeIntervalSince1970 * 1000)))
        var bytes = header.encoded()
        bytes.append(contentsOf: repeatElement(0, count: BinaryStoreLayout.firstPageOffset - bytes.count))
        let catalogOffset = UInt64(bytes.count)
        bytes.append(contentsOf: PageCodec.encode(kind: .catalog, payload: catalog.encoded(), generation: 1))
        let metadataOffset = UInt64(bytes.count)
        bytes.append(contentsOf: PageCodec.encode(kind: .metadata, payload: try encodeMetadata(metadata), generation: 1))
        let root = RootSlot(
            generation: 1, dataEnd: UInt64(bytes.count), indexDirectoryOffset: 0, catalogOffset: catalogOffset,
            metadataOffset: metadataOffset, logSalt: UInt64.random(in: 1...UInt64.max), objectCount: 0)
        let slot = root.encoded()
        let start = BinaryStoreLayout.rootSlotOffsets[0]
        bytes.replaceSubrange(start..<(start + slot.count), with: slot)
        let temporary = path + "-creating"
        do {
            // Left by a creation a crash cut short; removing the name never follows a link.
            if fs.fileExists(temporary) { try fs.remove(temporary) }
            let file = try fs.openOwnFile(temporary, creation: .exclusive, readOnly: false, permissionsOf: nil)
            defer { file.close() }
            try file.write(bytes, at: 0)
            try file.sync()
            // Under the write lock with no data file, no process can have saved into it.
            try lockedLog.truncate(to: 0)
            try lockedLog.write(LogHeader(storeUUID: uuid).encoded(), at: 0)
            try lockedLog.sync()
            try fs.publish(temporary, as: path)
            try fs.syncDirectory(containing: path)
        } catch {
            throw ioError(error)
        }
    }

    /// What the data file's active root publishes: everything of the store but its log.
    struct CheckpointedState {
        var header: FileHeader
        var root: RootSlot
        var activeSlot: Int
        var catalog: Catalog
        var metadata: StoreMetadata
        /// The rebuilt index when `persisted` is `nil`, else empty.
        var index: ObjectIndex
        var persisted: PersistedIndex?
        var rebuiltIndex: String?
        /// The persisted secondary indexes (§7.2); empty when their directory is damaged.
        var secondary: [SecondaryIndexID: SecondaryIndexListing]
        var droppedSecondaryIndexes: String?
        /// The slot not in use, as read with the root (§3, §12: a damaged one needs a look at
        /// the log and is cleared by a writable open).
        var inactiveSlot: RootSlot.Decoded
        /// The data file's size at open: above the root's data end, pages of an unpublished
        /// checkpoint follow it.
        var fileSize: UInt64
    }

    /// Reads the header, the root, the catalog, the metadata and the index directory
    /// (Formats/binary-store.md §12 steps 1–4): at open, and when another process published a
    /// new root (Formats/wal.md §9).
    static func readCheckpointedState(path: String, dataFile: any StoreFile) throws(StoreError) -> CheckpointedState {
        let head: [UInt8]
        do { head = try dataFile.read(at: 0, count: BinaryStoreLayout.firstPageOffset) } catch { throw ioError(error) }
        let header: FileHeader
        do { header = try FileHeader(decoding: head) } catch { throw .corrupt(detail: "\(path): \(error)") }
        guard head.count == BinaryStoreLayout.firstPageOffset else {
            throw .corrupt(detail: "\(path): the file ends at \(head.count) bytes, inside its header area")
        }
        guard let (root, activeSlot) = RootSlot.newest(in: head) else { throw .corrupt(detail: "\(path): both root slots are damaged") }
        let fileSize: UInt64
        do { fileSize = try dataFile.size() } catch { throw ioError(error) }
        guard root.dataEnd <= fileSize else {
            throw .corrupt(detail: "\(path): the root says the data ends at \(root.dataEnd) but the file has \(fileSize) bytes")
        }

        let (catalogHeader, catalogPayload) = try readPage(dataFile, at: root.catalogOffset, dataEnd: root.dataEnd)
        guard catalogHeader.kind == .catalog else { throw .corrupt(detail: "data file offset \(root.catalogOffset): expected the catalog page") }
        var catalog: Catalog
        do { catalog = try Catalog(decoding: catalogPayload) } catch { throw .corrupt(detail: error.within("data file offset \(root.catalogOffset) (catalog page)").description) }
        let (metadataHeader, metadataPayload) = try readPage(dataFile, at: root.metadataOffset, dataEnd: root.dataEnd)
        guard metadataHeader.kind == .metadata else { throw .corrupt(detail: "data file offset \(root.metadataOffset): expected the metadata page") }
        var metadata: StoreMetadata
        do { metadata = try MetadataCodec.decode(metadataPayload, location: "data file offset \(root.metadataOffset) (metadata page)") } catch { throw corrupt(error) }

        // Only the index directory is read here (§7): lookups search the pages in place until
        // something needs the whole index. A damaged directory rebuilds the index now.
        var index = ObjectIndex()
        var persisted: PersistedIndex?
        var report = OpenReport()
        do {
            persisted = try readIndexDirectory(dataFile, root: root)
        } catch {
            // A read that failed says nothing about the directory's bytes: only damage rebuilds.
            if case .io = error { throw error }
            index = try rebuildIndex(dataFile, root: root, catalog: catalog)
            report.rebuiltIndex = "\(error)"
        }
        // A damaged secondary-index directory costs only the indexes (§7.2): fetches build them.
        var secondary: [SecondaryIndexID: SecondaryIndexListing] = [:]
        do {
            secondary = try readSecondaryDirectory(dataFile, root: root, catalog: catalog)
        } catch {
            if case .io = error { throw error }
            report.droppedSecondaryIndexes = "\(error)"
        }
        let inactiveOffset = BinaryStoreLayout.rootSlotOffsets[1 - activeSlot]
        return CheckpointedState(
            header: header, root: root, activeSlot: activeSlot, catalog: catalog, metadata: metadata, index: index,
            persisted: persisted, rebuiltIndex: report.rebuiltIndex, secondary: secondary, droppedSecondaryIndexes: report.droppedSecondaryIndexes,
            inactiveSlot: RootSlot.decode(Array(head[inactiveOffset..<(inactiveOffset + BinaryStoreLayout.rootSlotSize)])),
            fileSize: fileSize)
    }

    /// Reads the checkpointed state, then replays the log (Formats/binary-store.md §12,
    /// Formats/wal.md §7). A handle that shares the store passes the log it has locked.
    static func recover(path: String, dataFile: any StoreFile, options: BinaryStoreOptions, lockedLog: (any StoreFile)? = nil) throws(StoreError) -> Opened {
        let fs = options.fileSystem
        let state = try readCheckpointedState(path: path, dataFile: dataFile)
        let (header, root, activeSlot) = (state.header, state.root, state.activeSlot)
        var (catalog, metadata, index, persisted) = (state.catalog, state.metadata, state.index, state.persisted)
        var report = OpenReport()
        report.rebuiltIndex = state.rebuiltIndex
        report.droppedSecondaryIndexes = state.droppedSecondaryIndexes
        var nextKeys: [String: Int64] = [:]
        for entity in catalog.entities where entity.nextPrimaryKey > 1 { nextKeys[entity.name] = entity.nextPrimaryKey }
        for (entityID, table) in index.tables.enumerated() where entityID < catalog.entities.count {
            if let last = table.keys.last {
                let name = catalog.entities[entityID].name
                nextKeys[name] = max(nextKeys[name, default: 1], last + 1)
            }
        }

        // The log.
        let logPath = path + "-wal"
        var logFile: (any StoreFile)?
        var logEnd = UInt64(LogLayout.firstFrameOffset)
        var sequence: UInt64 = 0
        var chain = root.logSalt
        var tombstones: [(entityID: Int, key: Int64, location: UInt64)] = []
        do {
            if let lockedLog {
                logFile = lockedLog
                if try lockedLog.size() == 0 {
                    // Made by this open, under its lock (Formats/wal.md §9).
                    try lockedLog.write(LogHeader(storeUUID: header.storeUUID).encoded(), at: 0)
                    try lockedLog.sync()
                    try fs.syncDirectory(containing: logPath)
                }
            } else if !fs.fileExists(logPath) {
                if !options.readOnly {
                    let log = try fs.openOwnFile(logPath, creation: .ifMissing, readOnly: false, permissionsOf: path)
                    try log.write(LogHeader(storeUUID: header.storeUUID).encoded(), at: 0)
                    try log.sync()
                    try fs.syncDirectory(containing: logPath)
                    logFile = log
                }
            } else {
                logFile = try fs.openOwnFile(logPath, creation: .never, readOnly: options.readOnly, permissionsOf: nil)
            }
            if let log = logFile {
                let size = try log.size()
                // No frame after a header that is zero, cut or unreadable: a log whose creation a
                // crash cut short (Formats/wal.md §2); such a header in front of frames is damage.
                let start = size < UInt64(LogLayout.headerSize) ? [] : try log.read(at: 0, count: LogLayout.firstFrameOffset + LogLayout.frameHeaderSize)
                if LogHeader.isUnfinishedCreation(start) {
                    // A log cut inside its header holds no frame; a writer rewrites the header.
                    if !options.readOnly {
                        try log.write(LogHeader(storeUUID: header.storeUUID).encoded(), at: 0)
                        try log.sync()
                    }
                } else {
                    let logHeader = try LogHeader(decoding: try log.read(at: 0, count: LogLayout.headerSize))
                    guard logHeader.storeUUID == header.storeUUID else {
                        throw StoreError.corrupt(detail: "\(logPath) belongs to another store (its store UUID differs)")
                    }
                    if let newer = try newerCheckpointEvidence(state, log: log, logSize: size, logPath: logPath) {
                        guard options.salvagesDamagedLog else { throw StoreError.corrupt(detail: "\(path): \(newer)") }
                        report.logDamage = newer
                    }
                    let replay = try LogReplay.run(log, size: size, salt: root.logSalt, catalog: catalog, salvaging: options.salvagesDamagedLog)
                    report.logDamage = report.logDamage ?? replay.damage
                    for transaction in replay.transactions {
                        if let newCatalog = transaction.catalog {
                            catalog = newCatalog
                            // Keys another process reserved (Formats/wal.md §9) are not handed out again.
                            for entity in newCatalog.entities where entity.nextPrimaryKey > nextKeys[entity.name, default: 1] {
                                nextKeys[entity.name] = entity.nextPrimaryKey
                            }
                        }
                        if let newMetadata = transaction.metadata { metadata = newMetadata }
                        for put in transaction.records {
                            if persisted != nil {
                                index.record(entityID: put.entityID, key: put.key, location: put.tombstone ? 0 : put.location)
                                if put.tombstone { tombstones.append((put.entityID, put.key, put.location)) }
                            } else if put.tombstone {
                                index.remove(entityID: put.entityID, key: put.key)
                                tombstones.append((put.entityID, put.key, put.location))
                            } else {
                                index.set(entityID: put.entityID, key: put.key, location: put.location)
                            }
                        }
                    }
                    for (name, key) in replay.highestKeys(namedBy: catalog) { nextKeys[name] = max(nextKeys[name, default: 1], key + 1) }
                    logEnd = replay.end
                    sequence = replay.sequence
                    chain = replay.chain
                    report.replayedSaves = replay.transactions.count
                    report.droppedLogBytes = replay.droppedBytes
                }
            }
            if !options.readOnly, state.fileSize > root.dataEnd {
                // Pages of a checkpoint that never published its root. The power may have failed
                // while that root was being written: an unreadable slot left by it is cleared,
                // so verify does not take it for damage once the pages are gone (§3, §12).
                try dataFile.truncate(to: root.dataEnd)
                if case .damaged = state.inactiveSlot {
                    try dataFile.write([UInt8](repeating: 0, count: BinaryStoreLayout.rootSlotSize), at: UInt64(BinaryStoreLayout.rootSlotOffsets[1 - activeSlot]))
                }
                try dataFile.sync()
            }
        } catch {
            throw storeError(error)
        }
        return Opened(
            dataFile: dataFile, logFile: logFile, header: header, root: root, activeSlot: activeSlot, catalog: catalog,
            index: index, persisted: persisted, secondary: state.secondary, metadata: metadata, logEnd: logEnd, logSequence: sequence, logChain: chain,
            logTombstones: tombstones, nextKeys: nextKeys, report: report)
    }

    /// Why the root in use cannot be the newest, or `nil` (Formats/binary-store.md §12, the
    /// damaged root slot). A damaged root slot with pages after the data end is a checkpoint
    /// whose root write was cut, or one whose root was published and then damaged; the log tells
    /// them apart. A checkpoint runs only with saves in the log and syncs the log before it
    /// writes its root (§9 step 3), so a cut one leaves a valid first frame with the salt of the
    /// root in use at the log's start. Anything else there (a frame of another salt, written
    /// after a newer root was published, or no frame, the log truncated after it) means the
    /// newer root existed: opening the older one would drop that checkpoint, and every save
    /// after it, without a word.
    static func newerCheckpointEvidence(_ state: CheckpointedState, log: any StoreFile, logSize: UInt64, logPath: String) throws -> BinaryFormatError? {
        let root = state.root
        guard case .damaged(let why) = state.inactiveSlot, state.fileSize > root.dataEnd else { return nil }
        let otherOffset = BinaryStoreLayout.rootSlotOffsets[1 - state.activeSlot]
        let start = UInt64(LogLayout.firstFrameOffset)
        var found = "no save"
        if logSize >= start + UInt64(LogLayout.frameHeaderSize + LogLayout.frameTrailerSize),
           let first = LogFrameHeader(decoding: try log.read(at: start, count: LogLayout.frameHeaderSize)), first.sequence == 1,
           UInt64(first.totalLength) <= logSize - start {
            let frame = try log.read(at: start, count: first.totalLength)
            // The first frame's checksum is seeded with its own salt (wal.md §3).
            if frame.count == first.totalLength, LogFrameCodec.isValid(frame, seed: first.salt) {
                if first.salt == root.logSalt { return nil }
                found = "a frame of a newer checkpoint (salt \(String(first.salt, radix: 16)), not the older root's \(String(root.logSalt, radix: 16)))"
            }
        }
        return BinaryFormatError(
            "data file offset \(otherOffset) (root slot)",
            "the slot is damaged (\(why)) and the pages after the older root's data end are a newer checkpoint: \(logPath) begins with \(found), where a checkpoint cut short would have left the older root's saves; that checkpoint and the saves after it would be lost; open read-only with salvage to read the older root")
    }

    /// One index page (§7), checked: its kind, its entries' entity IDs and key range, every
    /// location inside the data pages, and the entries in order.
    static func checkedIndexPage(_ file: any StoreFile, at offset: UInt64, root: RootSlot, entityCount: Int) throws(StoreError) -> [IndexEntry] {
        let (header, payload) = try readPage(file, at: offset, dataEnd: root.dataEnd, readAhead: indexPageReadAhead(objectCount: root.objectCount))
        guard header.kind == .index else { throw .corrupt(detail: "expected an index page at \(offset)") }
        let entries: [IndexEntry]
        do { entries = try IndexPageCodec.decodePage(payload, pageOffset: offset) } catch { throw corrupt(error) }
        var previous: (UInt32, Int64)?
        for entry in entries {
            guard Int(entry.entityID) < entityCount, entry.primaryKey >= 1,
                  entry.location & RecordLocation.logBit == 0,
                  case .page(let pageOffset, _) = RecordLocation(raw: entry.location),
                  pageOffset >= UInt64(BinaryStoreLayout.firstPageOffset), pageOffset < root.dataEnd
            else { throw .corrupt(detail: "index page \(offset): an entry points outside the data") }
            if let previous, previous >= (entry.entityID, entry.primaryKey) {
                throw .corrupt(detail: "index page \(offset): entries out of order")
            }
            previous = (entry.entityID, entry.primaryKey)
        }
        return entries
    }

    /// Loads the persisted index through its directory; throws on any damage so the caller rebuilds.
    package static func loadIndex(_ file: any StoreFile, root: RootSlot, catalog: Catalog) throws(StoreError) -> ObjectIndex {
        try loadIndexAndPages(file, root: root, catalog: catalog).index
    }

    /// Loads the persisted index, and returns its pages with each page's first key (`nil` for a
    /// store with no index pages); throws on any damage so the caller rebuilds.
    static func loadIndexAndPages(_ file: any StoreFile, root: RootSlot, catalog: Catalog) throws(StoreError) -> (index: ObjectIndex, pages: PersistedIndex?) {
        var index = ObjectIndex()
        guard root.indexDirectoryOffset != 0 else { return (index, nil) }
        let (header, payload) = try readPage(file, at: root.indexDirectoryOffset, dataEnd: root.dataEnd)
        guard header.kind == .indexDirectory else { throw .corrupt(detail: "expected the index directory") }
        let directory: (pageOffsets: [UInt64], totalEntries: UInt64)
        do { directory = try IndexPageCodec.decodeDirectory(payload, pageOffset: root.indexDirectoryOffset) } catch { throw corrupt(error) }
        var previous: (UInt32, Int64)?
        var count: UInt64 = 0
        var firstKeys: [IndexKey?] = []
        firstKeys.reserveCapacity(directory.pageOffsets.count)
        for offset in directory.pageOffsets {
            let entries = try checkedIndexPage(file, at: offset, root: root, entityCount: catalog.entities.count)
            guard let first = entries.first else { throw .corrupt(detail: "index page \(offset) is empty") }
            firstKeys.append(IndexKey(first))
            for entry in entries {
                // Within a page `checkedIndexPage` saw to the order; this sees to it across pages.
                if let previous, (previous.0, previous.1) >= (entry.entityID, entry.primaryKey) {
                    throw .corrupt(detail: "index page \(offset): entries out of order")
                }
                previous = (entry.entityID, entry.primaryKey)
                index.set(entityID: Int(entry.entityID), key: entry.primaryKey, location: entry.location)
                count += 1
            }
        }
        guard count == directory.totalEntries, count == root.objectCount, !directory.pageOffsets.isEmpty else {
            throw .corrupt(detail: "the index holds \(count) entries in \(directory.pageOffsets.count) pages; the directory says \(directory.totalEntries) and the root \(root.objectCount)")
        }
        return (index, PersistedIndex(pageOffsets: directory.pageOffsets, totalEntries: count, firstKeys: firstKeys))
    }

    /// Rebuilds the index by reading every data page in file order (Formats/binary-store.md §7).
    static func rebuildIndex(_ file: any StoreFile, root: RootSlot, catalog: Catalog) throws(StoreError) -> ObjectIndex {
        var index = ObjectIndex()
        var offset = UInt64(BinaryStoreLayout.firstPageOffset)
        while offset < root.dataEnd {
            let length = try pageLength(file, at: offset)
            if try pageKind(file, at: offset) == .data {
                // Only data pages matter here; a damaged index page is why we are rebuilding.
                let page = try readDataPage(file, at: offset, dataEnd: root.dataEnd)
                for slot in 0..<page.count {
                    guard let range = page.range(of: slot) else { continue }
                    let record: RecordHeader
                    do { record = try RecordCodec.decodeHeader(page.payload, from: range.lowerBound, to: range.upperBound, catalog: catalog) } catch {
                        throw .corrupt(detail: error.within("data file offset \(offset), slot \(slot)").description)
                    }
                    if record.kind == .row {
                        index.set(entityID: record.entityID, key: record.primaryKey, location: RecordLocation.page(offset: offset, slot: slot).raw)
                    } else {
                        index.remove(entityID: record.entityID, key: record.primaryKey)
                    }
                }
            }
            offset += UInt64(BinaryStoreLayout.pageHeaderSize) + UInt64(length)
        }
        index.compact()
        return index
    }

    private static func pageLength(_ file: any StoreFile, at offset: UInt64) throws(StoreError) -> Int {
        try pageHeader(file, at: offset).storedLength
    }

    private static func pageKind(_ file: any StoreFile, at offset: UInt64) throws(StoreError) -> PageKind {
        try pageHeader(file, at: offset).kind
    }

    private static func pageHeader(_ file: any StoreFile, at offset: UInt64) throws(StoreError) -> PageHeader {
        do { return try PageHeader(decoding: try file.read(at: offset, count: BinaryStoreLayout.pageHeaderSize), at: offset) } catch let error as BinaryFormatError {
            throw corrupt(error)
        } catch let error as StoreIOError {
            throw ioError(error)
        } catch {
            throw .io(detail: "\(error)")
        }
    }
}

/// What the error of an open that found the store locked says (``StoreError/isLockConflict``).
let lockConflictPhrase = "is locked by another process"

extension StoreError {
    /// Whether this is the error of an open that found another process holding the store's lock
    /// (a writer, for a read-only open; anyone, for a writable one). Tools tell it apart from
    /// other I/O errors to say "try again later" instead of "the file cannot be read".
    public var isLockConflict: Bool {
        if case .io(let detail) = self { return detail.contains(lockConflictPhrase) }
        return false
    }
}

/// The metadata key of the store's UUID (`NSStoreUUIDKey` in the CoreData module).
let NSStoreUUIDKeyName = "NSStoreUUID"
