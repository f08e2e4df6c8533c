/// The zigzag mapping of signed integers before varint encoding (Formats/binary-store.md, the
/// paragraph before §1): `n` becomes `(n << 1) ^ (n >> 63)`, so small magnitudes of either sign
/// take few bytes.
enum ZigZag {
    @inline(__always)
    static func encode(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    @inline(__always)
    static func decode(_ raw: UInt64) -> Int64 { Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))) }
}
