import CoreDataBinaryFormat
import CoreDataStorage

/// The page bounds a checkpoint, compaction or export writes (Formats/binary-store.md §7.3).
struct PageBoundsWrite {
    /// Pages of the old directory listed again, in order.
    var kept: [PageBoundsListing] = []
    /// Entries that go into new pages after them, in stored order.
    var entries: [PageBoundsEntry] = []
    /// The old directory, named again as it is when nothing is new (0: none).
    var unchangedDirectory: UInt64 = 0
    /// Whether the directory written starts over (no old page listed again).
    var startsOver: Bool { kept.isEmpty && unchangedDirectory == 0 }
}

/// Where ``BinaryStore/appendPageBounds(_:to:)`` put the directory: a new page's number on the
/// writer, or an old directory's offset (0: none).
struct PageBoundsDirectoryPlace {
    var newPage: Int?
    var existing: UInt64 = 0

    func offset(in writer: PageBatchWriter) -> UInt64 { newPage.map { writer.offset(of: $0) } ?? existing }
}

extension BinaryStore {
    /// What a checkpoint writes of the page bounds: the old directory's pages listed again and
    /// `new`, the bounds of the data pages it wrote, after them; nil below format version 4.
    ///
    /// The old directory's last page is read and written again with `new` when it holds fewer
    /// than ``PageBoundsLayout/fewestEntriesKept`` entries. A directory that does not read, or a
    /// handle that found the persisted bounds damaged, starts over with `new` alone (§7.3).
    /// Caller holds `commitLock`.
    ///
    /// - Throws: ``StoreError/io(detail:)`` when a read fails (damage is not an error here).
    func checkpointPageBounds(_ new: [PageBoundsEntry]) throws(StoreError) -> PageBoundsWrite? {
        guard header.formatVersion >= PageBoundsLayout.firstFormatVersion else { return nil }
        let (directory, dataEnd, current) = rw.withReadLock { () -> (UInt64, UInt64, Catalog) in (root.pageBoundsDirectoryOffset, root.dataEnd, catalog) }
        guard directory != 0, !pageSortBounds.persistedDamaged else { return PageBoundsWrite(entries: new) }
        if new.isEmpty { return PageBoundsWrite(unchangedDirectory: directory) }
        var kept: [PageBoundsListing]
        do { kept = try readPageBoundsDirectory(at: directory, dataEnd: dataEnd) } catch .corrupt { return PageBoundsWrite(entries: new) }
        var entries = new
        if let last = kept.last, last.entryCount < PageBoundsLayout.fewestEntriesKept {
            kept.removeLast()
            // A damaged page loses its entries: scans learn those pages again.
            do { entries = try readPageBoundsPage(last, dataEnd: dataEnd, catalog: current) + entries } catch .corrupt {}
        }
        return PageBoundsWrite(kept: kept, entries: entries)
    }

    /// Appends the new pages of `write` and a directory listing them after the kept ones.
    func appendPageBounds(_ write: PageBoundsWrite?, to writer: inout PageBatchWriter) throws(StoreError) -> PageBoundsDirectoryPlace {
        guard let write else { return PageBoundsDirectoryPlace() }
        guard !write.entries.isEmpty else {
            return write.kept.isEmpty ? PageBoundsDirectoryPlace(existing: write.unchangedDirectory)
                : PageBoundsDirectoryPlace(newPage: try writer.add(.pageBoundsDirectory, PageBoundsCodec.encodeDirectory(write.kept)))
        }
        var pages: [(number: Int, count: Int)] = []
        var start = 0
        while start < write.entries.count {
            let end = min(start + PageBoundsLayout.entriesPerPage, write.entries.count)
            pages.append((try writer.add(.pageBounds, PageBoundsCodec.encodePage(write.entries[start..<end])), end - start))
            start = end
        }
        try writer.encodeQueued()
        let listings = write.kept + pages.map { PageBoundsListing(offset: writer.offset(of: $0.number), entryCount: UInt32($0.count)) }
        return PageBoundsDirectoryPlace(newPage: try writer.add(.pageBoundsDirectory, PageBoundsCodec.encodeDirectory(listings)))
    }

