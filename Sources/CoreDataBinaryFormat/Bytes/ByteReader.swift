/// Reads little-endian integers, varints and byte strings from a byte array, checking every
/// length against the end first, so damaged input throws instead of trapping.
public struct ByteReader {
    public let bytes: [UInt8]
    /// The next byte to read.
    public private(set) var position: Int
    /// One past the last byte this reader may read.
    public let end: Int

    public init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        let limit = min(end ?? bytes.count, bytes.count)
        self.end = max(0, limit)
        self.position = min(max(0, start), self.end)
    }

    /// Bytes left to read.
    public var remaining: Int { end - position }
    public var isAtEnd: Bool { position >= end }

    private func need(_ count: Int, _ what: String) throws(BinaryFormatError) {
        guard count >= 0, count <= remaining else {
            throw BinaryFormatError("byte \(position)", "\(what) needs \(count) bytes but only \(remaining) remain")
        }
    }

    public mutating func uint8(_ what: String = "byte") throws(BinaryFormatError) -> UInt8 {
        try need(1, what)
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func uint16(_ what: String = "16-bit integer") throws(BinaryFormatError) -> UInt16 {
        try fixed(UInt16.self, what)
    }

    public mutating func uint32(_ what: String = "32-bit integer") throws(BinaryFormatError) -> UInt32 {
        try fixed(UInt32.self, what)
    }

    public mutating func uint64(_ what: String = "64-bit integer") throws(BinaryFormatError) -> UInt64 {
        try fixed(UInt64.self, what)
    }

    private mutating func fixed<T: FixedWidthInteger>(_: T.Type, _ what: String) throws(BinaryFormatError) -> T {
        try need(MemoryLayout<T>.size, what)
        // `need` checked the range, so one unaligned load replaces a bounds check per byte
        // (every field of every record read passes here).
        let start = position
        position += MemoryLayout<T>.size
        return T(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: start, as: T.self) })
    }

    /// An unsigned LEB128 varint of at most 10 bytes that fits 64 bits.
    public mutating func varint(_ what: String = "varint") throws(BinaryFormatError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        let start = position
        while true {
            guard position < end else {
                throw BinaryFormatError("byte \(start)", "\(what) runs past the end")
            }
            let byte = bytes[position]
            position += 1
            let payload = UInt64(byte & 0x7F)
            if shift == 63, payload > 1 {
                throw BinaryFormatError("byte \(start)", "\(what) overflows 64 bits")
            }
            value |= payload << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            if shift > 63 { throw BinaryFormatError("byte \(start)", "\(what) is longer than 10 bytes") }
        }
    }

    /// A varint that must fit `Int` and lie in `range`.
    public mutating func count(_ what: String, atMost limit: Int) throws(BinaryFormatError) -> Int {
        let start = position
        let raw = try varint(what)
        guard raw <= UInt64(limit) else {
            throw BinaryFormatError("byte \(start)", "\(what) \(raw) is larger than \(limit)")
        }
        return Int(raw)
    }

    /// A zigzag varint.
    public mutating func signedVarint(_ what: String = "integer") throws(BinaryFormatError) -> Int64 {
        let raw = try varint(what)
        return ZigZag.decode(raw)
    }

    /// `count` raw bytes.
    public mutating func bytes(_ count: Int, _ what: String = "bytes") throws(BinaryFormatError) -> ArraySlice<UInt8> {
        try need(count, what)
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    /// A varint length followed by that many bytes of UTF-8.
    public mutating func string(_ what: String = "string") throws(BinaryFormatError) -> String {
        let start = position
        // The label is built only for an error: interpolating it on every call cost more than
        // decoding the string.
        let raw: UInt64
        do {
            raw = try varint("string length")
        } catch {
            // Read again with the full label, so the error names the field as it always did.
            position = start
            raw = try varint("\(what) length")
        }
        guard raw <= UInt64(remaining) else {
            throw BinaryFormatError("byte \(start)", "\(what) length \(raw) is larger than \(remaining)")
        }
        let length = Int(raw)
        let from = position
        position += length
        // Over the contiguous bytes: ASCII (most names and text) needs no validation; anything
        // else is validated exactly. (`String(validating:)` over an ArraySlice ran unspecialized.)
        let string: String? = bytes.withUnsafeBufferPointer { buffer in
            let slice = UnsafeBufferPointer(rebasing: buffer[from..<(from + length)])
            var high: UInt8 = 0
            for byte in slice { high |= byte }
            if high < 0x80 { return String(decoding: slice, as: UTF8.self) }
            return String(validating: slice, as: UTF8.self)
        }
        guard let string else {
            throw BinaryFormatError("byte \(start)", "\(what) is not valid UTF-8")
        }
        return string
    }

    public mutating func skip(_ count: Int, _ what: String = "bytes") throws(BinaryFormatError) {
        try need(count, what)
        position += count
    }
}
