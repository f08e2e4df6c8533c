import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// Reads a whole binary store and its log and lists every damaged location
/// (Formats/binary-store.md §13). Reads only; takes no lock.
struct BinaryStoreVerifier {
    let path: String
    let fileSystem: any StoreFileSystem
    var result = BinaryStoreVerification()
    /// Root slots that do not decode while the other does; judged once the log is read.
    private var damagedRootSlots: [(location: String, why: String)] = []
    private var pagesPastDataEnd = false
    /// Every external data file the records name (§15), by file name, with the first record
    /// that names it.
    private var externalReferences: [String: (reference: ExternalDataReference, location: String)] = [:]
    /// A decoder's stand-in for the external files, which are checked once each at the end.
    private static let skipExternal: ExternalDataLoader = { _ throws(BinaryFormatError) in Data() }

    init(path: String, fileSystem: any StoreFileSystem) {
        self.path = path
        self.fileSystem = fileSystem
    }

    mutating func run() -> BinaryStoreVerification {
        let file: any StoreFile
        do { file = try fileSystem.open(path, create: false, readOnly: true) } catch {
            result.report(path, "cannot be opened: \(error.reason)")
            return result
        }
        defer { file.close() }
        do {
            try verifyData(file)
        } catch {
            result.report(path, "\(error)")
        }
        return result
    }

