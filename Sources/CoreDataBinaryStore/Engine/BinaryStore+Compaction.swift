import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

extension BinaryStore {
    /// Rewrites the data file with only the current version of each live object, reclaiming
    /// superseded versions, tombstones and old index pages (Formats/binary-store.md §10), and,
    /// when no other handle has the store open, the external data files no live record names
    /// (§15.3). A store of an earlier format version becomes the current one (§2); the secondary
    /// indexes the old file held or this handle built are written into the new file (§7.2).
    ///
    /// Crash-safe at every step: the new file is written and synced as `NAME-compact`, then
    /// renamed over `NAME` and the folder synced; until the rename the old file is the store.
    /// Saves wait while it runs; fetches wait only for the final swap.
    /// - Parameter progress: told how many of the live objects' records are copied into the new
    ///   file (from the old file's pages or, for saves not yet checkpointed, from the log).
    /// - Throws: ``StoreError/io(detail:)`` when a write, sync or rename fails; the handle is then
    ///   poisoned and the store on disk is the old or the new file, both complete.
    public func compact(progress: BinaryStoreProgress? = nil) throws(StoreError) {
        try checkWritable()
        // No checkpoint first: records still in the log are copied from it, and the new root's
        // salt retires every old frame (Formats/binary-store.md §10).
        try maintaining(whenSnapshotted: .fail("compact")) { () throws(StoreError) in try compactLocked(progress: progress) }
    }

    /// A new, empty data file at `path` (any file there is removed first) for a store written
    /// whole: its header (this store's, at today's target page size), a page writer after it and
    /// a page packer. Compaction and a migration's record rewrite (`export`) write such files.
    ///
    /// Every page is rewritten, so at today's target size (§2, §10): a store made with larger
    /// pages gets the smaller ones that point reads want.
    func startRewrittenFile(at path: String, generation: UInt64) throws(StoreError) -> (any StoreFile, FileHeader, PageBatchWriter, DataPagePacker) {
        var newHeader = header
        newHeader.pageSize = UInt32(BinaryStoreLayout.targetPageSize)
        newHeader.formatVersion = BinaryStoreLayout.formatVersion
        var prefix = newHeader.encoded()
        prefix.append(contentsOf: repeatElement(0, count: BinaryStoreLayout.firstPageOffset - prefix.count))
        let file: any StoreFile
        do {
            // A leftover of a compaction a crash cut short; the new file takes the store's
            // permissions, since it replaces the store's file.
            if fileSystem.fileExists(path) { try fileSystem.remove(path) }
            file = try fileSystem.openOwnFile(path, creation: .exclusive, readOnly: false, permissionsOf: self.path)
        } catch {
            throw Self.ioError(error)
        }
        // Pages are encoded on every core; a page's offset is known once its batch is encoded.
        let writer = PageBatchWriter(file: file, generation: generation, at: 0, prefix: prefix, collectsPageBounds: true)
        return (file, newHeader, writer, DataPagePacker(targetPageSize: Int(newHeader.pageSize)))
    }

