import CLZ4

/// LZ4 block compression of page payloads (liblz4). Pure byte transforms: no I/O, so the CLI and
/// fuzz targets can decode pages with no store open.
public enum PageCompression {
    /// Why a compressed block could not be decoded.
    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        /// The block is not valid LZ4 or does not decode to the expected length.
        case corrupt(expectedLength: Int)
        /// A length is negative or beyond what LZ4 accepts (`LZ4_MAX_INPUT_SIZE`).
        case lengthOutOfRange(Int)

        public var description: String {
            switch self {
            case .corrupt(let n): return "LZ4 block is corrupt: it does not decode to \(n) bytes"
            case .lengthOutOfRange(let n): return "length \(n) is outside what LZ4 accepts (0...\(maximumInputLength))"
            }
        }
    }

    /// The largest input LZ4 compresses (`LZ4_MAX_INPUT_SIZE`, about 2 GB).
    public static let maximumInputLength = Int(LZ4_MAX_INPUT_SIZE)

    /// Compresses `input` into one LZ4 block.
    ///
    /// - Throws: ``Error/lengthOutOfRange(_:)`` for input longer than ``maximumInputLength``.
    /// Complexity: O(n), about 800 MB/s on this project's machines.
    public static func compress(_ input: [UInt8]) throws(Error) -> [UInt8] {
        guard input.count <= maximumInputLength else { throw .lengthOutOfRange(input.count) }
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        // Uninitialised: LZ4 writes what it returns, and zero-filling the bound first cost as much
        // as a small page's compression.
        return [UInt8](unsafeUninitializedCapacity: bound) { output, initialized in
            let written = input.withUnsafeBufferPointer { source in
                source.withMemoryRebound(to: CChar.self) { src in
                    output.withMemoryRebound(to: CChar.self) { dst in
                        LZ4_compress_default(src.baseAddress, dst.baseAddress, Int32(input.count), Int32(bound))
                    }
                }
            }
            // LZ4 cannot fail when the output has compressBound bytes.
            initialized = Int(max(0, written))
        }
    }

    /// Decompresses one LZ4 block that must decode to exactly `length` bytes.
    ///
    /// Safe on any input: a damaged block throws, it never reads or writes out of bounds.
    /// - Throws: ``Error/corrupt(expectedLength:)`` or ``Error/lengthOutOfRange(_:)``.
    public static func decompress(_ block: [UInt8], length: Int) throws(Error) -> [UInt8] {
        try block.withUnsafeBytes { source in Result { () throws(Error) in try decompress(source, length: length) } }.get()
    }

    /// ``decompress(_:length:)`` of a block read in place, e.g. the stored bytes of a page
    /// still inside the buffer its header was read into (no copy of them first).
    public static func decompress(_ block: UnsafeRawBufferPointer, length: Int) throws(Error) -> [UInt8] {
        guard length >= 0, length <= maximumInputLength else { throw .lengthOutOfRange(length) }
        guard block.count <= Int(Int32.max) else { throw .lengthOutOfRange(block.count) }
        // Uninitialised, as for compression: LZ4 writes the bytes it reports, and only those are
        // kept; a block that decodes to any other length is refused below.
        var decoded: Int32 = -1
        let output = [UInt8](unsafeUninitializedCapacity: length) { target, initialized in
            decoded = target.withMemoryRebound(to: CChar.self) { dst in
                LZ4_decompress_safe(block.baseAddress?.assumingMemoryBound(to: CChar.self), dst.baseAddress, Int32(block.count), Int32(length))
            }
            initialized = Int(max(0, min(decoded, Int32(length))))
        }
        guard decoded == Int32(length) else { throw .corrupt(expectedLength: length) }
        return output
    }
}
