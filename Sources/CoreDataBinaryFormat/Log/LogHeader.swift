import CoreDataPageCodec
import Foundation

/// The log's 64-byte header (Formats/wal.md §2).
public struct LogHeader: Sendable, Equatable {
    public var storeUUID: UUID

    public init(storeUUID: UUID) { self.storeUUID = storeUUID }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: LogLayout.headerSize)
        writer.append(LogLayout.magic)
        writer.uint32(LogLayout.formatVersion)
        writer.uint32(0)
        writer.append(uuidBytes(storeUUID))
        writer.zeros(24)
        writer.uint64(PageChecksum.xxh3(writer.bytes))
        return writer.bytes
    }

    public init(decoding bytes: [UInt8]) throws(BinaryFormatError) {
        let location = "log offset 0 (log header)"
        guard bytes.count >= LogLayout.headerSize else {
            throw BinaryFormatError(location, "the log header is cut short (\(bytes.count) bytes)")
        }
        guard Array(bytes[0..<8]) == LogLayout.magic else { throw BinaryFormatError(location, "not a binary store log: the magic is not CDBSWAL1") }
        var reader = ByteReader(bytes, from: 8, to: LogLayout.headerSize)
        let version = try reader.uint32()
        guard version == LogLayout.formatVersion else { throw BinaryFormatError(location, "log format version \(version) is not supported") }
        guard ByteReader.uint64(in: bytes, at: 56) == PageChecksum.xxh3(Array(bytes[0..<56])) else {
            throw BinaryFormatError(location, "the log header is damaged (checksum mismatch)")
        }
        _ = try reader.uint32()
        storeUUID = uuid(from: try reader.bytes(16))
    }

    /// Whether the bytes at the start of a log (its header and the first frame header after
    /// it, or fewer) are a log whose creation a crash cut short (wal.md §2, §7): no frame after
    /// the header, and a header that is zero, cut, or unreadable, since the sector being written
    /// when the power failed may hold anything. Such a log holds nothing; a writer writes its
    /// header again. A header that does not decode in front of a frame is damage.
    public static func isUnfinishedCreation(_ start: [UInt8]) -> Bool {
        if start.count > LogLayout.headerSize, !start[LogLayout.headerSize...].allSatisfy({ $0 == 0 }) { return false }
        guard start.count >= LogLayout.headerSize else { return true }
        return (try? LogHeader(decoding: Array(start[..<LogLayout.headerSize]))) == nil
    }
}