    private func compactLocked(progress: BinaryStoreProgress?) throws(StoreError) {
        let temporary = path + "-compact"
        let generation = root.generation + 1
        let current = try rw.withReadLock { () throws(StoreError) -> (ObjectIndex, Catalog, StoreMetadata) in (try loadedIndex(), catalog, metadataValue) }
        let (file, compactedHeader, firstWriter, firstPacker) = try startRewrittenFile(at: temporary, generation: generation)
        var writer = firstWriter
        var packer = firstPacker
        var installed = false
        defer { if !installed { file.close() } }
        var newIndex = ObjectIndex()
        var counter = ProgressCounter(total: current.0.liveCount, report: progress)
        // The external files the live records name: the rest are removed after the swap (§15.3).
        let collecting = fileSystem.fileExists(externalDataFolder)
        var referenced = Set<String>()
        // One read lock for the copy (saves and checkpoints wait on `commitLock`, held here; other
        // readers share it), and each source page looked up once for its run of records.
        try rw.withReadLock { () throws(StoreError) in
            var run = PageRun()
            for (entityID, table) in current.0.tables.enumerated() {
                for position in table.keys.indices where table.locations[position] != 0 {
                    counter.step()
                    let (bytes, range) = try recordBytes(at: table.locations[position], run: &run)
                    if collecting {
                        do throws(BinaryFormatError) {
                            for reference in try RecordCodec.externalReferences(in: bytes, from: range.lowerBound, to: range.upperBound, catalog: current.1) {
                                referenced.insert(reference.fileName)
                            }
                        } catch {
                            throw .corrupt(detail: error.within(Self.describe(table.locations[position])).description)
                        }
                    }
                    try packer.add(bytes[range], entityID: entityID, key: table.keys[position], indexed: true, to: &writer)
                }
            }
        }
        try packer.finish(to: &writer, into: &newIndex)
        counter.finish()
        // Keys stay as they are, so the secondary indexes carry over whole (§7.2, §10).
        let secondary = try rw.withReadLock { () throws(StoreError) in try secondaryIndexesForRewrite(current.0, catalog: current.1) }
        let state = try writeIndexAndState(newIndex, secondary: secondary.writes, catalog: current.1, metadata: current.2, to: &writer)
        let newPages = state.pages
        let newRoot = RootSlot(
            generation: generation, dataEnd: state.end, indexDirectoryOffset: state.directory, catalogOffset: state.catalog,
            metadataOffset: state.metadata, logSalt: UInt64.random(in: 1...UInt64.max), objectCount: UInt64(newIndex.liveCount),
            secondaryIndexDirectoryOffset: state.secondary.directory, pageBoundsDirectoryOffset: state.pageBoundsDirectory)
        do {
            try file.write(newRoot.encoded(), at: UInt64(BinaryStoreLayout.rootSlotOffsets[0]))
            try file.sync()
            // Lock the new file before it takes the store's name, so no process with exclusive
            // access slips in (a shared handle holds a shared lock, Formats/wal.md §9).
            guard try file.lock(exclusive: !sharesWrites, wait: false) else {
                throw StoreIOError(operation: "lock", path: temporary, code: 0, reason: "another process holds the new file")
            }
            try fileSystem.rename(temporary, to: path)
            try fileSystem.syncDirectory(containing: path)
        } catch {
            throw .io(detail: "compaction could not install the new file; the store must be reopened: \(error)")
        }
        installed = true
        // Another process may still read records of the old file, whose files must stay.
        var alone = true
        if sharesWrites, (try? dataFile.lock(exclusive: true, wait: false)) != true {
            alone = false
            // Other processes still read the old file: a root of a later generation in it tells
            // them to look for the new file before the log starts over (Formats/wal.md §9).
            var signal = root
            signal.generation = generation
            do { try dataFile.write(signal.encoded(formatVersion: header.formatVersion), at: UInt64(BinaryStoreLayout.rootSlotOffsets[1 - activeSlot])) } catch {
                throw .io(detail: "compaction installed the new file but could not tell the other processes that have the store open; the store must be reopened: \(error)")
            }
        }
        announce(.roots)
        let old = rw.withWriteLock { () -> any StoreFile in
            let old = dataFile
            dataFile = file
            header = compactedHeader
            replaceIndex(newIndex, pages: newPages)
            publishSecondaryIndexes(state.secondary, kept: secondary.kept, catalog: current.1)
            root = newRoot
            activeSlot = 0
            publishedLogEnd = UInt64(LogLayout.firstFrameOffset)
            // Inside the write lock: no reader may find the old file's pages at new offsets.
            cache.removeAll { _ in true }
            pageSortBounds.removeAll()
            return old
        }
        old.close()
        rw.withWriteLock { logTombstones = [] }
        logEnd = UInt64(LogLayout.firstFrameOffset)
        logSequence = 0
        logChain = newRoot.logSalt
        resetSyncedLogEnd()
        pendingBatches.removeAll()
        // The frames left are of the old file (their salt no longer matches): drop them.
        if let logFile { try truncateLog(logFile) }
        if collecting, alone { try removeUnreferencedExternalFiles(keeping: referenced) }
    }
}
