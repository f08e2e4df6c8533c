import CoreDataPageCodec

/// What a page holds (Formats/binary-store.md §4).
public enum PageKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case data = 1
    case index = 2
    case catalog = 3
    case metadata = 4
    case indexDirectory = 5
    /// §7.2, format version 3.
    case secondaryIndex = 6
    /// §7.2, format version 3.
    case secondaryIndexDirectory = 7
    /// §7.3, format version 4.
    case pageBounds = 8
    /// §7.3, format version 4.
    case pageBoundsDirectory = 9

    public var description: String {
        switch self {
        case .data: return "data page"
        case .index: return "index page"
        case .catalog: return "catalog page"
        case .metadata: return "metadata page"
        case .indexDirectory: return "index directory page"
        case .secondaryIndex: return "secondary-index page"
        case .secondaryIndexDirectory: return "secondary-index directory page"
        case .pageBounds: return "page-bounds page"
        case .pageBoundsDirectory: return "page-bounds directory page"
        }
    }
}

/// A page's 32-byte header (Formats/binary-store.md §4).
public struct PageHeader: Sendable, Equatable {
    public var kind: PageKind
    /// 0 stored as is, 1 LZ4.
    public var codec: UInt8
    public var storedLength: Int
    public var decodedLength: Int
    public var generation: UInt64
    public var checksum: UInt64

    /// The page's size in the file, header included.
    public var totalLength: Int { BinaryStoreLayout.pageHeaderSize + storedLength }

    /// Decodes and range-checks a page header read at `offset` (used in error locations).
    public init(decoding bytes: [UInt8], at offset: UInt64) throws(BinaryFormatError) {
        // Built only for an error: every page read decodes a header.
        var location: String { "data file offset \(offset)" }
        guard bytes.count >= BinaryStoreLayout.pageHeaderSize else {
            throw BinaryFormatError(location, "page header cut short (\(bytes.count) of \(BinaryStoreLayout.pageHeaderSize) bytes)")
        }
        var reader = ByteReader(bytes, to: BinaryStoreLayout.pageHeaderSize)
        guard try reader.uint32() == BinaryStoreLayout.pageMagic else {
            throw BinaryFormatError(location, "no page starts here (wrong page magic)")
        }
        let rawKind = try reader.uint8()
        guard let kind = PageKind(rawValue: rawKind) else { throw BinaryFormatError(location, "unknown page kind \(rawKind)") }
        let codec = try reader.uint8()
        guard codec <= 1 else { throw BinaryFormatError(location, "unknown page codec \(codec)") }
        _ = try reader.uint16()
        let stored = Int(try reader.uint32())
        let decoded = Int(try reader.uint32())
        guard decoded <= BinaryStoreLayout.maximumDecodedPageSize else {
            throw BinaryFormatError(location, "decoded length \(decoded) is larger than 1 GiB")
        }
        guard codec == 1 || stored == decoded else {
            throw BinaryFormatError(location, "an uncompressed page's stored length \(stored) differs from its decoded length \(decoded)")
        }
        // LZ4 turns each stored byte into at most 255 decoded ones; a larger claim is damage, and
        // believing it would allocate up to 1 GiB for a page of a few bytes.
        guard codec == 0 || decoded <= stored * 255 + 64 else {
            throw BinaryFormatError(location, "decoded length \(decoded) is more than LZ4 can make of \(stored) stored bytes")
        }
        self.kind = kind
        self.codec = codec
        self.storedLength = stored
        self.decodedLength = decoded
        self.generation = try reader.uint64()
        self.checksum = try reader.uint64()
    }

    init(kind: PageKind, codec: UInt8, storedLength: Int, decodedLength: Int, generation: UInt64) {
        self.kind = kind
        self.codec = codec
        self.storedLength = storedLength
        self.decodedLength = decodedLength
        self.generation = generation
        self.checksum = 0
    }

    fileprivate func firstBytes() -> [UInt8] {
        var writer = ByteWriter(capacity: BinaryStoreLayout.pageHeaderSize)
        writer.uint32(BinaryStoreLayout.pageMagic)
        writer.uint8(kind.rawValue)
        writer.uint8(codec)
        writer.uint16(0)
        writer.uint32(UInt32(storedLength))
        writer.uint32(UInt32(decodedLength))
        writer.uint64(generation)
        return writer.bytes
    }
}

/// Encodes and decodes whole pages: header, LZ4, checksum. No I/O.
public enum PageCodec {
    /// A page holding `payload`, compressed when that makes it smaller.
    ///
    /// - Precondition: the payload is at most 1 GiB (the engine never builds a larger one).
    public static func encode(kind: PageKind, payload: [UInt8], generation: UInt64) -> [UInt8] {
        precondition(payload.count <= BinaryStoreLayout.maximumDecodedPageSize, "a page payload of \(payload.count) bytes exceeds 1 GiB")
        let compressed = (try? PageCompression.compress(payload)) ?? payload
        let useLZ4 = compressed.count < payload.count
        let stored = useLZ4 ? compressed : payload
        let header = PageHeader(kind: kind, codec: useLZ4 ? 1 : 0, storedLength: stored.count, decodedLength: payload.count, generation: generation)
        var bytes = header.firstBytes()
        bytes.reserveCapacity(BinaryStoreLayout.pageHeaderSize + stored.count)
        let checksum = stored.withUnsafeBytes { PageChecksum.xxh3($0, seed: PageChecksum.xxh3(bytes)) }
        var writer = ByteWriter()
        writer.bytes = bytes
        writer.uint64(checksum)
        writer.append(stored)
        return writer.bytes
    }

    /// Checks the checksum of a page's stored bytes and returns its decoded payload.
    ///
    /// - Parameters:
    ///   - page: the page's bytes, header first, at least ``PageHeader/totalLength`` long.
    ///   - offset: the page's file offset, for error locations.
    public static func decodePayload(_ header: PageHeader, page: [UInt8], at offset: UInt64) throws(BinaryFormatError) -> [UInt8] {
        // Built only for an error: a point lookup that misses the cache decodes a page.
        var location: String { "data file offset \(offset) (\(header.kind))" }
        guard page.count >= header.totalLength else {
            throw BinaryFormatError(location, "page cut short: \(page.count) of \(header.totalLength) bytes")
        }
        // Hashed and decompressed where they lie in the page's buffer, with no copy of them.
        return try page.withUnsafeBytes { raw in Result { () throws(BinaryFormatError) -> [UInt8] in
            let seed = PageChecksum.xxh3(UnsafeRawBufferPointer(rebasing: raw[0..<24]))
            let stored = UnsafeRawBufferPointer(rebasing: raw[BinaryStoreLayout.pageHeaderSize..<header.totalLength])
            guard PageChecksum.xxh3(stored, seed: seed) == header.checksum else {
                throw BinaryFormatError(location, "checksum mismatch: the page is damaged")
            }
            guard header.codec == 1 else { return Array(stored) }
            do {
                return try PageCompression.decompress(stored, length: header.decodedLength)
            } catch {
                throw BinaryFormatError(location, "\(error)")
            }
        } }.get()
    }
}
