import CoreDataBinaryFormat

/// One scan's use of ``PageSortBoundsTable`` for its entity and sort column: the known bounds
/// (looked up once per run of records in one page), and bounds learned from the current records
/// of each page without known bounds, handed back when the scan has read all of them.
struct PageBoundsWalk {
    private let column: PageSortBoundsTable.Column
    private let table: [UInt64: PageSortBounds]
    private var lookedUp = UInt64.max
    private var current: PageSortBounds?
    private var learned: [UInt64: PageSortBounds] = [:]
    private var learning = UInt64.max
    private var accumulated = PageSortBounds.empty
    private var passed = 0

    /// The fewest records per run, on average, for ``runsByBound(_:ascending:)`` to order runs.
    static let shortestAverageRun = 16

    /// Whether no page of the column has bounds yet.
    var knowsNoPage: Bool { table.isEmpty }

    init(_ bounds: PageSortBoundsTable, entityID: Int, column: Int) {
        self.column = PageSortBoundsTable.Column(entityID: entityID, column: column)
        table = bounds.bounds(of: self.column)
    }

    /// The known bounds of the page at `offset`.
    mutating func known(_ offset: UInt64) -> PageSortBounds? {
        if offset != lookedUp {
            lookedUp = offset
            current = table[offset]
        }
        return current
    }

    /// Counts records passed over with their page.
    mutating func passedOver(_ count: Int) {
        passed += count
    }

    /// The positions of `locations` in runs of one page (or of records in the log), those with
    /// no known bounds first, in key order, then the rest by bound: least first for an
    /// ascending sort, greatest first for a descending one.
    ///
    /// Nil when the runs average fewer than ``shortestAverageRun`` records (an entity whose
    /// records lie scattered over pages, as after many updates): the scan then walks in key
    /// order, still passing over records page by page, rather than sort a run per few records.
    ///
    /// Complexity: O(n) over the locations, plus O(r log r) for r runs.
    func runsByBound(_ locations: [UInt64], ascending: Bool) -> [(steps: Range<Int>, bounds: PageSortBounds?)]? {
        var unknown: [(steps: Range<Int>, bounds: PageSortBounds?)] = []
        var known: [(steps: Range<Int>, bounds: PageSortBounds)] = []
        func page(_ location: UInt64) -> UInt64 {
            location != 0 && location & RecordLocation.logBit == 0 ? location >> RecordLocation.slotBits : .max
        }
        var start = 0
        var current = locations.first.map(page) ?? .max
        for position in locations.indices {
            let next = position + 1 < locations.count ? page(locations[position + 1]) : .max
            guard position + 1 == locations.count || next != current else { continue }
            let steps = start..<(position + 1)
            if current != .max, let bounds = table[current] { known.append((steps, bounds)) } else { unknown.append((steps, nil)) }
            start = position + 1
            current = next
        }
        guard (unknown.count + known.count) * Self.shortestAverageRun <= locations.count else { return nil }
        known.sort { a, b in
            let (x, y) = ascending ? (a.bounds.low, b.bounds.low) : (b.bounds.high, a.bounds.high)
            return x != y ? x < y : a.steps.lowerBound < b.steps.lowerBound
        }
        return unknown + known.map { ($0.steps, $0.bounds) }
    }

    /// Takes in the sort-string prefix of a current record in the page at `offset` (nil: one
    /// the bounds cannot order).
    mutating func saw(page offset: UInt64, prefix: UInt64?) {
        if offset != learning {
            flush()
            learning = offset
            // The page's records need not be adjacent in key order.
            accumulated = learned[offset] ?? .empty
        }
        accumulated.include(prefix)
    }

    /// Hands what the scan learned to `bounds`; call only after the scan read every current record.
    mutating func finish(into bounds: PageSortBoundsTable) {
        flush()
        bounds.learn(learned, of: column, passedOver: passed)
    }

    private mutating func flush() {
        if learning != .max { learned[learning] = accumulated }
    }
}
