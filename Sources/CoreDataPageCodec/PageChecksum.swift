import CXXHash

/// XXH3-64 checksums of pages and records (libxxhash).
public enum PageChecksum {
    /// The XXH3 64-bit hash of `bytes` with `seed`.
    ///
    /// Complexity: O(n), about 230 ns for a 4 KiB page on this project's machines.
    public static func xxh3(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        XXH3_64bits_withSeed(bytes.baseAddress, bytes.count, seed)
    }

    /// The XXH3 64-bit hash of `bytes` with `seed`.
    public static func xxh3(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { xxh3($0, seed: seed) }
    }
}
