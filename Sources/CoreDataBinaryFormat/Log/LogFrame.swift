import CoreDataPageCodec

/// A frame's 32-byte header (Formats/wal.md §3).
public struct LogFrameHeader: Sendable, Equatable {
    public var flags: UInt8
    public var payloadLength: Int
    public var salt: UInt64
    public var sequence: UInt64

    public var isCommit: Bool { flags & LogLayout.commitFlag != 0 }
    /// Whether this is a sync marker (Formats/wal.md §3): an empty frame, which a writer adds
    /// only when every frame before it is synced.
    public var isSyncMarker: Bool { payloadLength == 0 && !isCommit }
    /// Header, payload and trailer.
    public var totalLength: Int { LogLayout.frameHeaderSize + payloadLength + LogLayout.frameTrailerSize }

    /// Decodes a frame header; `nil` when the bytes cannot start a frame (no magic, reserved
    /// bits set, or a payload larger than any entry).
    public init?(decoding bytes: [UInt8]) {
        guard bytes.count >= LogLayout.frameHeaderSize else { return nil }
        var reader = ByteReader(bytes, to: LogLayout.frameHeaderSize)
        guard let magic = try? reader.uint32(), magic == LogLayout.frameMagic,
              let flags = try? reader.uint8(), flags & ~LogLayout.commitFlag == 0,
              let reserved = try? reader.bytes(3), reserved.allSatisfy({ $0 == 0 }),
              let length = try? reader.uint32(), Int(length) <= LogLayout.maximumEntrySize + LogLayout.maximumFramePayload,
              let reserved2 = try? reader.uint32(), reserved2 == 0,
              let salt = try? reader.uint64(), let sequence = try? reader.uint64()
        else { return nil }
        self.flags = flags
        self.payloadLength = Int(length)
        self.salt = salt
        self.sequence = sequence
    }

    init(flags: UInt8, payloadLength: Int, salt: UInt64, sequence: UInt64) {
        self.flags = flags
        self.payloadLength = payloadLength
        self.salt = salt
        self.sequence = sequence
    }
}

/// Encodes frames and checks their chained checksums (Formats/wal.md §3). No I/O.
public enum LogFrameCodec {
    /// Appends one frame to `output`; returns its checksum, the seed of the next frame.
    @discardableResult
    public static func append(payload: [UInt8], commit: Bool, salt: UInt64, sequence: UInt64, previousChecksum: UInt64, to output: inout [UInt8]) -> UInt64 {
        var writer = ByteWriter(capacity: LogLayout.frameHeaderSize)
        writer.uint32(LogLayout.frameMagic)
        writer.uint8(commit ? LogLayout.commitFlag : 0)
        writer.zeros(3)
        writer.uint32(UInt32(payload.count))
        writer.uint32(0)
        writer.uint64(salt)
        writer.uint64(sequence)
        let start = output.count
        output.append(contentsOf: writer.bytes)
        output.append(contentsOf: payload)
        let checksum = output.withUnsafeBytes { raw in
            PageChecksum.xxh3(UnsafeRawBufferPointer(rebasing: raw[start..<output.count]), seed: previousChecksum)
        }
        var trailer = ByteWriter(capacity: 8)
        trailer.uint64(checksum)
        output.append(contentsOf: trailer.bytes)
        return checksum
    }

    /// The checksum stored in a whole frame's trailer.
    public static func storedChecksum(of frame: [UInt8]) -> UInt64? {
        guard frame.count >= LogLayout.frameHeaderSize + LogLayout.frameTrailerSize else { return nil }
        return ByteReader.uint64(in: frame, at: frame.count - LogLayout.frameTrailerSize)
    }

    /// Whether a whole frame (header, payload, trailer) validates when chained from `seed`.
    public static func isValid(_ frame: [UInt8], seed: UInt64) -> Bool {
        guard let stored = storedChecksum(of: frame) else { return false }
        let actual = frame.withUnsafeBytes { raw in
            PageChecksum.xxh3(UnsafeRawBufferPointer(rebasing: raw[0..<(frame.count - LogLayout.frameTrailerSize)]), seed: seed)
        }
        return actual == stored
    }
}
