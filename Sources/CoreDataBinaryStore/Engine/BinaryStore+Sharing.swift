import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// Several processes on one store (Formats/wal.md §9). Each handle keeps its own index, cache
/// and catalog, and follows the others through the files: it reads their saves from the log
/// where it last stopped ("tailing"), and reloads the checkpointed state when another process
/// published a new root. Writes take the log's exclusive lock only from a save's validation to
/// the end of its group commit.
extension BinaryStore {
    /// Whether other processes may change the store while this handle has it open.
    var followsOthers: Bool { !options.exclusiveAccess }
    /// Whether this handle writes to a store it shares.
    var sharesWrites: Bool { !options.exclusiveAccess && !options.readOnly }

    // MARK: Writing

    /// Takes the log's write lock (waiting up to the lock timeout) unless this handle holds it,
    /// then reads what other processes saved meanwhile, so validation sees the latest state and
    /// this save's frames go at the log's true end. Caller holds `commitLock`.
    func beginWrite() throws(StoreError) {
        guard sharesWrites, let logFile else { return }
        if tailLock.withLock({ writeLockHeld }) { return }
        try Self.lockWaiting(logFile, path: logPath, timeout: options.lockTimeout, pending: &pendingLock)
        tailLock.lock()
        defer { tailLock.unlock() }
        let now = trustedCounters.map { (commits: $0.load(SharedCounter.commits.rawValue), roots: $0.load(SharedCounter.roots.rawValue)) }
        // The log need not be read when no save was published since this handle last read it
        // and every write begun was finished (a writer killed between its frames and its
        // counter bump leaves begun > commits: its frames must be read, not overwritten).
        // Reading the log's last page right before writing it costs the next sync dearly.
        let quiet = now != nil && seenCounters?.commits == now?.commits
            && counters?.load(SharedCounter.writesBegun.rawValue) == now?.commits
        let changed: Bool
        let generation = rw.withReadLock { root.generation }
        do {
            changed = try tailLocked(readingLog: !quiet)
        } catch {
            logFile.unlock()
            throw error
        }
        if changed {
            // The log's end moved: what this handle synced no longer ends it (no marker until its next sync).
            resetSyncedLogEnd()
        }
        if let counters, !quiet {
            // What a killed writer began is read now; the counters agree again.
            while counters.load(SharedCounter.commits.rawValue) < counters.load(SharedCounter.writesBegun.rawValue) {
                counters.increment(SharedCounter.commits.rawValue)
            }
        }
        noteSeen(counters.map { (commits: $0.load(SharedCounter.commits.rawValue), roots: $0.load(SharedCounter.roots.rawValue)) })
        writeLockHeld = true
        // The writer continues the log where the last reader of it stopped.
        logEnd = rw.withReadLock { publishedLogEnd }
        logSequence = tailSequence
        logChain = tailChain
        if changed, rw.withReadLock({ root.generation }) != generation {
            // Another process started the log over (and may have cut it): ask its size.
            logAllocatedEnd = (try? logFile.size()) ?? UInt64(LogLayout.headerSize)
        } else if changed {
            // Writers pad the log to the preallocation step after each write that reaches past
            // it (Formats/wal.md §5), so the file extends at least that far. No fstat: a system
            // call on the log right before writing it slows the sync after it.
            let step = UInt64(LogLayout.preallocationStep)
            logAllocatedEnd = max(logAllocatedEnd, (logEnd + step - 1) / step * step)
        }
        if foreignChanges != foreignChangesSeen {
            foreignChangesSeen = foreignChanges
            unique = nil
            for (name, key) in tailHighWater { savedHighWater[name] = max(savedHighWater[name, default: 0], key) }
            tailHighWater = [:]
        }
    }

