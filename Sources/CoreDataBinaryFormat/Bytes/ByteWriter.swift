/// Appends little-endian integers, varints and byte strings to a growing byte array.
public struct ByteWriter {
    public var bytes: [UInt8]

    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    public mutating func uint8(_ value: UInt8) { bytes.append(value) }
    public mutating func uint16(_ value: UInt16) { fixed(value) }
    public mutating func uint32(_ value: UInt32) { fixed(value) }
    public mutating func uint64(_ value: UInt64) { fixed(value) }

    @inline(__always)
    private mutating func fixed<T: FixedWidthInteger>(_ value: T) {
        // One append of the value's bytes, not one per byte: each append checks capacity and
        // uniqueness, and index pages, doubles and dates are mostly fixed-width fields.
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    public mutating func signedVarint(_ value: Int64) {
        varint(ZigZag.encode(value))
    }

    public mutating func append<C: Collection>(_ raw: C) where C.Element == UInt8 { bytes.append(contentsOf: raw) }
    // Concrete overloads: a generic call from another module runs unspecialized, a byte at a time.
    public mutating func append(_ raw: [UInt8]) { bytes.append(contentsOf: raw) }
    public mutating func append(_ raw: ArraySlice<UInt8>) { bytes.append(contentsOf: raw) }

    public mutating func string(_ value: String) {
        var copy = value
        copy.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// Appends `count` zero bytes, copied from ``zeroChunk`` 64 KiB at a time: a large record is
    /// staged in zeros (``appendBounded(maximumCount:_:)``), and appending `repeatElement(0, …)`
    /// runs unspecialized in a debug build, tens of instructions a byte through the generic
    /// `Sequence` path, which doubled the crash suites' time on records of 100 KB.
    public mutating func zeros(_ count: Int) {
        var rest = count
        while rest > 0 {
            let chunk = min(rest, zeroChunk.count)
            bytes.append(contentsOf: zeroChunk[..<chunk])
            rest -= chunk
        }
    }

    /// Overwrites 4 bytes at `offset` (for lengths known only after the body is written).
    public mutating func patchUInt32(_ value: UInt32, at offset: Int) { patch(value, at: offset) }

    /// Overwrites 8 bytes at `offset`.
    public mutating func patchUInt64(_ value: UInt64, at offset: Int) { patch(value, at: offset) }

    /// One bounds check and one uniqueness check for the whole field, not one per byte (every
    /// log entry patches two fields).
    @inline(__always)
    private mutating func patch<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        precondition(offset >= 0 && offset <= bytes.count - MemoryLayout<T>.size, "patch at \(offset) outside the \(bytes.count) bytes written")
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self) }
    }
}

/// The zeros ``ByteWriter/zeros(_:)`` appends from.
private let zeroChunk = [UInt8](repeating: 0, count: 1 << 16)
