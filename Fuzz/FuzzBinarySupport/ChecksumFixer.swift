// Mutated bytes almost never get past the format's XXH3 checks; rewriting the checksums first lets
// the fuzzers reach the decoders behind them.
import CoreDataBinaryFormat
import CoreDataPageCodec

/// Rewrites the checksums of damaged bytes so that decoders past the checks see them.
public enum ChecksumFixer {
    static func put(_ value: UInt64, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }

    static func get(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        return value
    }

    /// The 64-byte file or log header's checksum at byte 56.
    public static func fixHeader(_ bytes: inout [UInt8]) {
        guard bytes.count >= 64 else { return }
        put(PageChecksum.xxh3(Array(bytes[0..<56])), into: &bytes, at: 56)
    }

    /// A 128-byte root slot's checksum at byte 120 of the slot at `offset`.
    public static func fixRootSlot(_ bytes: inout [UInt8], at offset: Int) {
        guard bytes.count >= offset + 128 else { return }
        put(PageChecksum.xxh3(Array(bytes[offset..<(offset + 120)])), into: &bytes, at: offset + 120)
    }

    /// The page at `offset`: its checksum, when its header decodes and it fits; returns its length.
    @discardableResult
    public static func fixPage(_ bytes: inout [UInt8], at offset: Int) -> Int? {
        guard offset >= 0, bytes.count - offset >= 32 else { return nil }
        guard let header = try? PageHeader(decoding: Array(bytes[offset..<(offset + 32)]), at: UInt64(offset)) else { return nil }
        guard header.totalLength <= bytes.count - offset else { return nil }
        let seed = PageChecksum.xxh3(Array(bytes[offset..<(offset + 24)]))
        let checksum = PageChecksum.xxh3(Array(bytes[(offset + 32)..<(offset + header.totalLength)]), seed: seed)
        put(checksum, into: &bytes, at: offset + 24)
        return header.totalLength
    }

    /// A whole data file image: header, both root slots and every page from the first on.
    public static func fixDataFile(_ bytes: inout [UInt8]) {
        fixHeader(&bytes)
        for slot in BinaryStoreLayout.rootSlotOffsets where !bytes[min(slot, bytes.count)..<min(slot + 128, bytes.count)].allSatisfy({ $0 == 0 }) {
            fixRootSlot(&bytes, at: slot)
        }
        var offset = BinaryStoreLayout.firstPageOffset
        while let length = fixPage(&bytes, at: offset) { offset += length }
    }

    /// Entry body checksums in a frame payload `bytes[start..<end]`, as far as they parse.
    public static func fixEntries(_ bytes: inout [UInt8], from start: Int, to end: Int) {
        var position = start
        while end - position >= 9 {
            var length = 0
            for index in 0..<4 { length |= Int(bytes[position + 1 + index]) << (8 * index) }
            guard length <= end - position - 9 else { return }
            let body = (position + 9)..<(position + 9 + length)
            let checksum = LogEntryCodec.bodyChecksum(bytes[body])
            for index in 0..<4 { bytes[position + 5 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(index))) }
            position = body.upperBound
        }
    }

    /// A whole log image: header, then each frame's entries and chained trailer, seeded by the
    /// first frame's salt, as far as frames parse.
    public static func fixLog(_ bytes: inout [UInt8]) {
        fixHeader(&bytes)
        var offset = LogLayout.firstFrameOffset
        var chain: UInt64?
        while bytes.count - offset >= LogLayout.frameHeaderSize {
            guard let header = LogFrameHeader(decoding: Array(bytes[offset..<(offset + LogLayout.frameHeaderSize)])),
                  header.totalLength <= bytes.count - offset else { return }
            let payloadStart = offset + LogLayout.frameHeaderSize
            fixEntries(&bytes, from: payloadStart, to: payloadStart + header.payloadLength)
            let seed = chain ?? header.salt
            let end = payloadStart + header.payloadLength
            let checksum = PageChecksum.xxh3(Array(bytes[offset..<end]), seed: seed)
            put(checksum, into: &bytes, at: end)
            chain = checksum
            offset = end + LogLayout.frameTrailerSize
        }
    }
}
