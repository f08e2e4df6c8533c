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
    ///   file (the checkpoint that starts a compaction does not report).
    /// - Throws: ``StoreError/io(detail:)`` when a write, sync or rename fails; the handle is then
    ///   poisoned and the store on disk is the old or the new file, both complete.
    public func compact(progress: BinaryStoreProgress? = nil) throws(StoreError) {
        try checkWritable()
        commitLock.lock()
        defer { commitLock.unlock() }
        drainGroupCommits()
        do {
            try checkpointLocked(truncatingLog: true)
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
        var output = header.encoded()
        output.append(contentsOf: repeatElement(0, count: BinaryStoreLayout.firstPageOffset - output.count))
        var written: UInt64 = 0
        let file: any StoreFile
        do {
            if fileSystem.fileExists(temporary) { try fileSystem.remove(temporary) }
            file = try fileSystem.open(temporary, create: true, readOnly: false)
        } catch {
            throw Self.ioError(error)
        }
        var installed = false
        defer { if !installed { file.close() } }
        func flush() throws(StoreError) {
            guard !output.isEmpty else { return }
            do { try file.write(output, at: written) } catch { throw Self.ioError(error) }
            written += UInt64(output.count)
            output.removeAll(keepingCapacity: true)
        }
        func appendPage(_ kind: PageKind, _ payload: [UInt8]) throws(StoreError) -> UInt64 {
            let offset = written + UInt64(output.count)
            output.append(contentsOf: PageCodec.encode(kind: kind, payload: payload, generation: generation))
            if output.count >= 8 << 20 { try flush() }
            return offset
        }

        var newIndex = ObjectIndex()
        var builder = DataPageBuilder()
        var pending: [(entityID: Int, key: Int64, slot: Int)] = []
        func emit() throws(StoreError) {
            guard !builder.isEmpty else { return }
            let offset = try appendPage(.data, builder.finish())
            for item in pending {
                newIndex.set(entityID: item.entityID, key: item.key, location: RecordLocation.page(offset: offset, slot: item.slot).raw)
            }
            pending.removeAll(keepingCapacity: true)
        }
        var counter = ProgressCounter(total: current.0.liveCount, report: progress)
        // One read lock for the copy (saves and checkpoints wait on `commitLock`, held here; other
        // readers share it), and each source page looked up once for its run of records.
        try rw.withReadLock { () throws(StoreError) in
            var lastOffset = UInt64.max
            var lastPage: DataPage?
            for (entityID, table) in current.0.tables.enumerated() {
                for position in table.keys.indices where table.locations[position] != 0 {
                    counter.step()
                    let location = table.locations[position]
                    let bytes: [UInt8]
                    let range: Range<Int>
                    if case .page(let pageOffset, let slot) = RecordLocation(raw: location) {
                        if pageOffset != lastOffset {
                            lastPage = try dataPage(at: pageOffset)
                            lastOffset = pageOffset
                        }
                        guard let page = lastPage, let found = page.range(of: slot) else {
                            throw .corrupt(detail: "data file offset \(pageOffset): the index points to slot \(slot) of a page with \(lastPage?.count ?? 0) records")
                        }
                        (bytes, range) = (page.payload, found)
                    } else {
                        (bytes, range) = try recordBytes(at: location)
                    }
                    if builder.isFull(adding: range.count) { try emit() }
                    pending.append((entityID, table.keys[position], builder.add(bytes[range])))
                }
            }
        }
        try emit()
        counter.finish()

        var indexPages: [UInt64] = []
        var entries: [IndexEntry] = []
        var total: UInt64 = 0
        for (entityID, table) in newIndex.tables.enumerated() {
            table.forEachLive { key, location in
                entries.append(IndexEntry(entityID: UInt32(entityID), primaryKey: key, location: location))
            }
        }
        for start in stride(from: 0, to: entries.count, by: BinaryStoreLayout.indexEntriesPerPage) {
            let chunk = entries[start..<min(entries.count, start + BinaryStoreLayout.indexEntriesPerPage)]
            indexPages.append(try appendPage(.index, IndexPageCodec.encodePage(chunk)))
            total += UInt64(chunk.count)
        }
        let directory = indexPages.isEmpty ? 0 : try appendPage(.indexDirectory, IndexPageCodec.encodeDirectory(pageOffsets: indexPages, totalEntries: total))
        var compactedCatalog = current.1
        keyLock.lock()
        for (name, key) in nextKeys { compactedCatalog.setNextPrimaryKey(key, of: name) }
        keyLock.unlock()
        let catalogOffset = try appendPage(.catalog, compactedCatalog.encoded())
        let metadataOffset = try appendPage(.metadata, try Self.encodeMetadata(current.2))
        try flush()
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
            replaceIndex(newIndex)
            root = newRoot
            activeSlot = 0
            publishedLogEnd = UInt64(LogLayout.firstFrameOffset)
            return old
        }
        cache.removeAll { _ in true }
        old.close()
        logEnd = UInt64(LogLayout.firstFrameOffset)
        logSequence = 0
        logChain = newRoot.logSalt
        resetSyncedLogEnd()
    }
}