    private mutating func verifyData(_ file: any StoreFile) throws {
        let head = try file.read(at: 0, count: BinaryStoreLayout.firstPageOffset)
        let header: FileHeader
        do { header = try FileHeader(decoding: head) } catch {
            result.report(error.location, error.problem)
            return
        }
        guard head.count == BinaryStoreLayout.firstPageOffset else {
            result.report("data file offset \(head.count)", "the file ends inside its header area")
            return
        }
        let slotRanges = BinaryStoreLayout.rootSlotOffsets.map { $0..<($0 + BinaryStoreLayout.rootSlotSize) }
        var reserved: [Range<Int>] = []
        var start = BinaryStoreLayout.headerSize
        for range in slotRanges {
            reserved.append(start..<range.lowerBound)
            start = range.upperBound
        }
        reserved.append(start..<BinaryStoreLayout.firstPageOffset)
        for range in reserved {
            if let nonzero = range.first(where: { head[$0] != 0 }) {
                result.report("data file offset \(nonzero)", "a reserved header byte is not zero")
            }
        }
        var best: RootSlot?
        var damaged: [(location: String, why: String)] = []
        for (slot, range) in slotRanges.enumerated() {
            switch RootSlot.decode(Array(head[range])) {
            case .unused: continue
            case .damaged(let why): damaged.append(("data file offset \(range.lowerBound) (root slot \(slot == 0 ? "A" : "B"))", why))
            case .valid(let root): if root.generation > (best?.generation ?? 0) { best = root }
            }
        }
        guard let root = best else {
            for slot in damaged { result.report(slot.location, slot.why) }
            result.report("data file offset \(slotRanges[0].lowerBound)", "no valid root slot")
            return
        }
        damagedRootSlots = damaged
        pagesPastDataEnd = try file.size() > root.dataEnd
        let size = try file.size()
        guard root.dataEnd <= size else {
            result.report("data file offset \(size)", "the file ends before the data end \(root.dataEnd) the root records")
            return
        }
        if size > root.dataEnd { result.notes.append("\(size - root.dataEnd) bytes past the data end (an unfinished checkpoint; a writable open drops them)") }

        var catalog: Catalog?
        do {
            let (_, payload) = try BinaryStore.readPage(file, at: root.catalogOffset, dataEnd: root.dataEnd)
            catalog = try Catalog(decoding: payload)
        } catch {
            result.report("data file offset \(root.catalogOffset) (catalog page)", "\(error)")
        }
        do {
            let (_, payload) = try BinaryStore.readPage(file, at: root.metadataOffset, dataEnd: root.dataEnd)
            _ = try MetadataCodec.decode(payload, location: "data file offset \(root.metadataOffset) (metadata page)")
        } catch {
            result.report("data file offset \(root.metadataOffset) (metadata page)", "\(error)")
        }

        // The persisted secondary indexes (§7.2), checked against the values the walk below
        // finds in each object's latest record.
        var secondary = SecondaryIndexCheck()
        // Built once: records decoded without layouts build one per record, most of verify's time.
        let layouts = catalog.map { RecordLayouts(catalog: $0) }
        if let catalog, root.secondaryIndexDirectoryOffset != 0 {
            do {
                secondary = SecondaryIndexCheck(try BinaryStore.readSecondaryDirectory(file, root: root, catalog: catalog), catalog: catalog)
            } catch {
                result.report("data file offset \(root.secondaryIndexDirectoryOffset) (secondary-index directory page)", "\(error)")
            }
        }

        // The page bounds (§7.3), each compared below with what its data page's records give.
        var bounds: [UInt64: [PageBoundsEntry]] = [:]
        if let catalog, root.pageBoundsDirectoryOffset != 0 {
            for (offset, entries) in readPageBounds(file, root: root, catalog: catalog) { bounds[offset, default: []].append(contentsOf: entries) }
        }

        // Every page, in file order; the latest record of each object gives the expected index.
        var expected: [ObjectKey: UInt64] = [:]
        var offset = UInt64(BinaryStoreLayout.firstPageOffset)
        while offset < root.dataEnd {
            let headBytes = try file.read(at: offset, count: BinaryStoreLayout.pageHeaderSize)
            let pageHeader: PageHeader
            do { pageHeader = try PageHeader(decoding: headBytes, at: offset) } catch {
                result.report(error.location, "\(error.problem); the pages after it cannot be found")
                break
            }
            let next = offset + UInt64(pageHeader.totalLength)
            guard next <= root.dataEnd else {
                result.report("data file offset \(offset) (\(pageHeader.kind))", "the page runs past the data end")
                break
            }
            result.pagesByKind[pageHeader.kind.description, default: 0] += 1
            // Taken now, so that a data page that fails below is not also called "not a data page".
            let persistedBounds = pageHeader.kind == .data ? bounds.removeValue(forKey: offset) : nil
            do {
                let page = try file.read(at: offset, count: pageHeader.totalLength)
                let payload = try PageCodec.decodePayload(pageHeader, page: page, at: offset)
                if pageHeader.kind == .data {
                    result.storedPageBytes += pageHeader.storedLength
                    result.decodedPageBytes += pageHeader.decodedLength
                    let dataPage = try DataPage(payload: payload, pageOffset: offset)
                    if let persisted = persistedBounds {
                        let computed = PageBoundsSummary.entries(ofDataPage: payload, at: offset)
                        for entry in persisted where !computed.contains(entry) {
                            let actual = computed.first { $0.entityID == entry.entityID && $0.propertyIndex == entry.propertyIndex }
                            result.report("data file offset \(offset) (data page)",
                                          "its page bounds for entity \(entry.entityID), property \(entry.propertyIndex) say \(entry.bounds), its records give \(actual.map { "\($0.bounds)" } ?? "no bounds")")
                        }
                    }
                    for slot in 0..<dataPage.count {
                        guard let range = dataPage.range(of: slot), let catalog else { continue }
                        do {
                            let (record, _) = try RecordCodec.decode(
                                dataPage.payload, from: range.lowerBound, to: range.upperBound, catalog: catalog, layouts: layouts, external: Self.skipExternal)
                            if header.formatVersion >= ExternalDataLayout.firstFormatVersion {
                                note(try RecordCodec.externalReferences(in: dataPage.payload, from: range.lowerBound, to: range.upperBound, catalog: catalog)) {
                                    "data file offset \(offset), slot \(slot)"
                                }
                            }
                            result.pageRecords += 1
                            try secondary.note(entityID: record.entityID, key: record.primaryKey, dataPage.payload, range, catalog: catalog)
                            let key = ObjectKey(entityID: record.entityID, key: record.primaryKey)
                            expected[key] = record.kind == .row ? RecordLocation.page(offset: offset, slot: slot).raw : nil
                        } catch {
                            result.report("data file offset \(offset), slot \(slot)", error.problem)
                        }
                    }
                }
            } catch let error as BinaryFormatError {
                result.report(error.location, error.problem)
            } catch let error as StoreError {
                result.report("data file offset \(offset)", "\(error)")
            }
            offset = next
        }

        for offset in bounds.keys.sorted() {
            result.report("data file offset \(offset)", "page bounds name this offset, which is not a data page")
        }

        // The persisted index must be exactly the latest record of each object.
        if let catalog {
            do {
                let index = try BinaryStore.loadIndex(file, root: root, catalog: catalog)
                var seen = 0
                for (entityID, table) in index.tables.enumerated() {
                    table.forEachLive { key, location in
                        seen += 1
                        if expected[ObjectKey(entityID: entityID, key: key)] != location {
                            result.report("index entry \(catalog.entities[entityID].name)/p\(key)", "points to \(RecordLocation(raw: location)), not to the object's latest record")
                        }
                    }
                }
                if seen != expected.count {
                    result.report("data file offset \(root.indexDirectoryOffset) (index)", "the index holds \(seen) objects but the pages hold \(expected.count)")
                }
            } catch {
                result.report("data file offset \(root.indexDirectoryOffset) (index)", "\(error)")
            }
            for problem in secondary.problems(file, root: root, catalog: catalog) { result.report(problem.location, problem.why) }
            try verifyLog(header: header, root: root, catalog: catalog, expected: &expected)
            // The slot not in use is the one a checkpoint writes last, after its pages: a power
            // failure during that write leaves it unreadable, those pages past the data end, and
            // the saves it was copying in the log. Without those saves it may be the newest root
            // that got damaged after its checkpoint completed (binary-store.md §3, §12).
            for slot in damagedRootSlots {
                if pagesPastDataEnd, result.logCommits > 0 {
                    result.notes.append("\(slot.location) does not decode (\(slot.why)): a checkpoint a power failure cut short; the slot of generation \(root.generation) is in use")
                } else if pagesPastDataEnd {
                    result.report(slot.location, "\(slot.why); pages follow the data end of the slot in use (generation \(root.generation)): either this was the newest root and is damaged, or a power failure cut a checkpoint short and took the unsynced log with it (a writable open then clears the slot)")
                } else {
                    result.report(slot.location, slot.why)
                }
            }
            for (key, _) in expected {
                let name = key.entityID < catalog.entities.count ? catalog.entities[key.entityID].name : "entity \(key.entityID)"
                result.objectsByEntity[name, default: 0] += 1
            }
            verifyExternalFiles()
        }
    }

