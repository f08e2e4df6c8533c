import Foundation

/// A test-only writer of binary property lists in CF's layout, with knobs to damage them: the
/// reader's round trips and hostile inputs are built with it.
struct PropertyListWriter {
    /// One object to write; containers refer to objects by number.
    enum Item {
        case null
        case fill
        case bool(Bool)
        case int(Int64)
        /// A 16-byte integer with the given halves.
        case int128(high: UInt64, low: UInt64)
        case real(Double)
        case float(Float)
        case date(Double)
        case data([UInt8])
        case ascii(String)
        case utf16([UInt16])
        case uid(UInt64)
        case array([Int])
        case set([Int])
        case dict(keys: [Int], values: [Int])
        /// Bytes written as they are, for damaged objects.
        case raw([UInt8])
    }

    var items: [Item] = []
    /// Bytes of the reference size; nil picks the smallest that fits.
    var referenceSize: Int?
    /// Bytes of the offset size; nil picks the smallest that fits.
    var offsetSize: Int?

    @discardableResult
    mutating func add(_ item: Item) -> Int {
        items.append(item)
        return items.count - 1
    }

    /// Overrides of the trailer's fields, applied after encoding.
    struct Trailer {
        var offsetSize: UInt8?
        var referenceSize: UInt8?
        var objectCount: UInt64?
        var top: UInt64?
        var tableOffset: UInt64?
    }

    func encode(top: Int = 0, trailer: Trailer = Trailer(), offsetOverride: [Int: UInt64] = [:]) -> [UInt8] {
        let refSize = referenceSize ?? Self.width(for: UInt64(max(items.count - 1, 0)))
        var output = Array("bplist00".utf8)
        var offsets: [UInt64] = []
        for item in items {
            offsets.append(UInt64(output.count))
            output += encode(item, refSize: refSize)
        }
        for (index, offset) in offsetOverride { offsets[index] = offset }
        let tableOffset = UInt64(output.count)
        let offSize = offsetSize ?? Self.width(for: offsets.max() ?? 0)
        for offset in offsets { output += Self.bigEndian(offset, width: offSize) }
        output += [0, 0, 0, 0, 0, 0]
        output.append(trailer.offsetSize ?? UInt8(offSize))
        output.append(trailer.referenceSize ?? UInt8(refSize))
        output += Self.bigEndian(trailer.objectCount ?? UInt64(items.count), width: 8)
        output += Self.bigEndian(trailer.top ?? UInt64(top), width: 8)
        output += Self.bigEndian(trailer.tableOffset ?? tableOffset, width: 8)
        return output
    }

    private func encode(_ item: Item, refSize: Int) -> [UInt8] {
        switch item {
        case .null: return [0x00]
        case .fill: return [0x0F]
        case .bool(let value): return [value ? 0x09 : 0x08]
        case .int(let value): return Self.integer(value)
        case .int128(let high, let low): return [0x14] + Self.bigEndian(high, width: 8) + Self.bigEndian(low, width: 8)
        case .real(let value): return [0x23] + Self.bigEndian(value.bitPattern, width: 8)
        case .float(let value): return [0x22] + Self.bigEndian(UInt64(value.bitPattern), width: 4)
        case .date(let value): return [0x33] + Self.bigEndian(value.bitPattern, width: 8)
        case .data(let bytes): return Self.header(0x40, bytes.count) + bytes
        case .ascii(let string): return Self.header(0x50, string.utf8.count) + Array(string.utf8)
        case .utf16(let units): return Self.header(0x60, units.count) + units.flatMap { Self.bigEndian(UInt64($0), width: 2) }
        case .uid(let value):
            let width = Self.width(for: value)
            return [0x80 | UInt8(width - 1)] + Self.bigEndian(value, width: width)
        case .array(let refs): return Self.header(0xA0, refs.count) + refs.flatMap { Self.bigEndian(UInt64($0), width: refSize) }
        case .set(let refs): return Self.header(0xC0, refs.count) + refs.flatMap { Self.bigEndian(UInt64($0), width: refSize) }
        case .dict(let keys, let values):
            return Self.header(0xD0, keys.count) + (keys + values).flatMap { Self.bigEndian(UInt64($0), width: refSize) }
        case .raw(let bytes): return bytes
        }
    }

    /// CF's integer encoding: non-negative values in the fewest of 1, 2 or 4 bytes, the rest in 8.
    static func integer(_ value: Int64) -> [UInt8] {
        if value >= 0 {
            let unsigned = UInt64(value)
            if unsigned <= 0xFF { return [0x10] + bigEndian(unsigned, width: 1) }
            if unsigned <= 0xFFFF { return [0x11] + bigEndian(unsigned, width: 2) }
            if unsigned <= 0xFFFF_FFFF { return [0x12] + bigEndian(unsigned, width: 4) }
        }
        return [0x13] + bigEndian(UInt64(bitPattern: value), width: 8)
    }

    static func header(_ marker: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [marker | UInt8(count)] : [marker | 0x0F] + integer(Int64(count))
    }

    static func width(for value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }

    static func bigEndian(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - $0))) }
    }
}
