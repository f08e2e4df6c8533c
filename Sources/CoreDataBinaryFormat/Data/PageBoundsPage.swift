/// The constants of page bounds (Formats/binary-store.md §7.3).
public enum PageBoundsLayout {
    /// §2, §7.3: the first format version whose root slot may name a page-bounds directory.
    public static let firstFormatVersion: UInt32 = 4
    /// §7.3: one entry: data page offset, entity ID, property index, low, high.
    public static let entryBytes = 32
    /// §7.3: the most entries a writer puts in one page-bounds page (16,356 decoded bytes).
    public static let entriesPerPage = 511
    /// §7.3: a checkpoint reads the old directory's last page and writes its entries again with
    /// its own when it holds fewer than this many (a quarter of a page).
    public static let fewestEntriesKept = 128
    /// §7.3: a writer gives no entry to a data page whose rows span more entities than this.
    public static let mostEntitiesPerPage = 64
    /// §7.3: …or whose rows of one entity hold strings in more properties than this.
    public static let mostStringPropertiesPerEntity = 256
    /// §7.3: one page of the directory: its offset and entry count.
    static let directoryEntryBytes = 12
}

/// The bounds of one string property of one entity's rows in one data page (§7.3).
public struct PageBoundsEntry: Sendable, Equatable {
    public var pageOffset: UInt64
    public var entityID: UInt32
    public var propertyIndex: UInt32
    public var bounds: PageSortBounds

    public init(pageOffset: UInt64, entityID: UInt32, propertyIndex: UInt32, bounds: PageSortBounds) {
        self.pageOffset = pageOffset
        self.entityID = entityID
        self.propertyIndex = propertyIndex
        self.bounds = bounds
    }

    /// The order entries are stored in: by data page offset, entity ID, property index.
    @inlinable
    public static func precedes(_ a: PageBoundsEntry, _ b: PageBoundsEntry) -> Bool {
        (a.pageOffset, a.entityID, a.propertyIndex) < (b.pageOffset, b.entityID, b.propertyIndex)
    }
}

/// One page-bounds page of the directory (§7.3).
public struct PageBoundsListing: Sendable, Equatable {
    public var offset: UInt64
    public var entryCount: UInt32

    public init(offset: UInt64, entryCount: UInt32) {
        self.offset = offset
        self.entryCount = entryCount
    }
}

/// Page-bounds pages and their directory (Formats/binary-store.md §7.3). Decoding does no I/O
/// and checks every count against the bytes that hold it before allocating.
public enum PageBoundsCodec {
    /// One page of `entries`, which must be in stored order.
    public static func encodePage(_ entries: ArraySlice<PageBoundsEntry>) -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + PageBoundsLayout.entryBytes * entries.count)
        writer.uint32(UInt32(entries.count))
        for entry in entries {
            writer.uint64(entry.pageOffset)
            writer.uint32(entry.entityID)
            writer.uint32(entry.propertyIndex)
            writer.uint64(entry.bounds.low)
            writer.uint64(entry.bounds.high)
        }
        return writer.bytes
    }

    /// The entries of the page-bounds page at `pageOffset`, checked against the catalog.
    ///
    /// - Throws: when the count does not match the bytes, an entry names a data page outside
    ///   4,096..<`pageOffset`, an entity or property outside `catalog`, has low above high, or
    ///   the entries are out of order.
    public static func decodePage(_ payload: [UInt8], pageOffset: UInt64, catalog: Catalog) throws(BinaryFormatError) -> [PageBoundsEntry] {
        let location = "data file offset \(pageOffset) (page-bounds page)"
        var reader = ByteReader(payload)
        let count = Int(try reader.uint32("entry count"))
        guard count >= 1, payload.count == 4 + PageBoundsLayout.entryBytes * count else {
            throw BinaryFormatError(location, "entry count \(count) does not match the page's \(payload.count) bytes")
        }
        var entries: [PageBoundsEntry] = []
        entries.reserveCapacity(count)
        for number in 0..<count {
            let entry = PageBoundsEntry(
                pageOffset: try reader.uint64(), entityID: try reader.uint32(), propertyIndex: try reader.uint32(),
                bounds: PageSortBounds(low: try reader.uint64(), high: try reader.uint64()))
            guard entry.pageOffset >= UInt64(BinaryStoreLayout.firstPageOffset), entry.pageOffset < pageOffset else {
                throw BinaryFormatError(location, "entry \(number) names data file offset \(entry.pageOffset), outside the data pages before it")
            }
            guard Int(entry.entityID) < catalog.entities.count,
                  Int(entry.propertyIndex) < catalog.entities[Int(entry.entityID)].properties.count else {
                throw BinaryFormatError(location, "entry \(number) names entity \(entry.entityID), property \(entry.propertyIndex), outside the catalog")
            }
            guard entry.bounds.low <= entry.bounds.high else { throw BinaryFormatError(location, "entry \(number) has its low bound above its high") }
            if let last = entries.last, !PageBoundsEntry.precedes(last, entry) {
                throw BinaryFormatError(location, "entry \(number) is out of order")
            }
            entries.append(entry)
        }
        return entries
    }

    public static func encodeDirectory(_ pages: [PageBoundsListing]) -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + PageBoundsLayout.directoryEntryBytes * pages.count)
        writer.uint32(UInt32(pages.count))
        for page in pages {
            writer.uint64(page.offset)
            writer.uint32(page.entryCount)
        }
        return writer.bytes
    }

    /// The pages the directory at `pageOffset` lists.
    ///
    /// - Throws: when the count does not match the bytes, a page lies outside 4,096..<`pageOffset`
    ///   or not after the one before, or an entry count is 0 or more than the page could hold.
    public static func decodeDirectory(_ payload: [UInt8], pageOffset: UInt64) throws(BinaryFormatError) -> [PageBoundsListing] {
        let location = "data file offset \(pageOffset) (page-bounds directory page)"
        var reader = ByteReader(payload)
        let count = Int(try reader.uint32("page count"))
        guard payload.count == 4 + PageBoundsLayout.directoryEntryBytes * count else {
            throw BinaryFormatError(location, "page count \(count) does not match the page's \(payload.count) bytes")
        }
        var pages: [PageBoundsListing] = []
        pages.reserveCapacity(count)
        for number in 0..<count {
            let page = PageBoundsListing(offset: try reader.uint64(), entryCount: try reader.uint32())
            guard page.offset >= UInt64(BinaryStoreLayout.firstPageOffset), page.offset < pageOffset,
                  page.offset > pages.last?.offset ?? 0 else {
                throw BinaryFormatError(location, "page \(number) is at data file offset \(page.offset), outside the pages before the directory or out of order")
            }
            // A page of n entries holds 4 + 32n decoded bytes, at most the largest page (§4).
            guard page.entryCount >= 1, Int(page.entryCount) <= (BinaryStoreLayout.maximumDecodedPageSize - 4) / PageBoundsLayout.entryBytes else {
                throw BinaryFormatError(location, "page \(number) claims \(page.entryCount) entries")
            }
            pages.append(page)
        }
        return pages
    }
}
