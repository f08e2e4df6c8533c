import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

extension BinaryStore {
    /// Copies the log's records into new data pages, writes the index, and starts the log over
    /// (Formats/binary-store.md §9). Saves wait while it runs; fetches do not.
    ///
    /// The index is written incrementally: when changes since the last checkpoint fell in at
    /// most half the index pages, the others are listed again, so a checkpoint after a few
    /// saves to a large store costs what the changes touch; without the whole index in memory
    /// it needs only the changes and those pages, unless they are more than an eighth of the
    /// objects.
    ///
    /// - Parameter truncatingLog: also cut the log back to its header (on close), so a closed
    ///   store holds no stale frames.
    /// - Parameter progress: told how many of the log's records are copied.
    /// - Throws: ``StoreError/io(detail:)`` when a write or sync fails; the handle is then
    ///   poisoned, and the store on disk is still the one before the checkpoint.
    public func checkpoint(truncatingLog: Bool = false, progress: BinaryStoreProgress? = nil) throws(StoreError) {
        try checkWritable()
        // A snapshot anywhere reads log frames the restart would let later saves overwrite: the
        // checkpoint waits for a later chance, as SQLite's does for its readers (wal.md §9).
        try maintaining(whenSnapshotted: .skip) { () throws(StoreError) in try checkpointLocked(truncatingLog: truncatingLog, progress: progress) }
    }

    /// A checkpoint without the whole index in memory loads it first when the changes since the
    /// last checkpoint number more than this fraction of the objects (1/8): they fall in nearly
    /// every index page then.
    static let loadIndexForCheckpointFraction = 8

