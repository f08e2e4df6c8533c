import CoreDataBinaryFormat
import Foundation

/// The ``PageSortBounds`` known for this handle's data pages, per entity and string attribute
/// (its catalog column), by data-page offset: those the file holds (format version 4,
/// Formats/binary-store.md §7.3), read before the first scan that can use them, those this
/// handle's checkpoints wrote, and those complete scans learned of pages without them (pages
/// of an older version), which stay in memory: the first top-k scan reads such pages, later
/// ones pass over the pages whose bounds exclude them.
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
    private enum Persisted { case unread, read, damaged }
    /// Whether the current root's persisted bounds are in ``columns``.
    private var persisted = Persisted.unread
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

    /// Forgets every bound, and that the persisted ones were read: the pages changed under
    /// their offsets (compaction, or another process's checkpoint).
    func removeAll() {
        lock.withLock {
            columns = [:]
            persisted = .unread
        }
    }

    /// Whether the persisted bounds of the current root are still to be read.
    var wantsPersisted: Bool { lock.withLock { persisted == .unread } }

    /// Whether reading the persisted bounds found damage: checkpoints then start a new directory.
    var persistedDamaged: Bool { lock.withLock { persisted == .damaged } }

    /// Adds the bounds the current root's pages hold (once: a scan that read them at the same
    /// time as another adds nothing).
    func installPersisted(_ entries: [PageBoundsEntry]) {
        lock.withLock {
            guard persisted == .unread else { return }
            add(entries)
            persisted = .read
        }
    }

    func markPersistedDamaged() {
        lock.withLock { if persisted == .unread { persisted = .damaged } }
    }

    /// Adds the bounds of the data pages a checkpoint of this handle wrote; when its directory
    /// started over, the new root holds no bound this table lacks, so it need not be read.
    func checkpointed(_ entries: [PageBoundsEntry], startedOver: Bool) {
        lock.withLock {
            add(entries)
            if startedOver, persisted == .damaged { persisted = .read }
        }
    }

    /// Caller holds `lock`.
    private func add(_ entries: [PageBoundsEntry]) {
        for entry in entries {
            columns[Column(entityID: Int(entry.entityID), column: Int(entry.propertyIndex)), default: [:]][entry.pageOffset] = entry.bounds
        }
    }

    /// Pages with bounds, over every column, and the records scans passed over since open.
    var counts: (pages: Int, passedOver: Int) {
        lock.withLock { (columns.values.reduce(0) { $0 + $1.count }, passed) }
    }
}