    /// Puts the persisted bounds of the current root into ``pageSortBounds`` once, before the
    /// first scan that can pass over pages; damage there leaves scans to learn bounds (§7.3).
    /// Caller holds `rw` (shared).
    ///
    /// - Throws: ``StoreError/io(detail:)`` when a read fails: the fetch fails, as any read's
    ///   error reaches its caller; the next one reads them again.
    func loadPersistedPageBounds() throws(StoreError) {
        guard pageSortBounds.wantsPersisted else { return }
        // A root slot of version 4 in a file whose header says less names nothing (§2, §3).
        let directory = header.formatVersion >= PageBoundsLayout.firstFormatVersion ? root.pageBoundsDirectoryOffset : 0
        guard directory != 0 else { return pageSortBounds.installPersisted([]) }
        do throws(StoreError) {
            var entries: [PageBoundsEntry] = []
            for listing in try readPageBoundsDirectory(at: directory, dataEnd: root.dataEnd) {
                let page = try readPageBoundsPage(listing, dataEnd: root.dataEnd, catalog: catalog)
                if let last = entries.last, let first = page.first, !PageBoundsEntry.precedes(last, first) {
                    throw .corrupt(detail: "data file offset \(listing.offset) (page-bounds page): its first entry is not after the previous page's last")
                }
                entries.append(contentsOf: page)
            }
            pageSortBounds.installPersisted(entries)
        } catch .corrupt {
            pageSortBounds.markPersistedDamaged()
        }
    }

    /// The pages the page-bounds directory at `offset` lists.
    func readPageBoundsDirectory(at offset: UInt64, dataEnd: UInt64) throws(StoreError) -> [PageBoundsListing] {
        try Self.readPageBoundsDirectory(dataFile, at: offset, dataEnd: dataEnd)
    }

    /// The entries of one listed page-bounds page, checked against the directory's count.
    func readPageBoundsPage(_ listing: PageBoundsListing, dataEnd: UInt64, catalog: Catalog) throws(StoreError) -> [PageBoundsEntry] {
        try Self.readPageBoundsPage(dataFile, listing, dataEnd: dataEnd, catalog: catalog)
    }

    /// The pages the page-bounds directory at `offset` of `file` lists (`verify` reads a file
    /// without a store).
    static func readPageBoundsDirectory(_ file: any StoreFile, at offset: UInt64, dataEnd: UInt64) throws(StoreError) -> [PageBoundsListing] {
        let (header, payload) = try readPage(file, at: offset, dataEnd: dataEnd)
        guard header.kind == .pageBoundsDirectory else {
            throw .corrupt(detail: "data file offset \(offset): expected the page-bounds directory, found a \(header.kind)")
        }
        do { return try PageBoundsCodec.decodeDirectory(payload, pageOffset: offset) } catch { throw corrupt(error) }
    }

    /// The entries of one listed page-bounds page of `file`, checked against the directory's count.
    static func readPageBoundsPage(_ file: any StoreFile, _ listing: PageBoundsListing, dataEnd: UInt64, catalog: Catalog) throws(StoreError) -> [PageBoundsEntry] {
        let (header, payload) = try readPage(file, at: listing.offset, dataEnd: dataEnd)
        guard header.kind == .pageBounds else {
            throw .corrupt(detail: "data file offset \(listing.offset): expected a page-bounds page, found a \(header.kind)")
        }
        let entries: [PageBoundsEntry]
        do { entries = try PageBoundsCodec.decodePage(payload, pageOffset: listing.offset, catalog: catalog) } catch { throw corrupt(error) }
        guard entries.count == Int(listing.entryCount) else {
            throw .corrupt(detail: "data file offset \(listing.offset) (page-bounds page): \(entries.count) entries, the directory says \(listing.entryCount)")
        }
        return entries
    }
}
