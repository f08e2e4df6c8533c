import Foundation

/// The ``PageSortBounds`` complete scans of this handle learned, per entity and string
/// attribute (its catalog column), by data-page offset. In memory only: the first top-k scan
/// after open reads every page, later ones pass over the pages whose bounds exclude them.
///
/// Threading: guarded by its own lock; a scan takes a column's table at its start and hands
/// back what it learned at its end, both under the caller's shared `rw`. Cleared under the
/// exclusive `rw` whenever the handle's pages may have changed under the same offsets
/// (compaction, or another process's checkpoint installing a new index).
///
/// Memory: 24 bytes and a hash bucket per page of each column a top-k scan sorted by.
final class PageSortBoundsTable: @unchecked Sendable {
    struct Column: Hashable {
        var entityID: Int
        var column: Int
    }

    private let lock = NSLock()
    private var columns: [Column: [UInt64: PageSortBounds]] = [:]
    /// Records scans passed over with their page, unread, since open (tests read it).
    private var passed = 0

    /// The bounds known for `column`'s pages.
    func bounds(of column: Column) -> [UInt64: PageSortBounds] {
        lock.withLock { columns[column] ?? [:] }
    }

    /// Adds bounds a complete scan took over every current record of `column` in each page of
    /// `learned` (pages it did not pass over), and counts the records it passed over unread.
    func learn(_ learned: [UInt64: PageSortBounds], of column: Column, passedOver: Int) {
        lock.withLock {
            passed += passedOver
            guard !learned.isEmpty else { return }
            columns[column, default: [:]].merge(learned) { _, new in new }
        }
    }

    func removeAll() {
        lock.withLock { columns = [:] }
    }

    /// Pages with bounds, over every column, and the records scans passed over since open.
    var counts: (pages: Int, passedOver: Int) {
        lock.withLock { (columns.values.reduce(0) { $0 + $1.count }, passed) }
    }
}
