import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

extension BinaryStore {
    /// Rewrites the data file with only the current version of each live object, reclaiming
    /// superseded versions, tombstones and old index pages (Formats/binary-store.md §10).
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
        commitLock.lock()
        defer { commitLock.unlock() }
        drainGroupCommits()
        do {
            // No checkpoint first: records still in the log are copied from it, and the new
            // root's salt retires every old frame (Formats/binary-store.md §10).
            try compactLocked(progress: progress)
        } catch {
            group.lock()
            if poisoned == nil { poisoned = error }
            group.unlock()
            throw error
        }
    }

    private func compactLocked(progress: BinaryStoreProgress?) throws(StoreError) {
        let temporary = path + "-compact"
        let generation = root.generation + 1
        let current = try rw.withReadLock { () throws(StoreError) -> (ObjectIndex, Catalog, StoreMetadata) in (try loadedIndex(), catalog, metadataValue) }
        // Compaction rewrites every page, so it writes them at today's target size (§2, §10): a
        // store made with larger pages gets the smaller ones that point reads want.
        var compactedHeader = header
        compactedHeader.pageSize = UInt32(BinaryStoreLayout.targetPageSize)
        var prefix = compactedHeader.encoded()
        prefix.append(contentsOf: repeatElement(0, count: BinaryStoreLayout.firstPageOffset - prefix.count))
        let file: any StoreFile
        do {
            if fileSystem.fileExists(temporary) { try fileSystem.remove(temporary) }
            file = try fileSystem.open(temporary, create: true, readOnly: false)
        } catch {
            throw Self.ioError(error)
        }
        var installed = false
        defer { if !installed { file.close() } }
        // Pages are encoded on every core; a page's offset is known once its batch is encoded.
        var writer = PageBatchWriter(file: file, generation: generation, at: 0, prefix: prefix)
        var newIndex = ObjectIndex()
        var builder = DataPageBuilder(targetPageSize: Int(compactedHeader.pageSize))
        var pending: [(entityID: Int, key: Int64, slot: Int)] = []
        var placed: [(entityID: Int, key: Int64, page: Int, slot: Int)] = []
        func emit() throws(StoreError) {
            guard !builder.isEmpty else { return }
            let page = try writer.add(.data, builder.finish())
            for item in pending { placed.append((item.entityID, item.key, page, item.slot)) }
            pending.removeAll(keepingCapacity: true)
        }
        var counter = ProgressCounter(total: current.0.liveCount, report: progress)
        // One read lock for the copy (saves and checkpoints wait on `commitLock`, held here; other
        // readers share it), and each source page looked up once for its run of records.
        try rw.withReadLock { () throws(StoreError) in
            var run = PageRun()
            for (entityID, table) in current.0.tables.enumerated() {
                for position in table.keys.indices where table.locations[position] != 0 {
                    counter.step()
                    let (bytes, range) = try recordBytes(at: table.locations[position], run: &run)
                    if builder.isFull(adding: range.count) { try emit() }
                    pending.append((entityID, table.keys[position], builder.add(bytes[range])))
                }
            }
        }
        try emit()
        try writer.encodeQueued()
        counter.finish()
        for item in placed {
            newIndex.set(entityID: item.entityID, key: item.key, location: RecordLocation.page(offset: writer.offset(of: item.page), slot: item.slot).raw)
        }

        var indexPages: [Int] = []
        var entries: [IndexEntry] = []
        var total: UInt64 = 0
        for (entityID, table) in newIndex.tables.enumerated() {
            table.forEachLive { key, location in
                entries.append(IndexEntry(entityID: UInt32(entityID), primaryKey: key, location: location))
            }
        }
        for start in stride(from: 0, to: entries.count, by: BinaryStoreLayout.indexEntriesPerPage) {
            let chunk = entries[start..<min(entries.count, start + BinaryStoreLayout.indexEntriesPerPage)]
            indexPages.append(try writer.add(.index, IndexPageCodec.encodePage(chunk)))
            total += UInt64(chunk.count)
        }
        try writer.encodeQueued()
        let directoryPage = indexPages.isEmpty ? nil : try writer.add(
            .indexDirectory, IndexPageCodec.encodeDirectory(pageOffsets: indexPages.map { writer.offset(of: $0) }, totalEntries: total))
        var compactedCatalog = current.1
        keyLock.lock()
        for (name, key) in nextKeys { compactedCatalog.setNextPrimaryKey(key, of: name) }
        keyLock.unlock()
        let catalogPage = try writer.add(.catalog, compactedCatalog.encoded())
        let metadataPage = try writer.add(.metadata, try Self.encodeMetadata(current.2))
        try writer.finish()
        let directory = directoryPage.map { writer.offset(of: $0) } ?? 0
        let (catalogOffset, metadataOffset, written) = (writer.offset(of: catalogPage), writer.offset(of: metadataPage), writer.end)
        let newRoot = RootSlot(
            generation: generation, dataEnd: written, indexDirectoryOffset: directory, catalogOffset: catalogOffset,
            metadataOffset: metadataOffset, logSalt: UInt64.random(in: 1...UInt64.max), objectCount: total)
        do {
            try file.write(newRoot.encoded(), at: UInt64(BinaryStoreLayout.rootSlotOffsets[0]))
            try file.sync()
            // Lock the new file before it takes the store's name, so no other process slips in.
            guard try file.lock(exclusive: true, wait: false) else {
                throw StoreIOError(operation: "lock", path: temporary, code: 0, reason: "another process holds the new file")
            }
            try fileSystem.rename(temporary, to: path)
            try fileSystem.syncDirectory(containing: path)
        } catch {
            throw .io(detail: "compaction could not install the new file; the store must be reopened: \(error)")
        }
        installed = true
        let old = rw.withWriteLock { () -> any StoreFile in
            let old = dataFile
            dataFile = file
            header = compactedHeader
            replaceIndex(newIndex)
            root = newRoot
            activeSlot = 0
            publishedLogEnd = UInt64(LogLayout.firstFrameOffset)
            return old
        }
        cache.removeAll { _ in true }
        old.close()
        rw.withWriteLock { logTombstones = [] }
        logEnd = UInt64(LogLayout.firstFrameOffset)
        logSequence = 0
        logChain = newRoot.logSalt
        resetSyncedLogEnd()
        pendingBatches.removeAll()
        // The frames left are of the old file (their salt no longer matches): drop them.
        if let logFile { try truncateLog(logFile) }
    }
}