    /// Releases the write lock when nothing of this handle is queued or being written.
    /// Caller holds `commitLock`.
    func releaseWriteLockIfIdle() {
        guard sharesWrites, let logFile else { return }
        group.lock()
        let idle = queue.isEmpty && !leaderActive
        group.unlock()
        guard idle else { return }
        tailLock.lock()
        defer { tailLock.unlock() }
        guard writeLockHeld else { return }
        if poisonedError == nil {
            // What this handle wrote is published; after a failed write it is not, and the
            // handle is poisoned (every later call throws).
            tailSequence = logSequence
            tailChain = logChain
        }
        // Every bump since this handle took the lock is its own: nothing of others to read.
        noteSeen(counters.map { (commits: $0.load(SharedCounter.commits.rawValue), roots: $0.load(SharedCounter.roots.rawValue)) })
        writeLockHeld = false
        logFile.unlock()
    }

    /// After a save's group commit: let the write lock go if no other save needs it.
    func endWrite() {
        guard sharesWrites else { return }
        commitLock.lock()
        releaseWriteLockIfIdle()
        commitLock.unlock()
    }

    /// Hands out primary keys of a shared store: under the write lock, after reading other
    /// processes' saves, and reserved in the log before they are handed out (a catalog entry with
    /// the next key past the reservation, Formats/wal.md §9), so no two processes use a key.
    /// Reserves at least `LogLayout.keyReservation` keys at a time, so a run of one-object saves writes a
    /// reservation once per that many.
    func sharedPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] {
        precondition(count >= 0, "newPrimaryKeys(entityName:count:) was asked for \(count) keys")
        let reserved: Int64? = keyLock.withLock {
            // Inside this handle's own reservation: no other process hands these out.
            let first = nextKeys[entityName, default: 1]
            guard Int64(count) <= reservedKeys[entityName, default: 1] - first else { return nil }
            nextKeys[entityName] = first + Int64(count)
            return first
        }
        if let reserved { return (0..<Int64(count)).map { reserved + $0 } }
        commitLock.lock()
        var reservation: CommitBatch?
        let first: Int64
        do {
            try beginWrite()
            (first, reservation) = try reserveKeys(entityName: entityName, count: count)
        } catch {
            releaseWriteLockIfIdle()
            commitLock.unlock()
            throw error
        }
        if let reservation { enqueue(reservation) }
        commitLock.unlock()
        if let reservation { try waitAndEndWrite(reservation) } else { endWrite() }
        return (0..<Int64(count)).map { first + $0 }
    }

    /// Caller holds `commitLock` and the write lock.
    private func reserveKeys(entityName: String, count: Int) throws(StoreError) -> (Int64, CommitBatch?) {
        keyLock.lock()
        let first = nextKeys[entityName, default: 1]
        do { try checkKeyRange(entityName, first: first, count: count) } catch {
            keyLock.unlock()
            throw error
        }
        let end = first + Int64(count)
        nextKeys[entityName] = end
        let reserved = reservedKeys[entityName, default: 1]
        guard end > reserved else {
            keyLock.unlock()
            return (first, nil)
        }
        let reserveTo = min(BinaryStoreLayout.largestPrimaryKey + 1, end + max(LogLayout.keyReservation, Int64(count) / 4))
        reservedKeys[entityName] = reserveTo
        keyLock.unlock()
        var reserving = catalog
        _ = reserving.register(entity: entityName, properties: [])
        reserving.setNextPrimaryKey(reserveTo, of: entityName)
        if reserving.entities.count != catalog.entities.count {
            rw.withWriteLock { catalog = reserving }
        }
        let body = reserving.encoded()
        var frames = frameWriter(capacity: body.count + 64)
        frames.appendEntry(kind: .catalog, sizeHint: body.count) { $0.append(body) }
        frames.finish()
        return (first, appendBatch(frames, publish: PublishSet()))
    }

    /// Checkpoints on close when no other process has the store open (the data file's lock can
    /// be made exclusive), and truncates the log; with others there, checkpoints only a log past
    /// the threshold and leaves the log to them.
    func checkpointOnSharedClose() throws(StoreError) {
        try maintaining(whenSnapshotted: .skip) { () throws(StoreError) in
            let alone = (try? dataFile.lock(exclusive: true, wait: false)) == true
            if alone || logEnd > UInt64(options.checkpointThreshold) {
                try checkpointLocked(truncatingLog: alone)
            }
            // No handle is open, and an unheard one that opens next marks again under the write
            // lock this handle holds: the counters can be trusted again. Only a handle that maps
            // them clears (an unheard one has no use for them, and a test layer's trace stays
            // one write per open).
            if alone, counters != nil { try Self.clearUnheardWriterMark(path: path, fileSystem: fileSystem) }
        }
    }

    // MARK: Reading

    /// Runs a read of published state with the latest saves of every process: first reads what
    /// other processes saved since the last read, then runs `body` under the read lock, then
    /// checks that no other process published a new root meanwhile. A new root may have
    /// started the log over, so log bytes `body` read may be another save's: then the read runs
    /// again on the new state (Formats/wal.md §9, readers).
    func sharedRead<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        guard followsOthers else {
            return try rw.withReadLock { () throws(StoreError) -> T in
                guard !isClosed else { throw .closed }
                return try body()
            }
        }
        var attempts = 0
        while true {
            if let failure = poisonedError { throw failure }
            // Loaded before the files are read: a root announced after this, even during the
            // read of the log below, makes the read run again.
            let roots = trustedCounters?.load(SharedCounter.roots.rawValue)
            try refresh()
            var value: T?
            var failure: StoreError?
            var readLog = false
            var generation: UInt64 = 0
            var file: (any StoreFile)?
            rw.withReadLock {
                if isClosed { failure = .closed } else {
                    do throws(StoreError) { value = try body() } catch { failure = error }
                }
                readLog = publishedLogEnd > UInt64(LogLayout.firstFrameOffset)
                if roots == nil {
                    generation = root.generation
                    file = dataFile
                }
            }
            if case .closed? = failure { throw .closed }
            // Data pages below the root's end never change; only the log is reused. A new root is
            // announced before the log starts over (Formats/wal.md §9).
            let unchanged: Bool
            if !readLog {
                unchanged = true
            } else if let roots {
                // Marked meanwhile (an unheard writer opened): its checkpoints bump no roots
                // counter, so the read runs again through the files.
                unchanged = trustedCounters?.load(SharedCounter.roots.rawValue) == roots
            } else {
                unchanged = file.map { Self.rootGeneration(of: $0) } == generation
            }
            if unchanged {
                if let failure { throw failure }
                guard let value else { preconditionFailure("a shared read produced neither a value nor an error") }
                return value
            }
            attempts += 1
            if attempts >= 64 {
                throw .io(detail: "\(path): other processes checkpointed 64 times during one read; try again")
            }
            if attempts > 4 { usleep(UInt32(min(attempts, 20)) * 100) }
        }
    }

    /// The generation of the root `file` publishes, `nil` when neither slot reads whole (a root
    /// being written this instant).
    static func rootGeneration(of file: any StoreFile) -> UInt64? {
        rootSlotBytes(of: file).flatMap(rootGeneration(in:))
    }

    /// Both root slots as one read (Formats/binary-store.md §3), `nil` when the file is short.
    private static func rootSlotBytes(of file: any StoreFile) -> [UInt8]? {
        let first = BinaryStoreLayout.rootSlotOffsets[0]
        let span = BinaryStoreLayout.rootSlotOffsets[1] + BinaryStoreLayout.rootSlotSize - first
        guard let bytes = try? file.read(at: UInt64(first), count: span), bytes.count == span else { return nil }
        return bytes
    }

    private static func rootGeneration(in slots: [UInt8]) -> UInt64? {
        RootSlot.newest(in: slots, base: BinaryStoreLayout.rootSlotOffsets[0])?.root.generation
    }

    /// ``rootGeneration(of:)``, decoding the slots only when their bytes differ from the last
    /// ones read (the generation is a function of the bytes, whichever file they came from).
    /// Caller holds `tailLock`.
    private func rootGenerationComparingSlots(of file: any StoreFile) -> UInt64? {
        guard let bytes = Self.rootSlotBytes(of: file) else { return nil }
        if let seen = rootSlotsSeen, seen.bytes.count == bytes.count,
           seen.bytes.withUnsafeBytes({ old in bytes.withUnsafeBytes { new in
               guard let a = old.baseAddress, let b = new.baseAddress else { return false }
               return memcmp(a, b, new.count) == 0
           } }) {
            return seen.generation
        }
        let generation = Self.rootGeneration(in: bytes)
        rootSlotsSeen = (bytes, generation)
        return generation
    }

    /// Reads other processes' saves and checkpoints, unless this handle holds the write lock
    /// (then there are none).
    func refresh() throws(StoreError) {
        guard followsOthers, !nothingToRead() else { return }
        tailLock.lock()
        defer { tailLock.unlock() }
        if writeLockHeld { return }
        guard let counters = trustedCounters else {
            _ = try tailLocked()
            return
        }
        let now = (commits: counters.load(SharedCounter.commits.rawValue), roots: counters.load(SharedCounter.roots.rawValue))
        if let seen = seenCounters, seen == now { return }
        _ = try tailLocked()
        noteSeen(now)
    }

    /// Every writer bumps a counter after it publishes a save or a root, so counters equal to
    /// those of the last read of the files mean nothing to read: two loads, no lock, no system
    /// call. Safe without `tailLock`: the seen values move only after a read of the files.
    @inline(__always)
    func nothingToRead() -> Bool {
        guard let counters = trustedCounters else { return false }
        return counters.load(SharedCounter.commits.rawValue) == seenCommits.load(ordering: .acquiring)
            && counters.load(SharedCounter.roots.rawValue) == seenRoots.load(ordering: .acquiring)
    }

    /// Records the counters as of the last read of the files. Caller holds `tailLock`.
    func noteSeen(_ counters: (commits: UInt64, roots: UInt64)?) {
        seenCounters = counters
        guard let counters else { return }
        seenRoots.store(counters.roots, ordering: .releasing)
        seenCommits.store(counters.commits, ordering: .releasing)
    }

    /// After a save, checkpoint or compaction of this handle was published: tell the others.
    func announce(_ what: SharedCounter) {
        guard sharesWrites, let counters else { return }
        counters.increment(what.rawValue)
    }

    /// The counters while they tell every write: `nil` without shared memory, and once a writer
    /// that bumps none has marked `NAME-shm` (Formats/wal.md §9, unheard writers); then the
    /// handle asks the files. Its counters are still bumped (``announce(_:)``).
    @inline(__always)
    var trustedCounters: (any StoreSharedCounters)? {
        guard let counters, counters.load(SharedCounter.unheardWriters.rawValue) == 0 else { return nil }
        return counters
    }

    /// Marks `NAME-shm` for a writable handle whose file layer has no shared memory, before it
    /// reads or writes the store: handles that map the counters would otherwise take their quiet
    /// for "nothing written", write their frames over this handle's saves and miss them in reads
    /// (Formats/wal.md §9, unheard writers).
    static func markUnheardWriter(path: String, fileSystem: any StoreFileSystem) throws(StoreError) {
        let countersPath = path + "-shm"
        var mark = [UInt8](repeating: 0, count: MemoryLayout<UInt64>.size)
        mark[0] = 1
        do {
            let file = try fileSystem.openOwnFile(countersPath, creation: .ifMissing, readOnly: false, permissionsOf: path)
            defer { file.close() }
            try file.write(mark, at: SharedCounter.unheardWriters.byteOffset)
        } catch {
            throw .io(detail: "\(path): cannot mark the shared counters file \(countersPath) for a handle whose file layer has no shared memory, so handles that map it could overwrite this one's saves (use NSBinaryStoreExclusiveAccessOption to open it alone): \(error)")
        }
    }

    /// Clears the mark of ``markUnheardWriter(path:fileSystem:)``. Only for a handle that maps
    /// the counters, holds the write lock and whose presence lock is exclusive (no other handle
    /// is open).
    ///
    /// - Throws: ``StoreError/io(detail:)`` when the file cannot be read or written. The mark
    ///   stays, which costs only speed; nothing saved is at stake, but the caller hears of it as
    ///   of any failed write.
    static func clearUnheardWriterMark(path: String, fileSystem: any StoreFileSystem) throws(StoreError) {
        let countersPath = path + "-shm"
        guard fileSystem.fileExists(countersPath) else { return }
        let offset = SharedCounter.unheardWriters.byteOffset
        do {
            let file = try fileSystem.openOwnFile(countersPath, creation: .never, readOnly: false, permissionsOf: path)
            defer { file.close() }
            guard try file.read(at: offset, count: MemoryLayout<UInt64>.size).contains(where: { $0 != 0 }) else { return }
            try file.write([UInt8](repeating: 0, count: MemoryLayout<UInt64>.size), at: offset)
        } catch {
            throw .io(detail: "\(path): cannot clear the mark of a handle without shared memory in \(countersPath) (the store is closed and nothing saved is lost; other handles will read the files until it is cleared): \(error)")
        }
    }

    /// The counters of `NAME-shm` (Formats/wal.md §9), by index of 64-bit word.
    enum SharedCounter: Int {
        /// Saves published (bumped after the log write, its sync and publication).
        case commits = 0
        /// Roots published by checkpoints and compactions (bumped before the log starts over).
        case roots = 1
        /// Log writes begun (bumped before the frames are written).
        case writesBegun = 2
        /// 1 once a writable handle without shared memory opened the store (written through the
        /// file layer, never incremented): the other counters no longer tell every write.
        case unheardWriters = 3

        /// Where the counter's word is in `NAME-shm`, for the writes of handles that do not map it.
        var byteOffset: UInt64 { UInt64(rawValue * MemoryLayout<UInt64>.size) }
    }

    /// Brings the published state up to the files: reloads the checkpointed state when another
    /// process published a new root (or a compaction put a new file under the store's name),
    /// then applies the saves in the log after `publishedLogEnd`. Returns whether anything
    /// changed. Caller holds `tailLock`, and no save of this handle is queued.
    func tailLocked(readingLog tailingLog: Bool = true) throws(StoreError) -> Bool {
        let (file, generation, closed) = rw.withReadLock { (dataFile, root.generation, isClosed) }
        guard !closed else { throw .closed }
        var changed = false
        if rootGenerationComparingSlots(of: file) != generation || replacedDataFile(file) {
            try reloadLocked()
            changed = true
            // The log started over under another process's root: what this handle synced no
            // longer ends it (no sync marker, and a checkpoint syncs the log, until its next sync).
            resetSyncedLogEnd()
        }
        guard let logFile, tailingLog else { return changed }
        let (start, salt, currentCatalog) = rw.withReadLock { (publishedLogEnd, root.logSalt, catalog) }
        let replay: LogReplay
        do {
            // No fstat: the frames' own lengths and checksums bound the read (a short read at
            // the end of the file fails to decode and ends the tail).
            let size = UInt64(Int64.max)
            replay = try LogReplay.run(
                logFile, from: start, size: size, salt: salt, sequence: tailSequence, chain: tailChain,
                catalog: currentCatalog, checkingDamage: false)
        } catch {
            throw Self.storeError(error)
        }
        guard !replay.transactions.isEmpty else { return changed }
        var keys: [String: Int64] = [:]
        var reservations: [String: Int64] = [:]
        rw.withWriteLock {
            for transaction in replay.transactions {
                if let newCatalog = transaction.catalog {
                    catalog = newCatalog
                    for entity in newCatalog.entities where entity.nextPrimaryKey > 1 {
                        reservations[entity.name] = max(reservations[entity.name, default: 1], entity.nextPrimaryKey)
                    }
                }
                if let newMetadata = transaction.metadata { metadataValue = newMetadata }
                var publish = PublishSet()
                publish.locations.reserveCapacity(transaction.records.count)
                for record in transaction.records {
                    if record.tombstone {
                        publish.locations.append((record.entityID, record.key, nil, 0))
                        publish.tombstones.append((record.entityID, record.key, record.location))
                    } else {
                        publish.locations.append((record.entityID, record.key, record.location, 0))
                    }
                }
                apply(publish)
            }
            publishedLogEnd = replay.end
            keys = replay.highestKeys(namedBy: catalog)
        }
        tailSequence = replay.sequence
        tailChain = replay.chain
        for (name, key) in keys { tailHighWater[name] = max(tailHighWater[name, default: 0], key) }
        keyLock.withLock {
            for (name, key) in keys where key + 1 > nextKeys[name, default: 1] { nextKeys[name] = key + 1 }
            for (name, key) in reservations {
                if key > nextKeys[name, default: 1] { nextKeys[name] = key }
                reservedKeys[name] = max(reservedKeys[name, default: 1], key)
            }
        }
        foreignChanges += 1
        // Another process's frames, perhaps unsynced (relaxed durability), now end the log,
        // whichever path tailed them (a read's refresh as well as a save's `beginWrite`).
        resetSyncedLogEnd()
        return true
    }

    /// Whether the store's name now names another file than `file` (a compaction in another
    /// process renamed its new file into place).
    private func replacedDataFile(_ file: any StoreFile) -> Bool {
        guard let mine = file.identity(), let named = fileSystem.identity(of: path) else { return false }
        return mine != named
    }

    /// Another process checkpointed or compacted: read the new root's state, from the file the
    /// name now holds, and start reading the log from its beginning. Caller holds `tailLock`.
    private func reloadLocked() throws(StoreError) {
        let current = rw.withReadLock { dataFile }
        var file = current
        if replacedDataFile(current) {
            file = try Self.presenceLockedDataFile(path: path, options: options)
        }
        let state: CheckpointedState
        do { state = try Self.readCheckpointedState(path: path, dataFile: file) } catch {
            if file !== current { file.close() }
            throw error
        }
        rw.withWriteLock {
            if file !== current {
                dataFile = file
                header = state.header
            }
            root = state.root
            activeSlot = state.activeSlot
            catalog = state.catalog
            metadataValue = state.metadata
            indexLock.withLock {
                if let persisted = state.persisted {
                    persistedIndex = persisted
                    indexLoaded = false
                    memoryIndex = ObjectIndex()
                } else {
                    persistedIndex = nil
                    indexLoaded = true
                    memoryIndex = state.index
                }
                indexOverlay = ObjectIndex()
                keysChecked = []
            }
            secondaryLock.withLock {
                secondaryIndexes = [:]
                persistedSecondary = state.secondary
            }
            logTombstones = []
            publishedLogEnd = UInt64(LogLayout.firstFrameOffset)
            // Inside the write lock: a reader after it must not find the old file's pages (or
            // the old log's blocks) at offsets the new index points to.
            if file !== current { cache.removeAll { _ in true } } else { cache.removeAll { $0 & RecordLocation.logBit != 0 } }
            // Bounds hold for the records of this handle's past index (PageSortBounds); another
            // process's index is not one of them.
            pageSortBounds.removeAll()
        }
        if file !== current { current.close() }
        tailSequence = 0
        tailChain = state.root.logSalt
        // The checkpoint's catalog holds keys past every key in its index: inserts below them
        // must look for an existing object.
        for entity in state.catalog.entities where entity.nextPrimaryKey > 1 {
            tailHighWater[entity.name] = max(tailHighWater[entity.name, default: 0], entity.nextPrimaryKey - 1)
        }
        keyLock.withLock {
            for entity in state.catalog.entities where entity.nextPrimaryKey > 1 {
                nextKeys[entity.name] = max(nextKeys[entity.name, default: 1], entity.nextPrimaryKey)
                reservedKeys[entity.name] = max(reservedKeys[entity.name, default: 1], entity.nextPrimaryKey)
            }
        }
        foreignChanges += 1
    }
}

