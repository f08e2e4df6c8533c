/// One entry of the persisted object-ID index (Formats/binary-store.md §7).
public struct IndexEntry: Sendable, Equatable {
    public var entityID: UInt32
    public var primaryKey: Int64
    /// A ``RecordLocation`` raw value; always a data-page location on disk.
    public var location: UInt64

    public init(entityID: UInt32, primaryKey: Int64, location: UInt64) {
        self.entityID = entityID
        self.primaryKey = primaryKey
        self.location = location
    }
}

/// Index pages and the index directory (Formats/binary-store.md §7).
public enum IndexPageCodec {
    /// Complexity: O(entries); the page's bytes are stored in place, one allocation (a
    /// checkpoint that rewrites the whole index encodes 20 bytes per object here).
    public static func encodePage(_ entries: ArraySlice<IndexEntry>) -> [UInt8] {
        let size = 4 + BinaryStoreLayout.indexEntryBytes * entries.count
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            raw.storeBytes(of: UInt32(entries.count).littleEndian, toByteOffset: 0, as: UInt32.self)
            var offset = 4
            for entry in entries {
                raw.storeBytes(of: entry.entityID.littleEndian, toByteOffset: offset, as: UInt32.self)
                raw.storeBytes(of: UInt64(bitPattern: entry.primaryKey).littleEndian, toByteOffset: offset + 4, as: UInt64.self)
                raw.storeBytes(of: entry.location.littleEndian, toByteOffset: offset + 12, as: UInt64.self)
                offset += BinaryStoreLayout.indexEntryBytes
            }
            initialized = size
        }
    }

    public static func decodePage(_ payload: [UInt8], pageOffset: UInt64) throws(BinaryFormatError) -> [IndexEntry] {
        var reader = ByteReader(payload)
        let count = Int(try reader.uint32("entry count"))
        guard count <= BinaryStoreLayout.indexEntriesPerPage, payload.count == 4 + BinaryStoreLayout.indexEntryBytes * count else {
            throw BinaryFormatError("data file offset \(pageOffset) (index page)", "entry count \(count) does not match the page's \(payload.count) bytes")
        }
        var entries: [IndexEntry] = []
        entries.reserveCapacity(count)
        for number in 0..<count {
            let entityID = try reader.uint32()
            let key = Int64(bitPattern: try reader.uint64())
            guard key >= 1, key <= BinaryStoreLayout.largestPrimaryKey else {
                throw BinaryFormatError("data file offset \(pageOffset) (index page)", "entry \(number) has primary key \(key), outside 1...2^62")
            }
            entries.append(IndexEntry(entityID: entityID, primaryKey: key, location: try reader.uint64()))
        }
        return entries
    }

    /// The directory: how many entries in all, and where each index page is.
    public static func encodeDirectory(pageOffsets: [UInt64], totalEntries: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: 12 + 8 * pageOffsets.count)
        writer.uint32(UInt32(pageOffsets.count))
        writer.uint64(totalEntries)
        for offset in pageOffsets { writer.uint64(offset) }
        return writer.bytes
    }

    public static func decodeDirectory(_ payload: [UInt8], pageOffset: UInt64) throws(BinaryFormatError) -> (pageOffsets: [UInt64], totalEntries: UInt64) {
        var reader = ByteReader(payload)
        let count = Int(try reader.uint32("page count"))
        guard payload.count == 12 + 8 * count else {
            throw BinaryFormatError("data file offset \(pageOffset) (index directory page)", "page count \(count) does not match the page's \(payload.count) bytes")
        }
        let total = try reader.uint64()
        var offsets: [UInt64] = []
        offsets.reserveCapacity(count)
        for _ in 0..<count { offsets.append(try reader.uint64()) }
        return (offsets, total)
    }
}
