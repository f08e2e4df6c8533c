import CoreDataPageCodec
import Foundation

/// The data file's header (Formats/binary-store.md §2): written once at creation.
public struct FileHeader: Sendable, Equatable {
    public var formatVersion: UInt32
    public var pageSize: UInt32
    public var storeUUID: UUID
    /// Milliseconds since 1970.
    public var created: UInt64

    public init(storeUUID: UUID, created: UInt64, formatVersion: UInt32 = BinaryStoreLayout.formatVersion, pageSize: UInt32 = UInt32(BinaryStoreLayout.targetPageSize)) {
        self.formatVersion = formatVersion
        self.pageSize = pageSize
        self.storeUUID = storeUUID
        self.created = created
    }

    /// The 64 header bytes, checksum included.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: BinaryStoreLayout.headerSize)
        writer.append(BinaryStoreLayout.magic)
        writer.uint32(formatVersion)
        writer.uint32(pageSize)
        writer.append(uuidBytes(storeUUID))
        writer.uint64(created)
        writer.zeros(16)
        writer.uint64(PageChecksum.xxh3(writer.bytes))
        return writer.bytes
    }

    /// Decodes and checks the first 64 bytes of a data file.
    ///
    /// - Throws: ``BinaryFormatError`` saying "not a binary store" for a wrong magic, naming a
    ///   different format version, or a damaged header.
    public init(decoding bytes: [UInt8]) throws(BinaryFormatError) {
        let location = "data file offset 0 (file header)"
        guard bytes.count >= BinaryStoreLayout.headerSize else {
            throw BinaryFormatError(location, "not a binary store: the file has \(bytes.count) bytes, fewer than a header")
        }
        guard Array(bytes[0..<8]) == BinaryStoreLayout.magic else {
            throw BinaryFormatError(location, "not a binary store: the magic is not CDBSTOR1")
        }
        var reader = ByteReader(bytes, from: 8, to: BinaryStoreLayout.headerSize)
        let version = try reader.uint32()
        guard BinaryStoreLayout.readableFormatVersions.contains(version) else {
            let readable = BinaryStoreLayout.readableFormatVersions
            throw BinaryFormatError(location, "format version \(version) is not supported (this build reads versions \(readable.lowerBound) to \(readable.upperBound))")
        }
        let stored = ByteReader.uint64(in: bytes, at: 56)
        guard stored == PageChecksum.xxh3(Array(bytes[0..<56])) else {
            throw BinaryFormatError(location, "the file header is damaged (checksum mismatch)")
        }
        formatVersion = version
        pageSize = try reader.uint32()
        storeUUID = uuid(from: try reader.bytes(16))
        created = try reader.uint64()
        guard pageSize >= 4_096, pageSize <= UInt32(BinaryStoreLayout.maximumDecodedPageSize) else {
            throw BinaryFormatError(location, "page size \(pageSize) is out of range")
        }
    }
}

extension ByteReader {
    /// The little-endian 64-bit integer at `offset` of `bytes`; the caller has checked the length.
    static func uint64(in bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        return value
    }
}

func uuidBytes(_ uuid: UUID) -> [UInt8] {
    let u = uuid.uuid
    return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
}

func uuid(from raw: ArraySlice<UInt8>) -> UUID {
    var b = Array(raw)
    while b.count < 16 { b.append(0) }
    return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
}