    /// The entries of the page-bounds pages the root names, by data page offset; damage is
    /// reported and leaves out what it holds.
    private mutating func readPageBounds(_ file: any StoreFile, root: RootSlot, catalog: Catalog) -> [UInt64: [PageBoundsEntry]] {
        let listings: [PageBoundsListing]
        do { listings = try BinaryStore.readPageBoundsDirectory(file, at: root.pageBoundsDirectoryOffset, dataEnd: root.dataEnd) } catch {
            result.report("data file offset \(root.pageBoundsDirectoryOffset) (page-bounds directory page)", "\(error)")
            return [:]
        }
        var byPage: [UInt64: [PageBoundsEntry]] = [:]
        var last: PageBoundsEntry?
        for listing in listings {
            let location = "data file offset \(listing.offset) (page-bounds page)"
            do {
                let entries = try BinaryStore.readPageBoundsPage(file, listing, dataEnd: root.dataEnd, catalog: catalog)
                if let last, let first = entries.first, !PageBoundsEntry.precedes(last, first) {
                    result.report(location, "its first entry is not after the previous page's last")
                }
                last = entries.last ?? last
                for entry in entries { byPage[entry.pageOffset, default: []].append(entry) }
            } catch {
                result.report(location, "\(error)")
            }
        }
        return byPage
    }

    private mutating func note(_ references: [ExternalDataReference], at location: () -> String) {
        for reference in references where externalReferences[reference.fileName] == nil {
            externalReferences[reference.fileName] = (reference, location())
        }
    }

