import CoreDataBinaryFormat
import CoreDataStorage

/// The order index pages keep their entries in (Formats/binary-store.md §7): entity ID, then
/// primary key.
struct IndexKey: Comparable, Sendable {
    var entityID: UInt32
    var primaryKey: Int64

    static func < (lhs: IndexKey, rhs: IndexKey) -> Bool { (lhs.entityID, lhs.primaryKey) < (rhs.entityID, rhs.primaryKey) }
}

extension IndexKey {
    init(_ entry: IndexEntry) { self.init(entityID: entry.entityID, primaryKey: entry.primaryKey) }
}

/// The index pages of a checkpoint in directory order, each either new (queued on the
/// checkpoint's ``PageBatchWriter``) or a page of an earlier checkpoint listed again
/// (Formats/binary-store.md §7, §9).
///
/// Entries stream through: at most two pages' worth is held, so a checkpoint of a million new
/// objects does not hold a million entries twice. A stretch of new pages ends in two pages of
/// equal size rather than a full one and a sliver, so the next insert there rewrites one page.
///
/// Threading: used by one thread.
struct IndexPagesBuilder {
    private enum Page {
        case written(Int)
        case reused(UInt64)
    }

    /// Entries per page written full (Formats/binary-store.md §7): small pages keep the rewrite
    /// of scattered changes small, and about 4,096 pages at most (up to 13.4M entries, where
    /// pages are full) keep open's read of the directory small.
    private let capacity: Int
    private var pages: [Page] = []
    /// Each page's first key, `nil` for a page listed again whose first key was never read.
    private var firstKeys: [IndexKey?] = []
    private var pending: [IndexEntry] = []

    /// Pages for an index of about `totalEntries` entries (their count sizes the pages).
    init(totalEntries: Int) {
        capacity = BinaryStoreLayout.indexEntriesPerWrittenPage(total: totalEntries)
        pending.reserveCapacity(2 * capacity)
    }

    var isEmpty: Bool { pages.isEmpty && pending.isEmpty }

    /// Adds one entry after every entry added so far.
    mutating func append(_ entry: IndexEntry, to writer: inout PageBatchWriter) throws(StoreError) {
        pending.append(entry)
        if pending.count == 2 * capacity {
            try queue(pending[..<capacity], to: &writer)
            pending.removeFirst(capacity)
        }
    }

    /// Adds every live entry of `index`; returns how many.
    @discardableResult
    mutating func appendEntries(of index: ObjectIndex, to writer: inout PageBatchWriter) throws(StoreError) -> Int {
        var count = 0
        try index.forEachEntry(from: nil, below: nil, includingDeleted: false) { (entry) throws(StoreError) in
            try append(entry, to: &writer)
            count += 1
        }
        return count
    }

    /// Lists a page of an earlier checkpoint again; its entries sort after every entry added so
    /// far. The entries before it end a stretch inside the index. `first` is its first key when
    /// known: a page is not read only to learn it.
    mutating func reuse(_ offset: UInt64, first: IndexKey?, to writer: inout PageBatchWriter) throws(StoreError) {
        try endStretch(evenly: true, to: &writer)
        pages.append(.reused(offset))
        firstKeys.append(first)
    }

    /// Queues the entries added since the last page. More than a page holds become two pages:
    /// of equal size inside the index (`evenly`), where a full page beside a sliver would be
    /// rewritten whole by the next insert next to it; a full one and the rest at the end of the
    /// index, where new keys fill the rest and a half page would stay half empty.
    mutating func endStretch(evenly: Bool, to writer: inout PageBatchWriter) throws(StoreError) {
        if pending.count > capacity {
            let split = evenly ? (pending.count + 1) / 2 : capacity
            try queue(pending[..<split], to: &writer)
            try queue(pending[split...], to: &writer)
        } else {
            try queue(pending[...], to: &writer)
        }
        pending.removeAll(keepingCapacity: true)
    }

    private mutating func queue(_ entries: ArraySlice<IndexEntry>, to writer: inout PageBatchWriter) throws(StoreError) {
        guard let first = entries.first else { return }
        pages.append(.written(try writer.add(.index, IndexPageCodec.encodePage(entries))))
        firstKeys.append(IndexKey(first))
    }

    /// The pages as the directory lists them, once `writer` has encoded every queued page.
    func persisted(in writer: PageBatchWriter, totalEntries: UInt64) -> PersistedIndex {
        let offsets = pages.map { page -> UInt64 in
            switch page {
            case .written(let number): writer.offset(of: number)
            case .reused(let offset): offset
            }
        }
        return PersistedIndex(pageOffsets: offsets, totalEntries: totalEntries, firstKeys: firstKeys)
    }
}

/// Which pages of the last checkpoint's index the changes since fall in (Formats/binary-store.md
/// §9, step 2): a page's range of keys runs from its first key to the next page's first key, and
/// a change before the first page's first key falls in the first page.
struct TouchedIndexPages {
    let old: PersistedIndex
    /// `old.firstKeys`, completed as pages are read.
    var firstKeys: [IndexKey?]
    var touched: [Bool]
    /// The page of the last key marked: keys come mostly in order, most in the same page.
    var last = 0

