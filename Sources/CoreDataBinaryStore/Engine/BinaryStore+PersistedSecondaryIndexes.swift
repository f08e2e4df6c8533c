import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// A secondary index by its place in the catalog, as the file names it (Formats/binary-store.md
/// §7.2).
struct SecondaryIndexID: Hashable, Sendable, Comparable {
    var entityID: Int
    var propertyIndex: Int

    init(entityID: Int, propertyIndex: Int) {
        self.entityID = entityID
        self.propertyIndex = propertyIndex
    }

    init(_ listing: SecondaryIndexListing) {
        self.init(entityID: Int(listing.entityID), propertyIndex: Int(listing.propertyIndex))
    }

    static func < (a: SecondaryIndexID, b: SecondaryIndexID) -> Bool { (a.entityID, a.propertyIndex) < (b.entityID, b.propertyIndex) }
}

/// How a checkpoint or compaction puts one secondary index in the file (§7.2).
enum SecondaryIndexWrite {
    /// Its pages are unchanged: the directory lists them again.
    case listedAgain(SecondaryIndexListing)
    /// These entries, in index order: in the pages of `reuse` that hold a run of them exactly,
    /// listed again, and the rest in new pages.
    case entries(SecondaryIndexID, SecondaryIndexKind, SecondaryEntries, reuse: SecondaryPageReuse?)

    var id: SecondaryIndexID {
        switch self {
        case .listedAgain(let listing): return SecondaryIndexID(listing)
        case .entries(let id, _, _, _): return id
        }
    }
}

/// An index's pages in the file and how their entries became the new entries, from which a
/// checkpoint lists again every page a change did not reach (§7.2).
struct SecondaryPageReuse {
    var pages: SecondaryIndexPages
    /// The fold from the entries the pages hold to the entries written; it must cover every
    /// change since the pages (an entry it does not drop is taken to be as it was).
    var edit: SecondaryEntries.Edit
}

/// Where a checkpoint or compaction put the secondary indexes: the directory, what it lists, and
/// where each page of the indexes written as entries starts.
struct SecondaryIndexesWritten {
    var directory: UInt64 = 0
    var listings: [SecondaryIndexListing] = []
    /// Per index written as entries, where each of its pages starts.
    var starts: [SecondaryIndexID: [Int]] = [:]
}

extension BinaryStore {
    /// Reads the secondary-index directory `root` names (§7.2), checked against `catalog`;
    /// empty when there is none.
    ///
    /// - Throws: on damage; open then ignores the directory (the indexes are built from the
    ///   records instead), and on I/O errors.
    static func readSecondaryDirectory(_ file: any StoreFile, root: RootSlot, catalog: Catalog) throws(StoreError) -> [SecondaryIndexID: SecondaryIndexListing] {
        let offset = root.secondaryIndexDirectoryOffset
        guard offset != 0 else { return [:] }
        let (header, payload) = try readPage(file, at: offset, dataEnd: root.dataEnd)
        let location = "data file offset \(offset) (secondary-index directory page)"
        guard header.kind == .secondaryIndexDirectory else { throw .corrupt(detail: "data file offset \(offset): expected the secondary-index directory, found a \(header.kind)") }
        let listings: [SecondaryIndexListing]
        do { listings = try SecondaryIndexCodec.decodeDirectory(payload, pageOffset: offset) } catch { throw corrupt(error) }
        var result: [SecondaryIndexID: SecondaryIndexListing] = [:]
        for listing in listings {
            let id = SecondaryIndexID(listing)
            guard id.entityID < catalog.entities.count, id.propertyIndex < catalog.entities[id.entityID].properties.count else {
                throw .corrupt(detail: "\(location): entity \(listing.entityID), property \(listing.propertyIndex) is not in the catalog")
            }
            for page in listing.pageOffsets where page < UInt64(BinaryStoreLayout.firstPageOffset) || page >= root.dataEnd {
                throw .corrupt(detail: "\(location): page offset \(page) is outside the pages (they end at \(root.dataEnd))")
            }
            result[id] = listing
        }
        return result
    }