    /// Every file a record names must hold its value (length and checksum); files no record
    /// names are noted, not damage: deleted or replaced values wait for compaction, and a crash
    /// between a file and its save leaves one (§15.3).
    private mutating func verifyExternalFiles() {
        for (name, (reference, location)) in externalReferences.sorted(by: { $0.key < $1.key }) {
            do {
                let value = try BinaryStore.loadExternalValue(reference, store: path, fileSystem: fileSystem)
                result.externalFiles += 1
                result.externalBytes += UInt64(value.count)
            } catch {
                result.report(error.location, "\(error.problem) (named by the record at \(location), file \(name))")
            }
        }
        let orphans = BinaryStore.externalFiles(store: path, fileSystem: fileSystem).filter { externalReferences[$0] == nil }
        result.orphanedExternalFiles = orphans.sorted()
        if !orphans.isEmpty {
            result.notes.append("\(orphans.count) external data file\(orphans.count == 1 ? "" : "s") no record names (deleted or replaced values, or a save a crash cut short; compaction removes them)")
        }
    }

    private mutating func verifyLog(header: FileHeader, root: RootSlot, catalog: Catalog, expected: inout [ObjectKey: UInt64]) throws {
        let logPath = path + "-wal"
        guard fileSystem.fileExists(logPath) else {
            result.notes.append("no log file (an empty log)")
            return
        }
        let log = try fileSystem.open(logPath, create: false, readOnly: true)
        defer { log.close() }
        let size = try log.size()
        guard size >= UInt64(LogLayout.headerSize) else {
            if size > 0 { result.notes.append("the log is cut inside its header (\(size) bytes): an empty log") }
            return
        }
        if LogHeader.isUnfinishedCreation(try log.read(at: 0, count: LogLayout.firstFrameOffset + LogLayout.frameHeaderSize)) {
            result.notes.append("the log's header does not decode and no frame follows it: a log whose creation was cut short (an empty log)")
            return
        }
        do {
            let logHeader = try LogHeader(decoding: try log.read(at: 0, count: LogLayout.headerSize))
            guard logHeader.storeUUID == header.storeUUID else {
                result.report("log offset 16", "the log belongs to another store")
                return
            }
            let replay = try LogReplay.run(log, size: size, salt: root.logSalt, catalog: catalog)
            var current = catalog
            var layouts = RecordLayouts(catalog: catalog)
            for transaction in replay.transactions {
                result.logCommits += 1
                result.logFrames += transaction.frames
                if let newCatalog = transaction.catalog {
                    current = newCatalog
                    layouts = RecordLayouts(catalog: newCatalog)
                }
                for record in transaction.records {
                    let key = ObjectKey(entityID: record.entityID, key: record.key)
                    expected[key] = record.tombstone ? nil : record.location
                    let offset = record.location & ~RecordLocation.logBit
                    let entryHead = try log.read(at: offset, count: LogLayout.entryHeaderSize)
                    var reader = ByteReader(entryHead, from: 1)
                    let length = Int(try reader.uint32())
                    let bytes = try log.read(at: offset, count: LogLayout.entryHeaderSize + length)
                    let (_, body) = try LogEntryCodec.body(ofEntry: bytes, at: offset)
                    do {
                        _ = try RecordCodec.decode(bytes, from: body.lowerBound, to: body.upperBound, catalog: current, layouts: layouts, external: Self.skipExternal)
                        note(try RecordCodec.externalReferences(in: bytes, from: body.lowerBound, to: body.upperBound, catalog: current)) { "log offset \(offset)" }
                    } catch {
                        result.report("log offset \(offset)", error.problem)
                    }
                }
            }
            if replay.droppedBytes > 0 {
                result.notes.append("\(replay.droppedBytes) log bytes after the last save (a torn tail or frames of an earlier checkpoint)")
            }
        } catch let error as BinaryFormatError {
            result.report(error.location, error.problem)
        }
    }
}