    init(_ old: PersistedIndex) {
        self.old = old
        firstKeys = old.firstKeys
        touched = [Bool](repeating: false, count: old.pageOffsets.count)
    }

    var touchedCount: Int { touched.count { $0 } }
}

extension BinaryStore {
    /// Marks the page `key` falls in. Keys may come in any order.
    ///
    /// Complexity: O(1) when the key falls in the page of the last key, else a few guesses and
    /// at most O(log pages) comparisons (``IndexPageSearch``), each reading the page when its
    /// first key is not known yet. Caller holds `commitLock` with no save queued.
    func markTouched(_ key: IndexKey, in pages: inout TouchedIndexPages) throws(StoreError) {
        let pageCount = pages.touched.count
        let last = pages.last
        var inLast = true
        if last > 0, try firstKey(of: last, in: &pages) > key { inLast = false }
        if inLast, last + 1 < pageCount, try key >= firstKey(of: last + 1, in: &pages) { inLast = false }
        if inLast {
            pages.touched[last] = true
            return
        }
        let low = try IndexPageSearch.lastPage(count: pageCount, containing: key) { (page) throws(StoreError) -> IndexKey in
            try firstKey(of: page, in: &pages)
        }
        pages.touched[low] = true
        pages.last = low
    }

    /// Lists the index of a checkpoint in `builder`: every page no change fell in is listed
    /// again as it is, and each stretch of consecutive touched pages is replaced by new pages
    /// holding the entries `entries(lower, upper, pages, emit)` emits in order: those from
    /// `lower` (none: from the start) up to but not including `upper` (none: to the end), which
    /// `pages` of the old index held before the changes. Caller holds `commitLock` with no save
    /// queued.
    func listIndexPages(
        _ pages: inout TouchedIndexPages, into builder: inout IndexPagesBuilder, writer: inout PageBatchWriter,
        entries: (_ lower: IndexKey?, _ upper: IndexKey?, _ pages: Range<Int>, _ emit: (IndexEntry) throws(StoreError) -> Void) throws(StoreError) -> Void
    ) throws(StoreError) {
        let pageCount = pages.touched.count
        var page = 0
        while page < pageCount {
            guard pages.touched[page] else {
                try builder.reuse(pages.old.pageOffsets[page], first: pages.firstKeys[page], to: &writer)
                page += 1
                continue
            }
            var end = page + 1
            while end < pageCount, pages.touched[end] { end += 1 }
            let lower = page == 0 ? nil : try firstKey(of: page, in: &pages)
            let upper = end < pageCount ? try firstKey(of: end, in: &pages) : nil
            try entries(lower, upper, page..<end) { (entry) throws(StoreError) in try builder.append(entry, to: &writer) }
            try builder.endStretch(evenly: upper != nil, to: &writer)
            page = end
        }
    }

    private func firstKey(of page: Int, in pages: inout TouchedIndexPages) throws(StoreError) -> IndexKey {
        if let key = pages.firstKeys[page] { return key }
        let entries = try rw.withReadLock { () throws(StoreError) -> [IndexEntry] in try persistedPage(at: pages.old.pageOffsets[page]) }
        // `persistedPage` rejects an empty page.
        let key = IndexKey(entries[0])
        pages.firstKeys[page] = key
        return key
    }
}

extension ObjectIndex {
    /// Calls `body` with each entry from `lower` (none: from the start) up to but not including
    /// `upper` (none: to the end), in index-page order; entries marked deleted (location 0) only
    /// when `includingDeleted` (an overlay's deletes).
    func forEachEntry<Failure: Error>(
        from lower: IndexKey?, below upper: IndexKey?, includingDeleted: Bool, _ body: (IndexEntry) throws(Failure) -> Void
    ) throws(Failure) {
        let firstTable = Int(lower?.entityID ?? 0)
        let lastTable = min(tables.count - 1, upper.map { Int($0.entityID) } ?? Int.max)
        guard firstTable <= lastTable else { return }
        for entityID in firstTable...lastTable {
            let table = tables[entityID]
            var start = 0
            var end = table.keys.count
            if let lower, Int(lower.entityID) == entityID { start = table.firstPosition(notBelow: lower.primaryKey) }
            if let upper, Int(upper.entityID) == entityID { end = table.firstPosition(notBelow: upper.primaryKey) }
            guard start < end else { continue }
            for position in start..<end where includingDeleted || table.locations[position] != 0 {
                try body(IndexEntry(entityID: UInt32(entityID), primaryKey: table.keys[position], location: table.locations[position]))
            }
        }
    }

    /// The entries ``forEachEntry(from:below:includingDeleted:_:)`` gives.
    func entries(from lower: IndexKey?, below upper: IndexKey?, includingDeleted: Bool) -> [IndexEntry] {
        var result: [IndexEntry] = []
        forEachEntry(from: lower, below: upper, includingDeleted: includingDeleted) { result.append($0) }
        return result
    }
}
