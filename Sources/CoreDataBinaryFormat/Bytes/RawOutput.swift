/// Writes little-endian integers, varints and byte strings into memory whose size was bounded
/// beforehand, then hands the bytes to a ``ByteWriter`` in one append
/// (``ByteWriter/appendBounded(maximumCount:_:)``).
///
/// Why not ``ByteWriter`` itself: each of its appends checks the array's capacity and
/// uniqueness, a call into the runtime, and a record makes about twenty of them (a third of a
/// bulk insert's encoding). Here a field is one bounds check and a store.
///
/// Every write checks the bound and traps past it: the bound is the encoder's own arithmetic,
/// so passing it is a bug in this module, never the effect of input.
struct RawOutput {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// The bytes written so far.
    private(set) var count = 0

    /// The most bytes ``varint(_:)`` writes (Formats/binary-store.md, the paragraph before §1).
    static let maximumVarintSize = 10

    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    @inline(__always)
    private func ensure(_ size: Int) {
        precondition(size <= capacity - count, "a record's bound of \(capacity) bytes is too small: \(count) written, \(size) more")
    }

    @inline(__always)
    mutating func uint8(_ value: UInt8) {
        ensure(1)
        base[count] = value
        count += 1
    }

    @inline(__always)
    mutating func uint64(_ value: UInt64) {
        ensure(8)
        // Unaligned stores are allowed (SE-0349): fields sit at any byte offset.
        UnsafeMutableRawPointer(base + count).storeBytes(of: value.littleEndian, as: UInt64.self)
        count += 8
    }

    /// Unsigned LEB128, as ``ByteWriter/varint(_:)`` writes it.
    @inline(__always)
    mutating func varint(_ value: UInt64) {
        ensure(Self.maximumVarintSize)
        var rest = value
        while rest >= 0x80 {
            base[count] = UInt8(truncatingIfNeeded: rest) | 0x80
            count += 1
            rest >>= 7
        }
        base[count] = UInt8(rest)
        count += 1
    }

    mutating func signedVarint(_ value: Int64) {
        varint(ZigZag.encode(value))
    }

    mutating func bytes(_ raw: UnsafeRawBufferPointer) {
        ensure(raw.count)
        guard let source = raw.baseAddress, !raw.isEmpty else { return }
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: raw.count)
        count += raw.count
    }

    /// A varint length and the UTF-8 bytes: at most ``maximumStringSize(_:)`` bytes.
    mutating func string(_ value: String) {
        var copy = value
        copy.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes(UnsafeRawBufferPointer(utf8))
        }
    }

    /// The most bytes ``string(_:)`` writes for `value`.
    static func maximumStringSize(_ value: String) -> Int { maximumVarintSize + value.utf8.count }
}

extension ByteWriter {
    /// Bounds above this are staged in the writer's own array instead of on the stack:
    /// `withUnsafeTemporaryAllocation` puts at most 1,024 bytes on the stack on Linux and
    /// allocates anything larger, which would be a `malloc`, a copy and a `free` per record.
    static let largestTemporaryStaging = 1 << 10

    /// Appends what `body` writes into at most `maximumCount` bytes, or nothing when `body`
    /// returns `false`; returns `body`'s answer.
    ///
    /// A small bound is staged on the stack (`withUnsafeTemporaryAllocation`), a larger one in
    /// zeros appended to the writer and trimmed after: either way a record costs one capacity
    /// and uniqueness check here whatever its field count.
    @discardableResult
    mutating func appendBounded(maximumCount: Int, _ body: (inout RawOutput) -> Bool) -> Bool {
        guard maximumCount <= Self.largestTemporaryStaging else { return appendInPlace(maximumCount: maximumCount, body) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(maximumCount, 1)) { buffer in
            guard let base = buffer.baseAddress else { return false }
            var output = RawOutput(base: base, capacity: buffer.count)
            guard body(&output) else { return false }
            append(UnsafeBufferPointer(rebasing: buffer[..<output.count]))
            return true
        }
    }

    /// ``appendBounded(maximumCount:_:)`` for large bounds: zeros appended, written over, and
    /// the unused tail (or everything, when `body` fails) removed.
    private mutating func appendInPlace(maximumCount: Int, _ body: (inout RawOutput) -> Bool) -> Bool {
        let start = bytes.count
        zeros(maximumCount)
        let (succeeded, written) = bytes.withUnsafeMutableBufferPointer { buffer -> (Bool, Int) in
            guard let base = buffer.baseAddress else { return (false, 0) }
            var output = RawOutput(base: base + start, capacity: maximumCount)
            return (body(&output), output.count)
        }
        bytes.removeSubrange((succeeded ? start + written : start)...)
        return succeeded
    }
}