    /// Every entry of a persisted index, its pages read and checked (§7.2). Caller holds `rw`.
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` naming the damaged page.
    func readSecondaryEntries(_ listing: SecondaryIndexListing) throws(StoreError) -> (entries: SecondaryEntries, pages: SecondaryIndexPages) {
        try Self.readSecondaryEntries(dataFile, root: root, listing: listing)
    }

    /// Every entry of a persisted index in `file`, its pages read and checked (§7.2), for the
    /// engine and `verify`.
    static func readSecondaryEntries(
        _ file: any StoreFile, root: RootSlot, listing: SecondaryIndexListing
    ) throws(StoreError) -> (entries: SecondaryEntries, pages: SecondaryIndexPages) {
        var entries = SecondaryEntries(kind: listing.kind)
        var starts: [Int] = []
        // Not the directory's count: a damaged one must not size an allocation.
        entries.reserveCapacity(min(Int(clamping: listing.entryCount), listing.pageOffsets.count * (SecondaryIndexLayout.pageBytes / 16)))
        for offset in listing.pageOffsets {
            let (header, payload) = try readPage(file, at: offset, dataEnd: root.dataEnd)
            guard header.kind == .secondaryIndex else {
                throw .corrupt(detail: "data file offset \(offset): expected a secondary-index page, found a \(header.kind)")
            }
            let page: [SecondaryIndexCodec.Entry]
            do {
                page = try SecondaryIndexCodec.decodePage(
                    payload, pageOffset: offset, entityID: listing.entityID, propertyIndex: listing.propertyIndex, kind: listing.kind)
            } catch {
                throw corrupt(error)
            }
            if !entries.isEmpty, let first = page.first, !SecondaryIndexOrder.entryLess(entries[entries.count - 1], first) {
                throw .corrupt(detail: "data file offset \(offset) (secondary-index page): its first entry sorts before the previous page's last")
            }
            starts.append(entries.count)
            entries.append(contentsOf: page)
        }
        guard UInt64(entries.count) == listing.entryCount else {
            throw .corrupt(detail: "data file offset \(listing.pageOffsets.first ?? 0) (secondary-index page): the index's pages hold \(entries.count) entries; its directory says \(listing.entryCount)")
        }
        return (entries, SecondaryIndexPages(listing: listing, starts: starts))
    }

    /// A persisted index brought up to the published state: its pages, then every row of the
    /// entity whose record is in the log and every tombstone in the log (§7.2). `nil` when the
    /// file holds no such index. Caller holds `rw` (shared), with the whole index loaded as `table`.
    func persistedSecondaryIndex(
        entityID: Int, propertyIndex: Int, kind: SecondaryIndex.Kind, table: ObjectIndex.Table
    ) throws(StoreError) -> SecondaryIndex? {
        let id = SecondaryIndexID(entityID: entityID, propertyIndex: propertyIndex)
        guard let listing = secondaryLock.withLock({ persistedSecondary[id] }), listing.kind == kind else { return nil }
        let read = try readSecondaryEntries(listing)
        var index = SecondaryIndex(kind: kind, sortedEntries: read.entries, pages: read.pages)
        var reader = IndexedValueReader(propertyCount: catalog.entities[entityID].properties.count, propertyIndexes: [propertyIndex], external: externalLoader)
        var changes: [(key: Int64, value: StoreValue)] = []
        for position in table.keys.indices where table.locations[position] & RecordLocation.logBit != 0 {
            let location = table.locations[position]
            let (bytes, range) = try recordBytes(at: location)
            do {
                changes.append((table.keys[position], try reader.read(bytes, range, catalog: catalog)?[0] ?? .null))
            } catch {
                throw .corrupt(detail: error.within(Self.describe(location)).description)
            }
        }
        for tombstone in logTombstones where tombstone.entityID == entityID { changes.append((tombstone.key, .null)) }
        index.apply(changes)
        return index
    }

    /// The plan a checkpoint of a version-3 store fills while it copies (§7.2); nil below
    /// version 3. Caller holds `commitLock`.
    func checkpointSecondaryPlan() -> CheckpointSecondaryPlan? {
        guard header.formatVersion >= SecondaryIndexLayout.firstFormatVersion else { return nil }
        let currentCatalog = rw.withReadLock { catalog }
        let (persisted, inMemory) = secondaryLock.withLock { (persistedSecondary, secondaryIndexes) }
        var unloaded: [Int: [(id: SecondaryIndexID, attribute: String)]] = [:]
        for (id, listing) in persisted {
            guard let attribute = stillIndexed(listing, catalog: currentCatalog), inMemory[id.entityID]?[attribute] == nil else { continue }
            unloaded[id.entityID, default: []].append((id, attribute))
        }
        return CheckpointSecondaryPlan(persisted: persisted, unloaded: unloaded, catalog: currentCatalog, external: externalLoader)
    }

    /// The attribute a persisted index orders, when the model still indexes it with that kind.
    func stillIndexed(_ listing: SecondaryIndexListing, catalog: Catalog) -> String? {
        let id = SecondaryIndexID(listing)
        guard id.entityID < catalog.entities.count, id.propertyIndex < catalog.entities[id.entityID].properties.count else { return nil }
        let entity = catalog.entities[id.entityID]
        let attribute = entity.properties[id.propertyIndex]
        return indexedAttributes[entity.name]?[attribute] == listing.kind ? attribute : nil
    }

    /// What a checkpoint writes for each secondary index, after it copied the log (§7.2): the
    /// indexes in memory (listed again whole when unchanged since their pages), and the persisted
    /// ones not in memory (listed again when the checkpoint copied nothing of their entity, else
    /// read and updated). An index written as entries lists again each of its old pages that a
    /// change did not reach, and comes back in `kept` with its changes folded in, to be kept in
    /// memory so the next checkpoint need not read it. An index whose pages turn out damaged is
    /// left out: the next fetch builds it from the records.
    func checkpointSecondaryWrites(_ plan: CheckpointSecondaryPlan) throws(StoreError) -> (writes: [SecondaryIndexWrite], kept: [(entityID: Int, attribute: String, index: SecondaryIndex)]) {
        let currentCatalog = rw.withReadLock { catalog }
        var writes: [SecondaryIndexID: SecondaryIndexWrite] = [:]
        var kept: [(entityID: Int, attribute: String, index: SecondaryIndex)] = []
        secondaryLock.withLock {
            for (entityID, byAttribute) in secondaryIndexes {
                for attribute in byAttribute.keys {
                    // An attribute no save ever held has no property index: nothing to write.
                    guard let property = currentCatalog.entities[entityID].index(of: attribute),
                          var index = secondaryIndexes[entityID]?[attribute] else { continue }
                    let id = SecondaryIndexID(entityID: entityID, propertyIndex: property)
                    let pages = index.pages.flatMap { $0.listing == plan.persisted[id] ? $0 : nil }
                    if let pages, index.matchesPages {
                        writes[id] = .listedAgain(pages.listing)
                        continue
                    }
                    // Folded where it is stored, so the fetches after it skip the fold too. The
                    // edit covers every fold since the pages.
                    secondaryIndexes[entityID]?[attribute] = nil
                    let (entries, edit) = index.folded()
                    secondaryIndexes[entityID]?[attribute] = index
                    let reuse = pages.map { SecondaryPageReuse(pages: $0, edit: edit) }
                    writes[id] = .entries(id, index.kind, entries, reuse: reuse)
                    kept.append((entityID, attribute, index))
                }
            }
        }
        for (entityID, indexes) in plan.unloaded {
            for (id, attribute) in indexes where writes[id] == nil {
                guard let listing = plan.persisted[id] else { continue }
                guard plan.changedEntities.contains(entityID) else {
                    writes[id] = .listedAgain(listing)
                    continue
                }
                do {
                    let read = try rw.withReadLock { () throws(StoreError) in try readSecondaryEntries(listing) }
                    var index = SecondaryIndex(kind: listing.kind, sortedEntries: read.entries, pages: read.pages)
                    index.apply(plan.changes[id] ?? [])
                    let (entries, edit) = index.folded()
                    writes[id] = .entries(id, listing.kind, entries, reuse: SecondaryPageReuse(pages: read.pages, edit: edit))
                    kept.append((entityID, attribute, index))
                } catch .corrupt {
                    continue
                }
            }
        }
        return (writes.values.sorted { $0.id < $1.id }, kept)
    }

    /// Appends the new pages of `writes` and their directory (§7.2).
    func appendSecondaryIndexes(_ writes: [SecondaryIndexWrite], to writer: inout PageBatchWriter) throws(StoreError) -> SecondaryIndexesWritten {
        guard !writes.isEmpty else { return SecondaryIndexesWritten() }
        var written = SecondaryIndexesWritten()
        /// Per index, its pages in order: a new page's number on `writer`, or an old page's offset.
        var planned: [(listing: SecondaryIndexListing, pages: [SecondaryPageSlot])] = []
        for write in writes {
            switch write {
            case .listedAgain(let listing):
                planned.append((listing, listing.pageOffsets.map { .old($0) }))
            case .entries(let id, let kind, let entries, let reuse):
                var layout = SecondaryPageLayout(entries: entries)
                try layout.place(reusing: reuse) { (range) throws(StoreError) -> Int in
                    let payload = SecondaryIndexCodec.encodePage(
                        entityID: UInt32(id.entityID), propertyIndex: UInt32(id.propertyIndex), kind: kind, entries: ArraySlice(entries.entries(range)))
                    return try writer.add(.secondaryIndex, payload)
                }
                written.starts[id] = layout.starts
                planned.append((SecondaryIndexListing(
                    entityID: UInt32(id.entityID), propertyIndex: UInt32(id.propertyIndex), kind: kind, entryCount: UInt64(entries.count), pageOffsets: []), layout.slots))
            }
        }
        try writer.encodeQueued()
        written.listings = planned.map { item -> SecondaryIndexListing in
            var listing = item.listing
            listing.pageOffsets = item.pages.map { slot in
                switch slot {
                case .new(let number): return writer.offset(of: number)
                case .old(let offset): return offset
                }
            }
            return listing
        }
        let directory = try writer.add(.secondaryIndexDirectory, SecondaryIndexCodec.encodeDirectory(written.listings))
        try writer.encodeQueued()
        written.directory = writer.offset(of: directory)
        return written
    }

    /// Makes the written indexes the file's (a checkpoint or compaction published them): the
    /// directory's listings, and `kept`, the indexes written as entries, held in memory with
    /// their new pages. Caller holds `rw` exclusively, publishing the root that names them.
    func publishSecondaryIndexes(_ written: SecondaryIndexesWritten, kept: [(entityID: Int, attribute: String, index: SecondaryIndex)], catalog: Catalog) {
        let listings = Dictionary(uniqueKeysWithValues: written.listings.map { (SecondaryIndexID($0), $0) })
        secondaryLock.withLock {
            persistedSecondary = listings
            // Saves wait while a checkpoint runs, so what it wrote is the published state; an
            // index a fetch read or built meanwhile holds the same and is replaced.
            for item in kept {
                var index = item.index
                if let property = catalog.entities[item.entityID].index(of: item.attribute),
                   let listing = listings[SecondaryIndexID(entityID: item.entityID, propertyIndex: property)],
                   let starts = written.starts[SecondaryIndexID(listing)] {
                    index.wrote(SecondaryIndexPages(listing: listing, starts: starts))
                }
                secondaryIndexes[item.entityID, default: [:]][item.attribute] = index
            }
        }
    }

    /// Every secondary index the file holds or this handle built, brought up to date and in
    /// index order, for a compaction's new file (§7.2, §10), with the indexes to keep. Caller
    /// holds `commitLock` and `rw` (shared), with the whole index loaded as `index`.
    func secondaryIndexesForRewrite(_ index: ObjectIndex, catalog: Catalog) throws(StoreError) -> (writes: [SecondaryIndexWrite], kept: [(entityID: Int, attribute: String, index: SecondaryIndex)]) {
        let (persisted, inMemory) = secondaryLock.withLock { (persistedSecondary, secondaryIndexes) }
        var wanted: [SecondaryIndexID: (attribute: String, kind: SecondaryIndex.Kind)] = [:]
        for listing in persisted.values {
            if let attribute = stillIndexed(listing, catalog: catalog) { wanted[SecondaryIndexID(listing)] = (attribute, listing.kind) }
        }
        for (entityID, byAttribute) in inMemory {
            for (attribute, built) in byAttribute {
                guard let property = catalog.entities[entityID].index(of: attribute) else { continue }
                wanted[SecondaryIndexID(entityID: entityID, propertyIndex: property)] = (attribute, built.kind)
            }
        }
        var writes: [SecondaryIndexWrite] = []
        var kept: [(entityID: Int, attribute: String, index: SecondaryIndex)] = []
        for (id, item) in wanted.sorted(by: { $0.key < $1.key }) where id.entityID < index.tables.count {
            var secondary = try secondaryIndex(entityID: id.entityID, attribute: item.attribute, kind: item.kind, table: index.tables[id.entityID])
            // A new file: no page of the old one is listed again.
            writes.append(.entries(id, item.kind, secondary.folded().entries, reuse: nil))
            kept.append((id.entityID, item.attribute, secondary))
        }
        return (writes, kept)
    }
}