    /// Caller holds `commitLock` with no save queued, and the snapshot probe (``snapshotProbe()``).
    func checkpointLocked(truncatingLog: Bool, progress: BinaryStoreProgress? = nil) throws(StoreError) {
        guard let logFile else { return }
        guard logEnd > UInt64(LogLayout.firstFrameOffset) else {
            // Nothing to copy: leave the data file untouched (a store opened and closed without
            // a save keeps its bytes), only drop stale frames when asked.
            if truncatingLog, (try? logFile.size()).map({ $0 > UInt64(LogLayout.headerSize) }) == true { try truncateLog(logFile) }
            return
        }
        let generation = root.generation + 1
        // Pages are encoded on every core; a page's offset is known once its batch is encoded.
        var writer = PageBatchWriter(
            file: dataFile, generation: generation, at: root.dataEnd, collectsPageBounds: header.formatVersion >= PageBoundsLayout.firstFormatVersion)

        // 1. The log's records, in object-ID order, into data pages. With the whole index in
        // memory the new index is that index; without it, the changes since the last checkpoint
        // (the overlay) are all the checkpoint needs (§9).
        var start = rw.withReadLock { indexForCheckpoint() }
        if !start.loaded, start.pages.map({ start.index.entryCount > Int($0.totalEntries) / Self.loadIndexForCheckpointFraction }) ?? true {
            // Changes to a large part of the store touch nearly every index page: the whole
            // index in memory is cheaper than merging page by page.
            _ = try rw.withReadLock { () throws(StoreError) -> ObjectIndex in try loadedIndex() }
            start = rw.withReadLock { indexForCheckpoint() }
        }
        var newIndex = start.index
        var loaded = start.loaded
        let oldPages = start.pages
        var packer = DataPagePacker(targetPageSize: Int(header.pageSize))
        var window = LogWindow(file: logFile, end: logEnd)
        let tombstones = rw.withReadLock { logTombstones }.sorted { ($0.entityID, $0.key) < ($1.entityID, $1.key) }
        // Which entities change and, for persisted secondary indexes not in memory, the new
        // values, gathered from the records as they are copied (§7.2).
        var secondaryPlan = checkpointSecondaryPlan()
        let copyCatalog = secondaryPlan?.watchesRecords == true ? rw.withReadLock { catalog } : nil
        var counter = ProgressCounter(
            total: progress == nil ? 0 : tombstones.count + newIndex.tables.reduce(0) { $0 + $1.locations.count { $0 & RecordLocation.logBit != 0 } },
            report: progress)
        func copy(_ location: UInt64, entityID: Int, key: Int64, relocate: Bool) throws(StoreError) {
            counter.step()
            let (bytes, range) = try window.recordBody(at: location & ~RecordLocation.logBit)
            if let copyCatalog {
                do { try secondaryPlan?.note(entityID: entityID, key: key, bytes, range, catalog: copyCatalog) } catch {
                    throw .corrupt(detail: error.within(Self.describe(location)).description)
                }
            }
            try packer.add(bytes[range], entityID: entityID, key: key, indexed: relocate, to: &writer)
        }
        // The old pages every key whose entry differs from them falls in: its record is in the
        // log, or it was deleted since (the overlay marks those 0 too).
        var touched = oldPages.flatMap { $0.pageOffsets.isEmpty ? nil : TouchedIndexPages($0) }
        func mark(_ key: IndexKey) throws(StoreError) {
            guard touched != nil else { return }
            // A damaged old page (§7): no page is listed again; the index is written whole.
            do { try markTouched(key, in: &touched!) } catch .corrupt { touched = nil }
        }
        for (entityID, table) in newIndex.tables.enumerated() {
            for position in table.keys.indices {
                let location = table.locations[position]
                let inLog = location & RecordLocation.logBit != 0
                if !loaded || inLog { try mark(IndexKey(entityID: UInt32(entityID), primaryKey: table.keys[position])) }
                guard inLog else { continue }
                try copy(location, entityID: entityID, key: table.keys[position], relocate: true)
            }
        }
        for tombstone in tombstones {
            try copy(tombstone.location, entityID: tombstone.entityID, key: tombstone.key, relocate: false)
            if loaded { try mark(IndexKey(entityID: UInt32(tombstone.entityID), primaryKey: tombstone.key)) }
        }
        try packer.finish(to: &writer, into: &newIndex)
        counter.finish()

        // 2. Index pages, directory, catalog, metadata. Pages no change fell in are listed
        // again when changes fell in at most half of them (§9, step 2).
        var pages = IndexPagesBuilder(totalEntries: 0)
        var totalEntries = 0
        /// Writes every page from the whole index, loading it (with the overlay's changes and
        /// this checkpoint's relocations) when it is not in memory.
        func writeWholeIndex() throws(StoreError) {
            if !loaded {
                var whole = try rw.withReadLock { () throws(StoreError) -> ObjectIndex in try loadedIndex() }
                whole.apply(overlay: newIndex)
                newIndex = whole
                loaded = true
            }
            newIndex.compact()
            pages = IndexPagesBuilder(totalEntries: newIndex.liveCount)
            totalEntries = try pages.appendEntries(of: newIndex, to: &writer)
        }
        if var reuse = touched, reuse.touchedCount * 2 <= reuse.touched.count, let oldPages {
            if loaded {
                newIndex.compact()
                totalEntries = newIndex.liveCount
                pages = IndexPagesBuilder(totalEntries: totalEntries)
                try listIndexPages(&reuse, into: &pages, writer: &writer) { lower, upper, _, emit throws(StoreError) in
                    try newIndex.forEachEntry(from: lower, below: upper, includingDeleted: false, emit)
                }
            } else {
                var total = Int(oldPages.totalEntries)
                let sum = total.addingReportingOverflow(newIndex.entryCount)
                pages = IndexPagesBuilder(totalEntries: sum.overflow ? Int.max : sum.partialValue)
                do {
                    try listIndexPages(&reuse, into: &pages, writer: &writer) { (lower, upper, replaced, emit) throws(StoreError) in
                        // The old pages' entries with the overlay's changes (0: deleted) merged in.
                        let changes = newIndex.entries(from: lower, below: upper, includingDeleted: true)
                        var next = 0
                        for page in replaced {
                            let old = try rw.withReadLock { () throws(StoreError) -> [IndexEntry] in try persistedPage(at: oldPages.pageOffsets[page]) }
                            total -= old.count
                            for entry in old {
                                while next < changes.count, IndexKey(changes[next]) <= IndexKey(entry) {
                                    if changes[next].location != 0 { total += 1; try emit(changes[next]) }
                                    next += 1
                                }
                                if next == 0 || IndexKey(changes[next - 1]) != IndexKey(entry) { total += 1; try emit(entry) }
                            }
                        }
                        for change in changes[next...] where change.location != 0 { total += 1; try emit(change) }
                    }
                    totalEntries = total
                } catch .corrupt {
                    // An old index page is damaged (§7): the index, rebuilt from the data pages
                    // as loading does, is written whole. Pages already queued stay in the file
                    // unlisted, as superseded pages do.
                    try writeWholeIndex()
                }
            }
        } else {
            // No pages to reuse (a new store, or an index rebuilt from the data pages), or
            // changes in most of them.
            try writeWholeIndex()
        }
        let secondary = try secondaryPlan.map { (plan) throws(StoreError) in try checkpointSecondaryWrites(plan) }
        let (currentCatalog, currentMetadata) = rw.withReadLock { (catalog, metadataValue) }
        // Only data pages precede this point, so the writer's bounds are this checkpoint's (§7.3).
        let newBounds = writer.pageBounds
        let bounds = try checkpointPageBounds(newBounds)
        let state = try writeIndexAndState(
            pages, totalEntries: totalEntries, secondary: secondary?.writes ?? [], pageBounds: bounds, catalog: currentCatalog,
            metadata: currentMetadata, to: &writer)

        // 3–4. Sync the pages, then publish them through the inactive root slot.
        let newRoot = RootSlot(
            generation: generation, dataEnd: state.end, indexDirectoryOffset: state.directory, catalogOffset: state.catalog,
            metadataOffset: state.metadata, logSalt: UInt64.random(in: 1...UInt64.max), objectCount: UInt64(totalEntries),
            secondaryIndexDirectoryOffset: state.secondary.directory, pageBoundsDirectoryOffset: state.pageBoundsDirectory)
        let newPages = state.pages
        let slot = 1 - activeSlot
        do {
            // The log first: with relaxed durability (this handle's or another process's) its
            // frames are not synced yet, and a root whose log start is older on disk than in the
            // page cache would make a cut root write look like a newer checkpoint's (binary-store.md
            // §12; wal.md §6). Skipped when this handle synced every frame up to the log's end
            // itself (full durability, nothing of another process's since): a sync with nothing
            // to write still waits for the device's flush.
            group.lock()
            let logSynced = syncedLogEnd == logEnd
            group.unlock()
            if !logSynced { try logFile.sync() }
            try dataFile.sync()
            try dataFile.write(newRoot.encoded(formatVersion: header.formatVersion), at: UInt64(BinaryStoreLayout.rootSlotOffsets[slot]))
            try dataFile.sync()
        } catch {
            throw .io(detail: "checkpoint could not be made durable; the store must be reopened: \(error)")
        }
        announce(.roots)

        // 5. Readers move to the new pages; the log starts over.
        rw.withWriteLock {
            // With the root: a fetch reads the new listings only against the new data end.
            if let secondary { publishSecondaryIndexes(state.secondary, kept: secondary.kept, catalog: currentCatalog) }
            if loaded { replaceIndex(newIndex, pages: newPages) } else if let newPages { replacePersistedIndex(newPages) } else { replaceIndex(ObjectIndex(), pages: nil) }
            // Bounds of the old pages stay true (§7.3); the new pages' are known already.
            pageSortBounds.checkpointed(newBounds, startedOver: bounds?.startsOver ?? false)
            root = newRoot
            activeSlot = slot
            logTombstones = []
            publishedLogEnd = UInt64(LogLayout.firstFrameOffset)
        }
        cache.removeAll { $0 & RecordLocation.logBit != 0 }
        logEnd = UInt64(LogLayout.firstFrameOffset)
        logSequence = 0
        logChain = newRoot.logSalt
        resetSyncedLogEnd()
        pendingBatches.removeAll()
        if truncatingLog || (try? logFile.size()).map({ $0 > UInt64(options.checkpointThreshold) * 2 }) == true { try truncateLog(logFile) }
    }

