import CoreDataBinaryFormat
import CoreDataStorage

/// The order index pages keep their entries in (Formats/binary-store.md §7): entity ID, then
/// primary key.
struct IndexKey: Comparable, Sendable {
    var entityID: UInt32
    var primaryKey: Int64

    init(entityID: UInt32, primaryKey: Int64) {
        self.entityID = entityID
        self.primaryKey = primaryKey
    }

    init(_ entry: IndexEntry) { self.init(entityID: entry.entityID, primaryKey: entry.primaryKey) }

    static func < (lhs: IndexKey, rhs: IndexKey) -> Bool { (lhs.entityID, lhs.primaryKey) < (rhs.entityID, rhs.primaryKey) }
}

/// The index pages of a checkpoint in directory order, each either new (queued on the
/// checkpoint's ``PageBatchWriter``) or a page of an earlier checkpoint listed again
/// (Formats/binary-store.md §7, §9).
///
/// Threading: used by one thread.
struct IndexPagesBuilder {
    private enum Page {
        case written(Int)
        case reused(UInt64)
    }

    private var pages: [Page] = []
    private var firstKeys: [IndexKey] = []
    private var pending: [IndexEntry] = []

    init() { pending.reserveCapacity(BinaryStoreLayout.indexEntriesPerPage) }

    var isEmpty: Bool { pages.isEmpty && pending.isEmpty }

    /// Adds one entry after every entry added so far; full pages are queued as they fill.
    mutating func append(_ entry: IndexEntry, to writer: inout PageBatchWriter) throws(StoreError) {
        pending.append(entry)
        if pending.count == BinaryStoreLayout.indexEntriesPerPage { try flush(to: &writer) }
    }

    /// Adds every live entry of `index`, in full pages; returns how many.
    @discardableResult
    mutating func appendEntries(of index: ObjectIndex, to writer: inout PageBatchWriter) throws(StoreError) -> Int {
        var count = 0
        for (entityID, table) in index.tables.enumerated() {
            for position in table.keys.indices where table.locations[position] != 0 {
                try append(IndexEntry(entityID: UInt32(entityID), primaryKey: table.keys[position], location: table.locations[position]), to: &writer)
                count += 1
            }
        }
        return count
    }

    /// Adds the entries of one changed stretch of the index as pages of equal size: a stretch
    /// one entry over a page becomes two half pages, so the next insert there rewrites one
    /// page, not two.
    mutating func appendStretch(_ entries: [IndexEntry], to writer: inout PageBatchWriter) throws(StoreError) {
        try flush(to: &writer)
        guard !entries.isEmpty else { return }
        let capacity = BinaryStoreLayout.indexEntriesPerPage
        let pageCount = (entries.count + capacity - 1) / capacity
        var start = 0
        for page in 0..<pageCount {
            // Spreads the remainder over the first pages: sizes differ by at most one.
            let size = entries.count / pageCount + (page < entries.count % pageCount ? 1 : 0)
            try queue(entries[start..<(start + size)], to: &writer)
            start += size
        }
    }

    /// Lists a page of an earlier checkpoint again; its entries sort after every entry added so
    /// far.
    mutating func reuse(_ offset: UInt64, first: IndexKey, to writer: inout PageBatchWriter) throws(StoreError) {
        try flush(to: &writer)
        pages.append(.reused(offset))
        firstKeys.append(first)
    }

    /// Queues the entries added since the last page as a page of their own.
    mutating func flush(to writer: inout PageBatchWriter) throws(StoreError) {
        guard !pending.isEmpty else { return }
        try queue(pending[...], to: &writer)
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
        return PersistedIndex(pageOffsets: offsets, totalEntries: totalEntries, firstKeys: firstKeys.map(Optional.some))
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

    var touchedCount: Int { touched.count { $0 } }
}

extension BinaryStore {
    /// The pages of `old` that the keys of `changed` (sorted) fall in.
    ///
    /// Complexity: O(changes + pages) with the first keys known, plus one page read per page
    /// whose first key is not known and that the search visits (O(changes × log pages) reads at
    /// most). Caller holds `commitLock` with no save queued.
    func indexPagesTouched(by changed: [IndexKey], in old: PersistedIndex) throws(StoreError) -> TouchedIndexPages {
        var pages = TouchedIndexPages(old: old, firstKeys: old.firstKeys, touched: [Bool](repeating: false, count: old.pageOffsets.count))
        let pageCount = old.pageOffsets.count
        var low = 0
        for key in changed {
            // Keys come sorted, so a key's page is at or after the last one's; most keys fall in
            // the same page as the key before them, or the next.
            if low + 1 < pageCount, try firstKey(of: low + 1, in: &pages) <= key {
                var high = pageCount - 1
                low += 1
                while low < high {
                    let mid = (low + high + 1) / 2
                    if try firstKey(of: mid, in: &pages) <= key { low = mid } else { high = mid - 1 }
                }
            }
            pages.touched[low] = true
        }
        return pages
    }

    /// Lists the index of a checkpoint in `builder`: every page no change fell in is listed
    /// again as it is, and each stretch of consecutive touched pages is replaced by new pages
    /// holding `entries(lower, upper, pages)`: the entries from `lower` (none: from the start)
    /// up to but not including `upper` (none: to the end), which `pages` of the old index held
    /// before the changes. Caller holds `commitLock` with no save queued.
    func listIndexPages(
        _ pages: inout TouchedIndexPages, into builder: inout IndexPagesBuilder, writer: inout PageBatchWriter,
        entries: (_ lower: IndexKey?, _ upper: IndexKey?, _ pages: Range<Int>) throws(StoreError) -> [IndexEntry]
    ) throws(StoreError) {
        let pageCount = pages.touched.count
        var page = 0
        while page < pageCount {
            guard pages.touched[page] else {
                try builder.reuse(pages.old.pageOffsets[page], first: try firstKey(of: page, in: &pages), to: &writer)
                page += 1
                continue
            }
            var end = page + 1
            while end < pageCount, pages.touched[end] { end += 1 }
            let lower = page == 0 ? nil : try firstKey(of: page, in: &pages)
            let upper = end < pageCount ? try firstKey(of: end, in: &pages) : nil
            try builder.appendStretch(try entries(lower, upper, page..<end), to: &writer)
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
    /// The entries from `lower` (none: from the start) up to but not including `upper` (none:
    /// to the end), in index-page order; entries marked deleted (location 0) only when
    /// `includingDeleted` (an overlay's deletes).
    func entries(from lower: IndexKey?, below upper: IndexKey?, includingDeleted: Bool) -> [IndexEntry] {
        var result: [IndexEntry] = []
        let firstTable = Int(lower?.entityID ?? 0)
        let lastTable = min(tables.count - 1, upper.map { Int($0.entityID) } ?? Int.max)
        guard firstTable <= lastTable else { return result }
        for entityID in firstTable...lastTable {
            let table = tables[entityID]
            var start = 0
            var end = table.keys.count
            if let lower, Int(lower.entityID) == entityID { start = Self.firstPosition(in: table.keys, notBelow: lower.primaryKey) }
            if let upper, Int(upper.entityID) == entityID { end = Self.firstPosition(in: table.keys, notBelow: upper.primaryKey) }
            guard start < end else { continue }
            for position in start..<end where includingDeleted || table.locations[position] != 0 {
                result.append(IndexEntry(entityID: UInt32(entityID), primaryKey: table.keys[position], location: table.locations[position]))
            }
        }
        return result
    }

    private static func firstPosition(in keys: [Int64], notBelow key: Int64) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
