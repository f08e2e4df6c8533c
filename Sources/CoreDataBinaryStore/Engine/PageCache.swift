import CoreDataBinaryFormat
import Foundation

/// Decoded data pages and blocks of the log, bounded in bytes, evicted by CLOCK (second chance):
/// a page read once by a scan is evicted before a page read again, so one big fetch does not
/// flush the pages point lookups keep using.
///
/// Threading: safe from any thread; one lock around the table.
final class PageCache: @unchecked Sendable {
    enum Entry {
        case dataPage(DataPage)
        case logBlock([UInt8])
        /// A checked index page, for lookups before the whole index is in memory.
        case indexPage([IndexEntry])

        var cost: Int {
            switch self {
            case .dataPage(let page): return page.payload.count + 64
            case .logBlock(let bytes): return bytes.count + 64
            case .indexPage(let entries): return MemoryLayout<IndexEntry>.stride * entries.count + 64
            }
        }
    }

    private struct Slot {
        var key: UInt64
        var entry: Entry
        var referenced: Bool
    }

    /// The cache's state in one stored property, so that each call makes one exclusive access to
    /// the class instead of one per field (each is a runtime check).
    private struct Table {
        let capacity: Int
        var slots: [Slot] = []
        var positions = PagePositionTable()
        var hand = 0
        var used = 0
        var counts = PageCacheStatistics.Counts()

        mutating func get(_ key: UInt64) -> Entry? {
            guard let position = positions.position(of: key) else {
                counts.misses &+= 1
                return nil
            }
            counts.hits &+= 1
            slots[position].referenced = true
            return slots[position].entry
        }

        mutating func put(_ key: UInt64, _ entry: Entry, cost: Int) {
            if let position = positions.position(of: key) {
                used += cost - slots[position].entry.cost
                slots[position].entry = entry
                return
            }
            while used + cost > capacity, !slots.isEmpty { evictOne() }
            positions.set(key, position: slots.count)
            slots.append(Slot(key: key, entry: entry, referenced: false))
            used += cost
        }

        private mutating func evictOne() {
            while true {
                if hand >= slots.count { hand = 0 }
                if slots[hand].referenced {
                    slots[hand].referenced = false
                    hand += 1
                    continue
                }
                let victim = slots[hand]
                counts.evictions &+= 1
                used -= victim.entry.cost
                positions.remove(victim.key)
                let last = slots.count - 1
                if hand != last {
                    slots[hand] = slots[last]
                    positions.set(slots[hand].key, position: hand)
                }
                slots.removeLast()
                return
            }
        }

        mutating func removeAll(where predicate: (UInt64) -> Bool) {
            slots = slots.filter { !predicate($0.key) }
            positions.removeAll()
            used = 0
            for (index, slot) in slots.enumerated() {
                positions.set(slot.key, position: index)
                used += slot.entry.cost
            }
            hand = 0
        }
    }

    private let lock = NSLock()
    private let capacity: Int
    /// Guarded by `lock`. No runtime exclusivity check (about 75 instructions per cached page
    /// read), which only catches overlapping accesses on one thread: the one access that calls
    /// out, `removeAll(where:)`, runs the store's own key predicates, which never touch the cache.
    @exclusivity(unchecked) private var table: Table

    /// - Parameter capacity: the most bytes of decoded pages to keep.
    init(capacity: Int) {
        self.capacity = max(0, capacity)
        table = Table(capacity: self.capacity)
    }

    func get(_ key: UInt64) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        return table.get(key)
    }

    func put(_ key: UInt64, _ entry: Entry) {
        let cost = entry.cost
        guard cost <= capacity else { return }
        lock.lock()
        defer { lock.unlock() }
        table.put(key, entry, cost: cost)
    }

    /// The counts so far and what the cache holds now.
    var statistics: PageCacheStatistics {
        lock.lock()
        defer { lock.unlock() }
        return PageCacheStatistics(counts: table.counts, entries: table.slots.count, bytes: table.used, capacity: capacity)
    }

    /// Drops every entry whose key matches, e.g. all log blocks when the log starts over.
    func removeAll(where predicate: (UInt64) -> Bool) {
        lock.lock()
        defer { lock.unlock() }
        table.removeAll(where: predicate)
    }
}
