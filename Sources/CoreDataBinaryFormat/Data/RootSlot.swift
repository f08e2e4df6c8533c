import CoreDataPageCodec

/// One of the two root slots (Formats/binary-store.md §3): where the current state is.
public struct RootSlot: Sendable, Equatable {
    public var generation: UInt64
    /// The offset just past the last page of this generation.
    public var dataEnd: UInt64
    /// The index directory page, 0 when the store holds no object.
    public var indexDirectoryOffset: UInt64
    public var catalogOffset: UInt64
    public var metadataOffset: UInt64
    /// The salt of this generation's log frames (Formats/wal.md §3).
    public var logSalt: UInt64
    public var objectCount: UInt64
    /// The secondary-index directory page (§7.2), 0 when none; always 0 below format version 3.
    public var secondaryIndexDirectoryOffset: UInt64
    /// The page-bounds directory page (§7.3), 0 when none; always 0 below format version 4.
    public var pageBoundsDirectoryOffset: UInt64

    public init(
        generation: UInt64, dataEnd: UInt64, indexDirectoryOffset: UInt64, catalogOffset: UInt64, metadataOffset: UInt64, logSalt: UInt64,
        objectCount: UInt64, secondaryIndexDirectoryOffset: UInt64 = 0, pageBoundsDirectoryOffset: UInt64 = 0
    ) {
        self.generation = generation
        self.dataEnd = dataEnd
        self.indexDirectoryOffset = indexDirectoryOffset
        self.catalogOffset = catalogOffset
        self.metadataOffset = metadataOffset
        self.logSalt = logSalt
        self.objectCount = objectCount
        self.secondaryIndexDirectoryOffset = secondaryIndexDirectoryOffset
        self.pageBoundsDirectoryOffset = pageBoundsDirectoryOffset
    }

    /// The 128 slot bytes, checksum included, of a file of `formatVersion` (the file header's:
    /// a store keeps its version until it is rewritten whole, §2). Below version 3 the
    /// secondary-index directory's bytes stay zero, below version 4 the page-bounds directory's.
    public func encoded(formatVersion: UInt32 = BinaryStoreLayout.formatVersion) -> [UInt8] {
        var writer = ByteWriter(capacity: BinaryStoreLayout.rootSlotSize)
        writer.uint32(BinaryStoreLayout.rootSlotMagic)
        writer.uint32(formatVersion)
        for field in [generation, dataEnd, indexDirectoryOffset, catalogOffset, metadataOffset, logSalt, objectCount] {
            writer.uint64(field)
        }
        writer.uint64(formatVersion >= SecondaryIndexLayout.firstFormatVersion ? secondaryIndexDirectoryOffset : 0)
        writer.uint64(formatVersion >= PageBoundsLayout.firstFormatVersion ? pageBoundsDirectoryOffset : 0)
        writer.zeros(40)
        writer.uint64(PageChecksum.xxh3(writer.bytes))
        return writer.bytes
    }

    /// What a slot's bytes hold.
    public enum Decoded: Sendable, Equatable {
        /// Never written: all zero.
        case unused
        case valid(RootSlot)
        /// Neither valid nor zero; the string says why.
        case damaged(String)
    }

    /// Decodes one slot's 128 bytes.
    public static func decode(_ bytes: [UInt8]) -> Decoded {
        guard bytes.count == BinaryStoreLayout.rootSlotSize else { return .damaged("the slot is cut short at \(bytes.count) bytes") }
        if bytes.allSatisfy({ $0 == 0 }) { return .unused }
        var reader = ByteReader(bytes)
        do {
            guard try reader.uint32() == BinaryStoreLayout.rootSlotMagic else { return .damaged("the slot's magic is wrong") }
            let version = try reader.uint32()
            guard BinaryStoreLayout.readableFormatVersions.contains(version) else { return .damaged("the slot has format version \(version)") }
            let checksum = ByteReader.uint64(in: bytes, at: 120)
            guard checksum == PageChecksum.xxh3(Array(bytes[0..<120])) else { return .damaged("the slot's checksum does not match") }
            var slot = RootSlot(
                generation: try reader.uint64(), dataEnd: try reader.uint64(), indexDirectoryOffset: try reader.uint64(),
                catalogOffset: try reader.uint64(), metadataOffset: try reader.uint64(), logSalt: try reader.uint64(),
                objectCount: try reader.uint64())
            // Reserved below version 3 (§3): whatever is there names nothing.
            let secondary = try reader.uint64()
            slot.secondaryIndexDirectoryOffset = version >= SecondaryIndexLayout.firstFormatVersion ? secondary : 0
            // Reserved below version 4 (§3).
            let bounds = try reader.uint64()
            slot.pageBoundsDirectoryOffset = version >= PageBoundsLayout.firstFormatVersion ? bounds : 0
            guard slot.generation <= BinaryStoreLayout.largestCounter else { return .damaged("the slot's generation \(slot.generation) is above 2^62") }
            return .valid(slot)
        } catch {
            return .damaged(error.problem)
        }
    }
}

extension RootSlot {
    /// The valid root slot with the highest generation (§3) and its slot number, read from
    /// `bytes`, which hold the file from offset `base` on and must cover both slots; `nil` when
    /// neither is valid or the bytes fall short.
    public static func newest(in bytes: [UInt8], base: Int = 0) -> (root: RootSlot, slot: Int)? {
        var best: (root: RootSlot, slot: Int)?
        for (slot, offset) in BinaryStoreLayout.rootSlotOffsets.enumerated() {
            let start = offset - base
            guard start >= 0, start + BinaryStoreLayout.rootSlotSize <= bytes.count else { return nil }
            if case .valid(let root) = decode(Array(bytes[start..<(start + BinaryStoreLayout.rootSlotSize)])),
               root.generation > (best?.root.generation ?? 0) {
                best = (root, slot)
            }
        }
        return best
    }
}
