import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// The index pages of the current checkpoint (Formats/binary-store.md §7), listed by their
/// directory. Open reads only the directory; a point lookup binary-searches the pages in place,
/// so open and the first lookup cost O(log n) page reads, not a read of the whole index. The
/// next checkpoint lists again every page no change falls in (§9).
struct PersistedIndex: Sendable {
    var pageOffsets: [UInt64]
    var totalEntries: UInt64
    /// Each page's first key where it is known without a read (the checkpoint wrote the page,
    /// or loading read it); `nil` where the page has not been read.
    var firstKeys: [IndexKey?]

    init(pageOffsets: [UInt64], totalEntries: UInt64, firstKeys: [IndexKey?]? = nil) {
        self.pageOffsets = pageOffsets
        self.totalEntries = totalEntries
        self.firstKeys = firstKeys ?? Array(repeating: nil, count: pageOffsets.count)
    }
}

extension BinaryStore {
    /// Point lookups served from the persisted pages before the whole index is loaded: past
    /// this many, lookups are frequent enough that the in-memory arrays pay for themselves.
    static let persistedLookupsBeforeLoading = 1_024

    /// Reads the index directory of `root`; `nil` for a store with no index pages.
    ///
    /// - Throws: on any damage to the directory, so that open rebuilds the index from the data
    ///   pages (§7). Damage to an index page is found when the page is first read, and rebuilds
    ///   the index then.
    static func readIndexDirectory(_ file: any StoreFile, root: RootSlot) throws(StoreError) -> PersistedIndex? {
        guard root.indexDirectoryOffset != 0 else { return nil }
        let (header, payload) = try readPage(file, at: root.indexDirectoryOffset, dataEnd: root.dataEnd, readAhead: indexDirectoryReadAhead(objectCount: root.objectCount))
        guard header.kind == .indexDirectory else { throw .corrupt(detail: "expected the index directory") }
        let directory: (pageOffsets: [UInt64], totalEntries: UInt64)
        do { directory = try IndexPageCodec.decodeDirectory(payload, pageOffset: root.indexDirectoryOffset) } catch { throw corrupt(error) }
        let pages = UInt64(directory.pageOffsets.count)
        let perPage = UInt64(BinaryStoreLayout.indexEntriesPerPage)
        let capacity = pages.multipliedReportingOverflow(by: perPage)
        // A checkpoint with no objects writes no directory: one listing no page is damage.
        guard directory.totalEntries == root.objectCount, pages > 0, directory.totalEntries > 0,
              capacity.overflow || capacity.partialValue >= directory.totalEntries
        else {
            throw .corrupt(detail: "the index directory lists \(pages) pages for \(directory.totalEntries) entries; the root says \(root.objectCount)")
        }
        return PersistedIndex(pageOffsets: directory.pageOffsets, totalEntries: directory.totalEntries)
    }

    /// The whole index in memory, loaded the first time (with the saves since open merged in).
    /// Caller holds `rw`, shared or exclusive.
    func loadedIndex() throws(StoreError) -> ObjectIndex {
        indexLock.lock()
        defer { indexLock.unlock() }
        try loadIndexLocked()
        return memoryIndex
    }

    /// Replaces the whole index (a checkpoint or compaction wrote a new one, as `pages`). Caller
    /// holds `rw` exclusively.
    func replaceIndex(_ index: ObjectIndex, pages: PersistedIndex?) {
        indexLock.withLock {
            memoryIndex = index
            indexLoaded = true
            persistedIndex = pages
            indexOverlay = ObjectIndex()
        }
    }

    /// Points lookups at new index pages a checkpoint wrote without loading the index: the
    /// overlay's changes are in them. Caller holds `rw` exclusively.
    func replacePersistedIndex(_ pages: PersistedIndex) {
        indexLock.withLock {
            // A fetch may have loaded the whole index while the checkpoint ran; it points into
            // the log, which starts over now. The next need loads it again, from these pages.
            memoryIndex = ObjectIndex()
            indexLoaded = false
            persistedIndex = pages
            indexOverlay = ObjectIndex()
            persistedLookups = 0
        }
    }

    /// What a checkpoint starts from: the whole index when it is loaded, else the changes since
    /// the last checkpoint (the overlay); and the current checkpoint's pages when known.
    /// Caller holds `rw`.
    func indexForCheckpoint() -> (index: ObjectIndex, loaded: Bool, pages: PersistedIndex?) {
        indexLock.withLock { indexLoaded ? (memoryIndex, true, persistedIndex) : (indexOverlay, false, persistedIndex) }
    }

    /// The location of an object's current record, `nil` when it has none. Caller holds `rw`.
    func location(entityID: Int, key: Int64) throws(StoreError) -> UInt64? {
        indexLock.lock()
        defer { indexLock.unlock() }
        if indexLoaded { return memoryIndex.location(entityID: entityID, key: key) }
        if let recorded = indexOverlay.recorded(entityID: entityID, key: key) { return recorded == 0 ? nil : recorded }
        persistedLookups += 1
        if persistedLookups <= Self.persistedLookupsBeforeLoading {
            do { return try persistedLocation(entityID: entityID, key: key) } catch {
                // Damage in a page: loading finds it too and rebuilds from the data pages.
            }
        }
        try loadIndexLocked()
        return memoryIndex.location(entityID: entityID, key: key)
    }

    /// Applies one published change. Caller holds `rw` exclusively.
    func publishLocation(entityID: Int, key: Int64, location: UInt64?) {
        if indexLoaded {
            if let location { memoryIndex.set(entityID: entityID, key: key, location: location) } else { memoryIndex.remove(entityID: entityID, key: key) }
        } else {
            indexOverlay.record(entityID: entityID, key: key, location: location ?? 0)
        }
    }