    /// Where the pages a checkpoint, compaction or export wrote after the data pages went.
    struct WrittenState {
        var directory: UInt64
        var secondary: SecondaryIndexesWritten
        /// The page-bounds directory (§7.3), 0 for none.
        var pageBoundsDirectory: UInt64
        var catalog: UInt64
        var metadata: UInt64
        /// The new data end.
        var end: UInt64
        /// The index's pages; `nil` for an empty index.
        var pages: PersistedIndex?
    }

    /// ``writeIndexAndState(_:totalEntries:secondary:pageBounds:catalog:metadata:to:)`` with
    /// every live entry of `index` in new pages and the bounds of every data page `writer`
    /// wrote (compaction and export, which write a new file of the current version).
    func writeIndexAndState(
        _ index: ObjectIndex, secondary: [SecondaryIndexWrite] = [], catalog: Catalog, metadata: StoreMetadata, to writer: inout PageBatchWriter
    ) throws(StoreError) -> WrittenState {
        var pages = IndexPagesBuilder(totalEntries: index.liveCount)
        let total = try pages.appendEntries(of: index, to: &writer)
        let bounds = PageBoundsWrite(entries: writer.pageBounds)
        return try writeIndexAndState(pages, totalEntries: total, secondary: secondary, pageBounds: bounds, catalog: catalog, metadata: metadata, to: &writer)
    }

