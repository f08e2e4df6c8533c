/// The least and greatest value of one string attribute among one entity's current records in
/// one data page, as 8-byte prefixes: what lets a top-k scan sorted by that attribute pass over
/// the whole page, undecompressed, once it holds k matches that all sort before the page's least
/// value (or, descending, after its greatest).
///
/// Why prefixes suffice (Formats/binary-store.md §7.3): for ASCII strings, which `compare:`
/// orders by their bytes, cutting each to its first 8 bytes, zero-padded and read
/// big-endian, keeps the order (`s ≤ t` gives `prefix(s) ≤ prefix(t)`), so `prefix(s) >
/// prefix(t)` proves `s > t`. A page holding a null, a non-ASCII string or a record the raw look
/// cannot read is ``unbounded``: it is never passed over.
///
/// Why they stay true: data pages never change (Formats/binary-store.md §1), and a record in an
/// old page can stop being current (a later save moves the object to the log or a newer page)
/// but never become current again. Bounds taken over one moment's current records therefore
/// still cover every current record of the page at any later moment, in the same file. From
/// format version 4 writers persist them for every page they write (``PageBoundsSummary``).
public struct PageSortBounds: Sendable, Equatable {
    public var low: UInt64
    public var high: UInt64

    public init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// Bounds that pass over nothing.
    public static let unbounded = PageSortBounds(low: 0, high: .max)
    /// Bounds of no value yet: the start of a page's accumulation.
    public static let empty = PageSortBounds(low: .max, high: 0)

    /// Widens the bounds to hold a value with `prefix`, or to ``unbounded`` for a value that
    /// has none (nil: null, non-ASCII or unread).
    public mutating func include(_ prefix: UInt64?) {
        guard let prefix else {
            self = .unbounded
            return
        }
        low = min(low, prefix)
        high = max(high, prefix)
    }

    /// Whether every value within the bounds sorts after a string with `prefix` (before it,
    /// when the sort is descending), so no record in the page can enter the matches kept.
    public func allSort(after prefix: UInt64, ascending: Bool) -> Bool {
        ascending ? low > prefix : high < prefix
    }

    /// The first 8 bytes of an ASCII string, zero-padded, read big-endian; nil when the string
    /// has a byte of 0x80 or more (`compare:` does not order it by bytes).
    public static func prefix(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        // Every probed record of a sorted scan comes here: eight bytes at a time where it can.
        let raw = UnsafeRawBufferPointer(bytes)
        let count = raw.count
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var prefix: UInt64 = 0
        var position = 0
        if count >= 8 {
            prefix = UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
            guard prefix & highBits == 0 else { return nil }
            position = 8
            while position + 8 <= count {
                guard raw.loadUnaligned(fromByteOffset: position, as: UInt64.self) & highBits == 0 else { return nil }
                position += 8
            }
        }
        var ascii: UInt8 = 0
        while position < count {
            let byte = raw[position]
            ascii |= byte
            if position < 8 { prefix |= UInt64(byte) << (56 - 8 * UInt64(position)) }
            position += 1
        }
        return ascii < 0x80 ? prefix : nil
    }
}