    /// Makes sure no key the persisted index holds for `name` is handed out again, even if a
    /// damaged catalog says less (§7: the next key is more than every key in the index). Once per
    /// entity while the index is not in memory; loading it does the same for every entity.
    func checkNextKey(of name: String) throws(StoreError) {
        let largest = try rw.withReadLock { () throws(StoreError) -> Int64? in
            guard let entityID = catalog.entityID(of: name) else { return nil }
            indexLock.lock()
            defer { indexLock.unlock() }
            guard !indexLoaded, !keysChecked.contains(entityID) else { return nil }
            keysChecked.insert(entityID)
            do { return try persistedLargestKey(entityID: entityID) } catch {
                try loadIndexLocked()
                return memoryIndex.tables.indices.contains(entityID) ? memoryIndex.tables[entityID].keys.last : nil
            }
        }
        guard let largest else { return }
        keyLock.withLock { nextKeys[name] = max(nextKeys[name, default: 1], largest + 1) }
    }

    // MARK: Internals (caller holds `indexLock`)

    private func loadIndexLocked() throws(StoreError) {
        guard !indexLoaded else { return }
        var index: ObjectIndex
        // Pages a later checkpoint may list again: known only when read through the directory.
        var pages: PersistedIndex?
        do {
            (index, pages) = try Self.loadIndexAndPages(dataFile, root: root, catalog: catalog)
        } catch {
            index = try Self.rebuildIndex(dataFile, root: root, catalog: catalog)
            lateIndexRebuild = "\(error)"
        }
        index.apply(overlay: indexOverlay)
        memoryIndex = index
        indexOverlay = ObjectIndex()
        persistedIndex = pages
        indexLoaded = true
        let names = catalog.entities.map(\.name)
        keyLock.withLock {
            for (entityID, table) in index.tables.enumerated() where entityID < names.count {
                if let last = table.keys.last { nextKeys[names[entityID]] = max(nextKeys[names[entityID], default: 1], last + 1) }
            }
        }
    }

    /// The page ``IndexPageSearch`` finds by the pages' first entries, then a binary search within it.
    private func persistedLocation(entityID: Int, key: Int64) throws(StoreError) -> UInt64? {
        guard let page = try persistedPage(containing: (UInt32(truncatingIfNeeded: entityID), key)) else { return nil }
        var low = 0
        var high = page.count
        while low < high {
            let mid = (low + high) / 2
            if (page[mid].entityID, page[mid].primaryKey) < (UInt32(truncatingIfNeeded: entityID), key) { low = mid + 1 } else { high = mid }
        }
        guard low < page.count, page[low].entityID == UInt32(truncatingIfNeeded: entityID), page[low].primaryKey == key else { return nil }
        return page[low].location
    }

    /// The largest key the persisted index holds for an entity.
    private func persistedLargestKey(entityID: Int) throws(StoreError) -> Int64? {
        let target = (UInt32(truncatingIfNeeded: entityID), Int64.max)
        guard let page = try persistedPage(containing: target) else { return nil }
        let last = page.last { ($0.entityID, $0.primaryKey) <= target }
        return last.flatMap { $0.entityID == UInt32(truncatingIfNeeded: entityID) ? $0.primaryKey : nil }
    }

    /// The last page whose first entry is at or before `target`; `nil` when there is none.
    ///
    /// Complexity: a few page reads (``IndexPageSearch``).
    private func persistedPage(containing target: (UInt32, Int64)) throws(StoreError) -> [IndexEntry]? {
        guard let persisted = persistedIndex, !persisted.pageOffsets.isEmpty, entityIDFits(target.0) else { return nil }
        let key = IndexKey(entityID: target.0, primaryKey: target.1)
        // Pages read for their first key, which the answer may be: no second cache lookup.
        var read: [Int: [IndexEntry]] = [:]
        let position = try IndexPageSearch.lastPage(
            count: persisted.pageOffsets.count, containing: key,
            firstKey: { (position) throws(StoreError) -> IndexKey in
                // A page the last checkpoint wrote or listed again has its first key known: no read.
                if let known = persisted.firstKeys[position] { return known }
                if let inHand = read[position] { return IndexKey(inHand[0]) }
                let page = try persistedPage(at: persisted.pageOffsets[position])
                read[position] = page
                return IndexKey(page[0])
            },
            holds: { position in
                // Only a page in hand: a first key known without a read does not make it worth one.
                guard let last = read[position]?.last else { return false }
                return key <= IndexKey(last)
            })
        let page: [IndexEntry]
        if let inHand = read[position] { page = inHand } else { page = try persistedPage(at: persisted.pageOffsets[position]) }
        guard let first = page.first, IndexKey(first) <= key else { return nil }
        return page
    }

    private func entityIDFits(_ id: UInt32) -> Bool { Int(id) < catalog.entities.count }

    /// One index page, checked as loading checks it (§7), cached beside the data pages. Caller
    /// holds `rw`.
    func persistedPage(at offset: UInt64) throws(StoreError) -> [IndexEntry] {
        if case .indexPage(let entries)? = cache.get(offset) { return entries }
        let entries = try Self.checkedIndexPage(dataFile, at: offset, root: root, entityCount: catalog.entities.count)
        guard !entries.isEmpty else { throw .corrupt(detail: "index page \(offset) is empty") }
        cache.put(offset, .indexPage(entries))
        return entries
    }
}
