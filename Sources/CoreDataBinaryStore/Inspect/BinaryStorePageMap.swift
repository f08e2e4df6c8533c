import CoreDataBinaryFormat
import CoreDataStorage

/// One page of the data file as the CLI's `pages` shows it (Formats/binary-store.md §4).
public struct BinaryStorePageSummary: Sendable, Equatable {
    /// The page's file offset (its 32-byte header first).
    public var offset: UInt64
    /// What the page holds.
    public var kind: PageKind
    /// Whether the page is LZ4-compressed (§4 codec 1).
    public var isCompressed: Bool
    /// Bytes in the file after the 32-byte header, and bytes once decoded.
    public var storedBytes: Int
    public var decodedBytes: Int
    /// The checkpoint generation that wrote the page.
    public var generation: UInt64
    /// Records in a data page (0 for other kinds).
    public var records: Int
    /// Records of a data page that are the current version of a live object; for other kinds,
    /// 1 when the current root uses the page (its catalog, metadata, index directory or one of
    /// its index pages), else 0.
    public var liveRecords: Int

    /// Decoded bytes per stored byte (1 for an uncompressed page).
    public var compressionRatio: Double { storedBytes == 0 ? 1 : Double(decodedBytes) / Double(storedBytes) }
}

extension BinaryStore {
    /// Every page before the data end, in file order, with its compression and how much of it
    /// is live.
    ///
    /// Reads every page once (O(file size)).
    /// - Throws: ``StoreError/corrupt(detail:)`` naming the first damaged page,
    ///   ``StoreError/io(detail:)`` when the file cannot be read.
    public func pageMap() throws(StoreError) -> [BinaryStorePageSummary] {
        try rw.withReadLock { () throws(StoreError) -> [BinaryStorePageSummary] in
            guard !isClosed else { throw .closed }
            var liveByPage: [UInt64: Int] = [:]
            for table in try loadedIndex().tables {
                table.forEachLive { _, location in
                    if case .page(let offset, _) = RecordLocation(raw: location) { liveByPage[offset, default: 0] += 1 }
                }
            }
            var used: Set<UInt64> = [root.catalogOffset, root.metadataOffset]
            if root.indexDirectoryOffset != 0 {
                used.insert(root.indexDirectoryOffset)
                let (_, payload) = try Self.readPage(dataFile, at: root.indexDirectoryOffset, dataEnd: root.dataEnd)
                do throws(BinaryFormatError) {
                    used.formUnion(try IndexPageCodec.decodeDirectory(payload, pageOffset: root.indexDirectoryOffset).pageOffsets)
                } catch {
                    throw Self.corrupt(error)
                }
            }
            if root.secondaryIndexDirectoryOffset != 0 {
                used.insert(root.secondaryIndexDirectoryOffset)
                for listing in try Self.readSecondaryDirectory(dataFile, root: root, catalog: catalog).values { used.formUnion(listing.pageOffsets) }
            }
            if root.pageBoundsDirectoryOffset != 0 {
                used.insert(root.pageBoundsDirectoryOffset)
                used.formUnion(try readPageBoundsDirectory(at: root.pageBoundsDirectoryOffset, dataEnd: root.dataEnd).map(\.offset))
            }
            var pages: [BinaryStorePageSummary] = []
            for (offset, header) in try walkPages() {
                var records = 0
                var live = used.contains(offset) ? 1 : 0
                if header.kind == .data {
                    records = try Self.readDataPage(dataFile, at: offset, dataEnd: root.dataEnd).count
                    live = liveByPage[offset, default: 0]
                } else {
                    _ = try Self.readPage(dataFile, at: offset, dataEnd: root.dataEnd)
                }
                pages.append(BinaryStorePageSummary(
                    offset: offset, kind: header.kind, isCompressed: header.codec == 1, storedBytes: header.storedLength,
                    decodedBytes: header.decodedLength, generation: header.generation, records: records, liveRecords: live))
            }
            return pages
        }
    }
}
