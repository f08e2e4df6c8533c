import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// One page of a secondary index being written: new (its number on the page writer) or an old
/// page listed again (its offset).
enum SecondaryPageSlot {
    case new(Int)
    case old(UInt64)
}

/// Lays an index's entries out in pages (§7.2): every old page that no change reached (no entry
/// of it dropped, none inserted inside it: ``SecondaryEntries/Edit``) is listed again, and the entries between such runs go to new pages, split
/// evenly; a stretch under a quarter page takes the next listed page with it (the one before at
/// the end), so no sliver page is left between listed pages.
struct SecondaryPageLayout {
    let entries: SecondaryEntries
    private(set) var slots: [SecondaryPageSlot] = []
    /// Where each page starts in `entries`.
    private(set) var starts: [Int] = []

    init(entries: SecondaryEntries) { self.entries = entries }

    /// Places every entry; `write` queues a new page of a range of entries and returns its number.
    /// Complexity: O(old pages + the edit's changes), plus the new pages' entries.
    mutating func place(reusing reuse: SecondaryPageReuse?, write: (Range<Int>) throws(StoreError) -> Int) throws(StoreError) {
        var placed = 0
        if let reuse {
            let edit = reuse.edit
            let starts = reuse.pages.starts
            // Drops before the page, and insertions at or before its first entry (they go in
            // before it): the page's shift in the new entries.
            var drops = 0, insertions = 0
            for (page, offset) in reuse.pages.listing.pageOffsets.enumerated() where page < starts.count {
                let lower = starts[page], upper = page + 1 < starts.count ? starts[page + 1] : edit.oldCount
                guard lower < upper, upper <= edit.oldCount else { continue }
                while drops < edit.dropped.count, edit.dropped[drops] < lower { drops += 1 }
                while insertions < edit.insertions.count, edit.insertions[insertions] <= lower { insertions += 1 }
                // A change reached the page: an entry of it dropped, or one inserted inside it.
                if drops < edit.dropped.count, edit.dropped[drops] < upper { continue }
                if insertions < edit.insertions.count, edit.insertions[insertions] < upper { continue }
                let at = lower - drops + insertions
                let end = at + (upper - lower)
                guard at >= placed, end <= entries.count else { continue }
                // A sliver before it would become a page of its own: the page goes with it.
                guard at == placed || !isSliver(placed..<at) else { continue }
                try newPages(placed..<at, write)
                slots.append(.old(offset))
                self.starts.append(at)
                placed = end
            }
            // A sliver at the end goes with the last page listed again, which ends where it starts.
            if placed < entries.count, isSliver(placed..<entries.count), case .old? = slots.last, let start = self.starts.last {
                slots.removeLast()
                self.starts.removeLast()
                placed = start
            }
        }
        try newPages(placed..<entries.count, write)
    }

    /// Whether `range` holds less than a quarter page of entries.
    private func isSliver(_ range: Range<Int>) -> Bool {
        var bytes = 0
        for position in range {
            bytes += entries.encodedBytes(at: position)
            if bytes >= SecondaryIndexLayout.pageBytes / 4 { return false }
        }
        return true
    }

    /// New pages for `range`, as few as fit and evenly filled.
    private mutating func newPages(_ range: Range<Int>, _ write: (Range<Int>) throws(StoreError) -> Int) throws(StoreError) {
        guard !range.isEmpty else { return }
        var total = 0
        for position in range { total += entries.encodedBytes(at: position) }
        let count = max(1, (total + SecondaryIndexLayout.pageBytes - 1) / SecondaryIndexLayout.pageBytes)
        let target = (total + count - 1) / count
        var start = range.lowerBound, bytes = 0
        for position in range {
            let size = entries.encodedBytes(at: position)
            if position > start, bytes + size > target {
                slots.append(.new(try write(start..<position)))
                starts.append(start)
                start = position
                bytes = 0
            }
            bytes += size
        }
        slots.append(.new(try write(start..<range.upperBound)))
        starts.append(start)
    }
}