    /// Appends the pages that follow the data pages (§7–§8): the index pages `pages` lists (new
    /// ones queued on `writer`, or pages of an earlier checkpoint) and their directory, the
    /// secondary indexes and their directory (§7.2, none for an empty `secondary`), the page
    /// bounds and their directory (§7.3, none for nil `pageBounds`), then `catalog` with the
    /// next primary keys handed out so far, then `metadata`; writes everything queued and
    /// returns where each went.
    func writeIndexAndState(
        _ pages: IndexPagesBuilder, totalEntries: Int, secondary: [SecondaryIndexWrite] = [], pageBounds: PageBoundsWrite?, catalog: Catalog,
        metadata: StoreMetadata, to writer: inout PageBatchWriter
    ) throws(StoreError) -> WrittenState {
        var pages = pages
        try pages.endStretch(evenly: false, to: &writer)
        try writer.encodeQueued()
        let persisted = pages.isEmpty ? nil : pages.persisted(in: writer, totalEntries: UInt64(totalEntries))
        let directoryPage = try persisted.map { (persisted) throws(StoreError) in
            try writer.add(.indexDirectory, IndexPageCodec.encodeDirectory(pageOffsets: persisted.pageOffsets, totalEntries: persisted.totalEntries))
        }
        let secondaryWritten = try appendSecondaryIndexes(secondary, to: &writer)
        let boundsDirectory = try appendPageBounds(pageBounds, to: &writer)
        var catalog = catalog
        keyLock.lock()
        // Keys reserved by any process sharing the store stay reserved (Formats/wal.md §9).
        for (name, key) in nextKeys { catalog.setNextPrimaryKey(max(key, reservedKeys[name, default: 1]), of: name) }
        keyLock.unlock()
        let catalogPage = try writer.add(.catalog, catalog.encoded())
        let metadataPage = try writer.add(.metadata, try Self.encodeMetadata(metadata))
        try writer.finish()
        return WrittenState(
            directory: directoryPage.map { writer.offset(of: $0) } ?? 0, secondary: secondaryWritten,
            pageBoundsDirectory: boundsDirectory.offset(in: writer), catalog: writer.offset(of: catalogPage), metadata: writer.offset(of: metadataPage), end: writer.end, pages: persisted)
    }

