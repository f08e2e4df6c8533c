// Fuzz target: arbitrary bytes as the start of a binary store's data file: the 64-byte file
// header and the two 128-byte root slots at 512 and 1,024. Each is decoded as given, then again
// with its checksum rewritten so the fields behind the check are reached. Decoders must throw or
// report damage; any crash, hang or sanitizer report is a bug.
import CoreDataBinaryFormat
import FuzzBinarySupport

/// The body of the `FuzzBinaryHeader` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzBinaryHeader {
    /// Decodes `bytes` as a file header and root slots, as given and with checksums rewritten.
    ///
    /// Traps (`precondition`) when what decodes does not survive encode → decode.
    public static func run(_ raw: [UInt8]) {
        var fixed = raw
        ChecksumFixer.fixHeader(&fixed)
        for slot in BinaryStoreLayout.rootSlotOffsets { ChecksumFixer.fixRootSlot(&fixed, at: slot) }
        for bytes in [raw, fixed] {
            if let header = try? FileHeader(decoding: bytes) {
                let again = try? FileHeader(decoding: header.encoded())
                precondition(again == header, "file header does not round-trip: \(header)")
            }
            // A slot is decoded from exactly its 128 bytes, or from what is there when the input is short.
            for offset in BinaryStoreLayout.rootSlotOffsets + [0] where offset < bytes.count {
                let slice = Array(bytes[offset..<min(bytes.count, offset + BinaryStoreLayout.rootSlotSize)])
                if case .valid(let slot) = RootSlot.decode(slice) {
                    precondition(RootSlot.decode(slot.encoded()) == .valid(slot), "root slot does not round-trip: \(slot)")
                }
            }
        }
    }
}
