/// The constants of the data file, each defined once here (Formats/binary-store.md §1).
public enum BinaryStoreLayout {
    /// §2: the first 8 bytes of every data file.
    public static let magic: [UInt8] = Array("CDBSTOR1".utf8)
    /// §2: the format version this code writes: new stores, compaction and exports.
    public static let formatVersion: UInt32 = 4
    /// §2: the format versions this code reads (and writes on, keeping their version).
    public static let readableFormatVersions: ClosedRange<UInt32> = 1...4
    /// §2, §5: data pages are filled up to this many decoded bytes.
    public static let targetPageSize = 16_384
    /// §2: the file header's size.
    public static let headerSize = 64
    /// §3: where the two root slots are.
    public static let rootSlotOffsets: [Int] = [512, 1_024]
    /// §3: each root slot's size.
    public static let rootSlotSize = 128
    /// §3: the root slot's magic (`CDRT`).
    public static let rootSlotMagic: UInt32 = 0x5452_4443
    /// §4: where pages begin.
    public static let firstPageOffset = 4_096
    /// §4: the page header's size.
    public static let pageHeaderSize = 32
    /// §4: the page magic (`CDPG`).
    public static let pageMagic: UInt32 = 0x4750_4443
    /// §4: the largest decoded page accepted.
    public static let maximumDecodedPageSize = 1 << 30
    /// §5: the largest record (encoded bytes) a save may write or a file may hold: 64 KiB below
    /// the largest log entry and decoded page, so a record always fits one of each with their
    /// headers and slot table.
    public static let maximumRecordSize = (1 << 30) - (1 << 16)
    /// §5: the most records a data page holds (slots are 16 bits).
    public static let maximumRecordsPerPage = 65_535
    /// §7: entries per index page (``indexEntryBytes`` each, under the target page size).
    public static let indexEntriesPerPage = 3_276
    /// §7: bytes of one index entry: entity ID (4), primary key (8), location (8).
    public static let indexEntryBytes = 20
    /// §7: the fewest entries a checkpoint puts in an index page it writes full (about 4 KiB).
    public static let indexEntriesPerWrittenPageAtLeast = 204
    /// §7: the index pages a checkpoint aims for: pages grow past the fewest entries only
    /// when more pages than this would be needed, so the directory stays within 32 KiB up to
    /// full pages (13,418,496 entries); past that the page count grows again.
    public static let indexPagesTarget = 4_096

    /// §7: entries per index page a checkpoint writes for an index of `total` entries.
    public static func indexEntriesPerWrittenPage(total: Int) -> Int {
        let spread = total / indexPagesTarget + (total % indexPagesTarget == 0 ? 0 : 1)
        return min(indexEntriesPerPage, max(indexEntriesPerWrittenPageAtLeast, spread))
    }
    /// §5: the largest primary key a record, index entry or catalog may hold. Far below
    /// `Int64.max`, so the next key after any key a file holds, and a range of new keys, never
    /// overflow; the XML store uses the same limit (xml-store.md).
    public static let largestPrimaryKey: Int64 = 1 << 62
    /// §3, §5: the largest record version and root generation accepted, so `+ 1` never overflows.
    public static let largestCounter: UInt64 = 1 << 62
}