    /// Cuts the log back to its header and syncs it: its frames are all in the data file, or
    /// of a data file that was replaced. Caller holds `commitLock` with no save queued.
    func truncateLog(_ logFile: any StoreFile) throws(StoreError) {
        do {
            try logFile.truncate(to: UInt64(LogLayout.headerSize))
            logAllocatedEnd = UInt64(LogLayout.headerSize)
            try logFile.sync()
        } catch {
            throw .io(detail: "the log could not be truncated: \(error)")
        }
    }

    /// The log starts over (a checkpoint or compaction): nothing in it is synced yet.
    /// Caller holds `commitLock` with no save queued.
    func resetSyncedLogEnd() {
        group.lock()
        syncedLogEnd = UInt64(LogLayout.firstFrameOffset)
        group.unlock()
    }

    /// Starts a background checkpoint when the log has grown past the threshold.
    func scheduleCheckpointIfNeeded() {
        guard options.backgroundCheckpoints, !options.readOnly else { return }
        commitLock.lock()
        let due = logEnd > UInt64(options.checkpointThreshold) && !checkpointRunning
        if due { checkpointRunning = true }
        commitLock.unlock()
        guard due else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            // A failure poisons the handle; the next save reports it.
            try? checkpoint()
            commitLock.lock()
            checkpointRunning = false
            commitLock.unlock()
        }
    }
}

/// Reads log records for a checkpoint through a large window: records in object-ID order are
/// mostly in log order, so one read serves thousands of them.
struct LogWindow {
    static let size = 4 << 20
    let file: any StoreFile
    /// Where the written frames end: the bytes after it are preallocated zeros (wal.md §5) or
    /// stale frames, so a window stops there. Reading a whole window past it cost a small
    /// checkpoint (1,000 records in a 1 MiB preallocated log) a megabyte's copy and page faults.
    let end: UInt64
    private var buffer: [UInt8] = []
    private var start: UInt64 = 0

    init(file: any StoreFile, end: UInt64) {
        self.file = file
        self.end = end
    }

    /// The checked body of the record entry at `offset`, as a range of the returned buffer.
    mutating func recordBody(at offset: UInt64) throws(StoreError) -> ([UInt8], Range<Int>) {
        try ensure(offset, count: LogLayout.entryHeaderSize)
        // `ensure` made the header's bytes present; the length follows the kind byte (wal.md §4).
        let headerStart = Int(offset - start)
        let length = buffer.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: headerStart + 1, as: UInt32.self))) }
        guard length <= LogLayout.maximumEntrySize else {
            throw .corrupt(detail: "log offset \(offset): no record entry here")
        }
        try ensure(offset, count: LogLayout.entryHeaderSize + length)
        let entryStart = Int(offset - start)
        // In place, as nearly every entry is: a copy per record was most of a large checkpoint's
        // copying. Only a damaged entry takes the path below, which words the error.
        if let body = LogEntryCodec.recordBody(in: buffer, entryAt: entryStart) { return (buffer, body) }
        let entry = Array(buffer[entryStart..<(entryStart + LogLayout.entryHeaderSize + length)])
        do {
            let (_, body) = try LogEntryCodec.body(ofEntry: entry, at: offset)
            return (entry, body)
        } catch {
            throw BinaryStore.corrupt(error)
        }
    }

    private mutating func ensure(_ offset: UInt64, count: Int) throws(StoreError) {
        if offset >= start, offset + UInt64(count) <= start + UInt64(buffer.count) { return }
        do {
            let written = end > offset ? Int(min(end - offset, UInt64(Self.size))) : 0
            buffer = try file.read(at: offset, count: max(written, count))
        } catch {
            throw BinaryStore.ioError(error)
        }
        start = offset
        guard buffer.count >= count else { throw .corrupt(detail: "log offset \(offset): the log ends inside a record") }
    }
}
