import Foundation

/// The check that a run of bytes is all zero, as a preallocated log tail must be (Formats/wal.md
/// §5, §7).
public enum ZeroBytes {
    /// Whether every byte of `bytes` is zero; `true` when there are none.
    ///
    /// Opens and verifies check up to a mebibyte of preallocated log tail, so this is one
    /// `memcmp` of the bytes against themselves shifted by one (all equal to the first, and the
    /// first zero) rather than a closure per byte, which was many times slower.
    ///
    /// - Complexity: O(*n*), at `memcmp`'s speed.
    public static func areAll(_ bytes: some ContiguousBytes) -> Bool {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return true }
            return raw[0] == 0 && (raw.count == 1 || memcmp(base, base + 1, raw.count - 1) == 0)
        }
    }
}
