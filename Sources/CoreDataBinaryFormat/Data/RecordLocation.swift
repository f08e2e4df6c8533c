/// Where a record is (Formats/binary-store.md §5, §7; Formats/wal.md §4): a slot of a data page,
/// or an entry of the log.
public enum RecordLocation: Sendable, Equatable, CustomStringConvertible {
    case page(offset: UInt64, slot: Int)
    case log(offset: UInt64)

    /// §7: bit 63 marks a log location.
    public static let logBit: UInt64 = 1 << 63
    /// §5: the slot takes the low 16 bits.
    public static let slotBits: UInt64 = 16

    public init(raw: UInt64) {
        if raw & Self.logBit != 0 {
            self = .log(offset: raw & ~Self.logBit)
        } else {
            self = .page(offset: raw >> Self.slotBits, slot: Int(raw & 0xFFFF))
        }
    }

    public var raw: UInt64 {
        switch self {
        case .page(let offset, let slot): return (offset << Self.slotBits) | UInt64(slot & 0xFFFF)
        case .log(let offset): return offset | Self.logBit
        }
    }

    public var description: String {
        switch self {
        case .page(let offset, let slot): return "data file offset \(offset), slot \(slot)"
        case .log(let offset): return "log offset \(offset)"
        }
    }
}