extension BinaryStore {
    /// Verifies the store and log at `path` without opening it: every page, record, index
    /// entry and log frame (Formats/binary-store.md §13). Used by the CLI's `verify`.
    ///
    /// Complexity: reads every byte of both files once.
    public static func verify(path: String, fileSystem: any StoreFileSystem = POSIXFileSystem()) -> BinaryStoreVerification {
        var verifier = BinaryStoreVerifier(path: path, fileSystem: fileSystem)
        return verifier.run()
    }

    /// Verifies this open store; saves wait until it is done, in other processes that share the
    /// store too (it holds the write lock).
    public func verify() throws(StoreError) -> BinaryStoreVerification {
        try checkUsable()
        commitLock.lock()
        defer { commitLock.unlock() }
        drainGroupCommits()
        if !options.readOnly { try beginWrite() }
        defer { releaseWriteLockIfIdle() }
        return Self.verify(path: path, fileSystem: fileSystem)
    }
}

/// What `verify` checks of the persisted secondary indexes (Formats/binary-store.md §7.2,
/// §13): the values of every object's latest record in the data pages, against the index pages.
private struct SecondaryIndexCheck {
    private var listings: [SecondaryIndexID: SecondaryIndexListing] = [:]
    /// Per entity ID with an index: its indexes and a reader of their attributes.
    private var readers: [Int: (ids: [SecondaryIndexID], reader: IndexedValueReader)] = [:]
    /// Per index, each live object's value that belongs in it.
    private var values: [SecondaryIndexID: [Int64: StoreValue]] = [:]

    init() {}

    init(_ listings: [SecondaryIndexID: SecondaryIndexListing], catalog: Catalog) {
        self.listings = listings
        for (entityID, ids) in Dictionary(grouping: listings.keys, by: \.entityID) {
            let sorted = ids.sorted()
            readers[entityID] = (sorted, IndexedValueReader(
                propertyCount: catalog.entities[entityID].properties.count, propertyIndexes: sorted.map(\.propertyIndex), external: nil))
        }
    }

    /// A record met in file order: a later one of the same object replaces an earlier one.
    mutating func note(entityID: Int, key: Int64, _ bytes: [UInt8], _ range: Range<Int>, catalog: Catalog) throws(BinaryFormatError) {
        guard var entry = readers[entityID] else { return }
        let read = try entry.reader.read(bytes, range, catalog: catalog)
        readers[entityID] = entry
        for (number, id) in entry.ids.enumerated() {
            if let value = read?[number], let listing = listings[id], SecondaryIndexOrder.holds(value, listing.kind) {
                values[id, default: [:]][key] = value
            } else {
                values[id]?[key] = nil
            }
        }
    }

    /// Damage, entries no object backs, and objects missing from their index.
    func problems(_ file: any StoreFile, root: RootSlot, catalog: Catalog) -> [(location: String, why: String)] {
        var problems: [(location: String, why: String)] = []
        for (id, listing) in listings.sorted(by: { $0.key < $1.key }) {
            let entity = catalog.entities[id.entityID]
            let location = "secondary index \(entity.name).\(entity.properties[id.propertyIndex])"
            let entries: SecondaryEntries
            do { entries = try BinaryStore.readSecondaryEntries(file, root: root, listing: listing).entries } catch {
                problems.append((location, "\(error)"))
                continue
            }
            var wanted = values[id] ?? [:]
            var wrong: [String] = []
            for position in 0..<entries.count {
                let entry = entries[position]
                if let value = wanted.removeValue(forKey: entry.key) {
                    if value != entry.value { wrong.append("p\(entry.key) is listed under \(entry.value), its record holds \(value)") }
                } else {
                    wrong.append("p\(entry.key) is listed but no live object holds a value there (or it is listed twice)")
                }
            }
            for key in wanted.keys.sorted() { wrong.append("p\(key) is missing") }
            if !wrong.isEmpty {
                problems.append((location, wrong.prefix(3).joined(separator: "; ") + (wrong.count > 3 ? "; and \(wrong.count - 3) more" : "")))
            }
        }
        return problems
    }
}

