/// An exact set of primary keys that answers membership with a bit test when the keys lie close
/// together (as keys handed out in order do), else with a hash lookup: a checkpoint asks it once
/// per index entry.
struct KeyFilter: Sendable {
    private let low: Int64
    private let high: Int64
    private let bits: [UInt64]
    private let others: Set<Int64>

    init<Keys: Collection>(_ keys: Keys) where Keys.Element == Int64 {
        guard let low = keys.min(), let high = keys.max() else {
            (self.low, self.high, bits, others) = (1, 0, [], [])
            return
        }
        self.low = low
        self.high = high
        // A bit per key of the span, when that is at most 64 bits per key (or 1 MiB).
        let span = UInt64(bitPattern: high &- low)
        if span < UInt64(max(8 << 20, keys.count * 64)) {
            var bits = Array(repeating: UInt64(0), count: Int(span >> 6) + 1)
            for key in keys {
                let bit = UInt64(bitPattern: key &- low)
                bits[Int(bit >> 6)] |= 1 << (bit & 63)
            }
            self.bits = bits
            others = []
        } else {
            bits = []
            others = Set(keys)
        }
    }

    /// Whether the filter holds no key.
    var isEmpty: Bool { low > high }

    @inline(__always)
    func contains(_ key: Int64) -> Bool {
        guard key >= low, key <= high else { return false }
        guard !bits.isEmpty else { return others.contains(key) }
        let bit = UInt64(bitPattern: key &- low)
        return bits[Int(bit >> 6)] & (1 << (bit & 63)) != 0
    }
}
