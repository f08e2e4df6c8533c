import CoreDataBinaryFormat
@testable import CoreDataBinaryStore
import CoreDataModel
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// The persisted object-ID index searched in place (Formats/binary-store.md §7): open reads only
/// the directory, lookups and saves work before the whole index is loaded, loading merges what
/// was saved since open, and a damaged index page found after open rebuilds the index without
/// losing anything. Also the primary-key limit (§5) that keeps `key + 1` from overflowing.
final class PersistedIndexTests: XCTestCase {
    /// Many index pages: ``perPage`` entries each (Formats/binary-store.md §7).
    private let itemCount: Int64 = 10_000
    /// The entries per index page a checkpoint writes for `itemCount` entries.
    private var perPage: Int64 { Int64(BinaryStoreLayout.indexEntriesPerWrittenPage(total: Int(itemCount))) }
    /// The index pages of `itemCount` entries: full pages and one with the rest.
    private var pageCount: Int { Int((itemCount + perPage - 1) / perPage) }
    /// The index page (by its place in the directory) that key `key` of `1...itemCount` is in.
    private func page(of key: Int64) -> Int { Int((key - 1) / perPage) }

    private func open(_ path: String) throws -> BinaryStore {
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        return try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(["NSStoreUUID": UUID().uuidString]), options: options)
    }

    /// A checkpointed store of `itemCount` items, keys 1 through `itemCount`.
    private func checkpointedStore() throws -> String {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: (1...itemCount).map { BinaryTestModel.item($0, owner: nil) }))
        try store.close()
        return path
    }

    private func item(_ key: Int64) -> StoreObjectID { StoreObjectID(entityName: "Item", primaryKey: key) }

    func testLookupsAndSavesBeforeTheIndexIsLoadedAgreeWithTheLoadedIndex() throws {
        let path = try checkpointedStore()
        let store = try open(path)
        XCTAssertEqual(store.openReport, BinaryStore.OpenReport())
        for key: Int64 in [1, 2, 3_276, 3_277, 5_000, itemCount] {
            XCTAssertEqual(try store.row(for: item(key))?.objectID, item(key), "key \(key)")
        }
        XCTAssertNil(try store.row(for: item(itemCount + 1)))
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Owner", primaryKey: 1)))
        XCTAssertFalse(store.indexLoaded, "point lookups must not load the whole index")

        // Saves before the load go to the overlay: a new key above every persisted one, an
        // update and a delete.
        let newKey = try XCTUnwrap(store.newPrimaryKeys(entityName: "Item", count: 1).first)
        XCTAssertEqual(newKey, itemCount + 1)
        var updated = try XCTUnwrap(store.row(for: item(1)))
        updated.slots[try XCTUnwrap(updated.layout.slot(of: "text"))] = .string("first")
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.item(newKey, owner: nil)], updated: [updated], deleted: [(item(5_000), 1)]))
        XCTAssertFalse(store.indexLoaded)
        XCTAssertNil(try store.row(for: item(5_000)))
        XCTAssertEqual(try store.row(for: item(newKey))?.version, 1)
        XCTAssertEqual(try store.row(for: item(1))?.version, 2)
        XCTAssertEqual(try store.row(for: item(1))?["text"], .string("first"))

        // A count needs the whole index: the overlay is merged into it.
        XCTAssertEqual(try store.objectCounts()["Item"], Int(itemCount))
        XCTAssertTrue(store.indexLoaded)
        XCTAssertNil(try store.row(for: item(5_000)))
        XCTAssertEqual(try store.row(for: item(1))?.version, 2)
        XCTAssertEqual(try store.newPrimaryKeys(entityName: "Item", count: 1), [itemCount + 2])
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()

        let reopened = try open(path)
        XCTAssertNil(try reopened.row(for: item(5_000)))
        XCTAssertEqual(try reopened.row(for: item(newKey))?.version, 1)
        XCTAssertEqual(try reopened.objectCounts()["Item"], Int(itemCount))
        try reopened.close()
    }

    /// The search guesses a key's page from its place between two pages' first keys; keys that
    /// are not dense (a run far above the rest, gaps, a second entity's pages after the first's)
    /// make wrong guesses, which must cost reads, never answers.
    func testLookupsBeforeTheIndexIsLoadedFindSkewedKeysAcrossEntities() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        let dense = Array(Int64(1)...4_000)
        let far = Array(stride(from: Int64(1_000_000), through: 1_060_000, by: 10))
        let owners = Array(stride(from: Int64(2), through: 20_000, by: 2))
        _ = try store.save(StoreChangeSet(inserted: (dense + far).map { BinaryTestModel.item($0, owner: nil) }
            + owners.map { BinaryTestModel.owner($0, "owner \($0)", items: []) }))
        try store.close()

        let present: [(String, Int64)] = [("Item", 1), ("Item", 3_276), ("Item", 3_277), ("Item", 4_000), ("Item", 1_000_000),
                                          ("Item", 1_030_000), ("Item", 1_060_000), ("Owner", 2), ("Owner", 10_000), ("Owner", 20_000)]
        // Any key a caller names, however far outside the saved ones.
        let absent: [(String, Int64)] = [("Item", 4_001), ("Item", 500_000), ("Item", 1_000_005), ("Item", 1_060_010),
                                         ("Owner", 1), ("Owner", 9_999), ("Owner", 20_002),
                                         ("Item", .min), ("Item", -1), ("Item", 0), ("Item", .max), ("Owner", .min), ("Owner", .max)]
        // Each lookup in a new handle, so each search starts with no page in the cache.
        for (entity, key) in present + absent {
            let reopened = try open(path)
            defer { try? reopened.close() }
            let id = StoreObjectID(entityName: entity, primaryKey: key)
            let found = try reopened.row(for: id)
            XCTAssertEqual(found?.objectID, present.contains { $0 == (entity, key) } ? id : nil, "\(entity) \(key)")
            XCTAssertFalse(reopened.indexLoaded, "\(entity) \(key): a point lookup must not load the whole index")
        }
        // And many in one handle, checked against the keys saved.
        let reopened = try open(path)
        defer { try? reopened.close() }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let key = Int64.random(in: 1...1_060_020, using: &random)
            let saved = key <= 4_000 || (key >= 1_000_000 && key <= 1_060_000 && key % 10 == 0)
            XCTAssertEqual(try reopened.row(for: item(key)) != nil, saved, "Item \(key)")
        }
        XCTAssertFalse(reopened.indexLoaded)
    }

    func testDamagedIndexPageFoundAfterOpenRebuildsTheIndexAndLosesNothing() throws {
        let path = try checkpointedStore()
        // Flip a byte inside the second index page; the directory stays intact.
        let file = try POSIXFileSystem().open(path, create: false, readOnly: false)
        let bytes = try file.read(at: 0, count: Int(try file.size()))
        var root: RootSlot?
        for offset in BinaryStoreLayout.rootSlotOffsets {
            if case .valid(let slot) = RootSlot.decode(Array(bytes[offset..<(offset + BinaryStoreLayout.rootSlotSize)])),
               slot.generation > (root?.generation ?? 0) { root = slot }
        }
        let current = try XCTUnwrap(root)
        let (_, directoryPayload) = try BinaryStore.readPage(file, at: current.indexDirectoryOffset, dataEnd: current.dataEnd)
        let directory = try IndexPageCodec.decodeDirectory(directoryPayload, pageOffset: current.indexDirectoryOffset)
        XCTAssertEqual(directory.pageOffsets.count, pageCount)
        XCTAssertGreaterThan(page(of: 4_000), 0)
        let damaged = directory.pageOffsets[page(of: 4_000)]
        let at = damaged + UInt64(BinaryStoreLayout.pageHeaderSize) + 100
        try file.write([bytes[Int(at)] ^ 0xFF], at: at)
        try file.sync()
        file.close()

        let store = try open(path)
        XCTAssertNil(store.openReport.rebuiltIndex, "only the directory is read at open")
        XCTAssertNil(store.indexRebuiltAfterOpen)
        // Key 4,000 lives in the damaged page: its first read finds the damage and rebuilds.
        XCTAssertEqual(try store.row(for: item(4_000))?.objectID, item(4_000))
        XCTAssertNotNil(store.indexRebuiltAfterOpen)
        XCTAssertTrue(store.indexLoaded)
        XCTAssertEqual(try store.objectCounts()["Item"], Int(itemCount))
        XCTAssertEqual(try store.newPrimaryKeys(entityName: "Item", count: 1), [itemCount + 1])
        XCTAssertFalse(try store.verify().isIntact, "verify reports the damaged page")
        // The next checkpoint writes a fresh index; a close without a save leaves the file as
        // it was.
        _ = try store.save(StoreChangeSet(deleted: [(item(1), 1)]))
        try store.close()
        let reopened = try open(path)
        XCTAssertEqual(try reopened.row(for: item(4_000))?.objectID, item(4_000))
        XCTAssertNil(try reopened.row(for: item(1)))
        // The damaged page stays in the file, superseded, until a compaction copies the live data.
        XCTAssertFalse(try reopened.verify().isIntact)
        try reopened.compact()
        let verification = try reopened.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        XCTAssertEqual(try reopened.objectCounts()["Item"], Int(itemCount) - 1)
        try reopened.close()
    }

    /// A checkpoint sizes index pages by the index (§7): 204 entries (about 4 KiB) up to 835,584
    /// entries, then as many as keep the directory at 4,096 pages, up to full pages of 3,276.
    func testIndexPagesAreSizedByTheIndex() throws {
        let sizes: [(total: Int, perPage: Int)] = [
            (0, 204), (1, 204), (10_000, 204), (835_584, 204), (835_585, 205), (1_000_000, 245),
            (10_000_000, 2_442), (13_418_496, 3_276), (13_418_497, 3_276), (Int.max, 3_276),
        ]
        for (total, perPage) in sizes {
            XCTAssertEqual(BinaryStoreLayout.indexEntriesPerWrittenPage(total: total), perPage, "\(total) entries")
        }
        // Written so: every page but the last two holds that many; a read-ahead of one such
        // page's decoded bytes covers each page in one read.
        let path = try checkpointedStore()
        let store = try open(path)
        defer { try? store.close() }
        let offsets = try indexPages(store)
        XCTAssertEqual(offsets.count, pageCount)
        for offset in offsets {
            let entries = try BinaryStore.checkedIndexPage(store.dataFile, at: offset, root: store.root, entityCount: store.catalog.entities.count)
            XCTAssertLessThanOrEqual(Int64(entries.count), perPage)
            XCTAssertGreaterThan(entries.count, 0)
        }
        XCTAssertEqual(BinaryStore.indexPageReadAhead(objectCount: UInt64(itemCount)), BinaryStoreLayout.pageHeaderSize + 4 + 20 * 204)
    }

    /// A store whose index an earlier writer put in full 64 KiB pages (3,276 entries, as every
    /// checkpoint wrote them before pages were sized by the index) is read, changed and
    /// checkpointed by today's writer: the directory then lists old full pages beside new pages
    /// of 204 entries (§7: "readers take any page of 1 to 3,276 entries"). A full page is longer
    /// than today's read-ahead, so each read of one takes a second read; lookups before and
    /// after the index is loaded, the checkpoint that reuses the old pages, a reopen, `verify`
    /// and compaction all agree.
    func testADirectoryOfOldFullPagesAndNewSmallPagesReadsRight() throws {
        let path = try checkpointedStore()
        var store = try open(path)
        let (root, slot, entityCount) = store.rw.withReadLock { (store.root, store.activeSlot, store.catalog.entities.count) }
        var entries: [IndexEntry] = []
        for offset in try indexPages(store) {
            entries += try BinaryStore.checkedIndexPage(store.dataFile, at: offset, root: root, entityCount: entityCount)
        }
        try store.close()
        XCTAssertEqual(entries.count, Int(itemCount))

        // The index again, in full pages, appended with a root that lists them.
        let full = BinaryStoreLayout.indexEntriesPerPage
        var checkpoint = try AppendedCheckpoint(path: path, root: root, slot: slot)
        var fullPages: [UInt64] = []
        for start in stride(from: 0, to: entries.count, by: full) {
            fullPages.append(checkpoint.append(.index, IndexPageCodec.encodePage(entries[start..<min(start + full, entries.count)])))
        }
        XCTAssertEqual(fullPages.count, 4, "10,000 entries: three full pages and one of 172")
        checkpoint.root.indexDirectoryOffset = checkpoint.append(.indexDirectory, IndexPageCodec.encodeDirectory(pageOffsets: fullPages, totalEntries: UInt64(entries.count)))
        try checkpoint.write(to: path)
        XCTAssertGreaterThan(BinaryStoreLayout.pageHeaderSize + 4 + 20 * full, BinaryStore.indexPageReadAhead(objectCount: UInt64(itemCount)))

        // Lookups before the index is loaded, at each page's ends, then a change in the second page.
        store = try open(path)
        XCTAssertEqual(try indexPages(store), fullPages)
        for key in [1, Int64(full), Int64(full) + 1, 2 * Int64(full), 2 * Int64(full) + 1, 3 * Int64(full) + 1, itemCount] {
            XCTAssertEqual(try store.row(for: item(key))?.objectID, item(key), "key \(key)")
        }
        XCTAssertNil(try store.row(for: item(itemCount + 1)))
        XCTAssertFalse(store.indexLoaded)
        var changed = try XCTUnwrap(store.row(for: item(5_000)))
        changed.slots[try XCTUnwrap(changed.layout.slot(of: "text"))] = .string("changed")
        _ = try store.save(StoreChangeSet(updated: [changed]))
        try store.checkpoint()
        XCTAssertFalse(store.indexLoaded, "the checkpoint read only the page the change fell in")
        let mixed = try indexPages(store)
        let (mixedRoot, mixedEntityCount) = store.rw.withReadLock { (store.root, store.catalog.entities.count) }
        var sizes: [Int] = []
        var previous: IndexEntry?
        for offset in mixed {
            let page = try BinaryStore.checkedIndexPage(store.dataFile, at: offset, root: mixedRoot, entityCount: mixedEntityCount)
            sizes.append(page.count)
            if let previous, let first = page.first {
                XCTAssertLessThan(IndexKey(previous), IndexKey(first), "pages in order")
            }
            previous = page.last
        }
        XCTAssertEqual(Array(mixed.prefix(1)), [fullPages[0]], "the first full page is listed again")
        XCTAssertEqual(Array(mixed.suffix(2)), Array(fullPages.suffix(2)), "so are the last two")
        XCTAssertEqual(sizes.first, full)
        XCTAssertTrue(sizes.dropFirst().dropLast(2).allSatisfy { $0 <= BinaryStoreLayout.indexEntriesPerWrittenPageAtLeast }, "\(sizes)")
        XCTAssertEqual(sizes.reduce(0, +), Int(itemCount))
        try store.close()

        store = try open(path)
        for key in [1, Int64(full), Int64(full) + 1, 4_999, 5_000, 5_001, 2 * Int64(full), 2 * Int64(full) + 1, itemCount] {
            XCTAssertEqual(try store.row(for: item(key))?.objectID, item(key), "key \(key) after the reopen")
        }
        XCTAssertEqual(try store.row(for: item(5_000))?["text"], .string("changed"))
        XCTAssertEqual(try store.objectCounts()["Item"], Int(itemCount))
        XCTAssertTrue(store.indexLoaded)
        for key in 1...itemCount where key % 97 == 0 {
            XCTAssertEqual(try store.row(for: item(key))?.objectID, item(key), "key \(key), index loaded")
        }
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try store.compact()
        XCTAssertTrue(try indexPages(store).count > mixed.count, "compaction writes every page at today's size")
        XCTAssertEqual(try store.objectCounts()["Item"], Int(itemCount))
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()
    }

    /// The index pages of the store's current checkpoint, as its directory lists them.
    private func indexPages(_ store: BinaryStore) throws -> [UInt64] {
        try XCTUnwrap(try BinaryStore.readIndexDirectory(store.dataFile, root: store.root)).pageOffsets
    }

    /// A checkpoint lists again every index page no change falls in (§9), whether the whole
    /// index is in memory or not, and what it writes reads back the same after a reopen.
    func testCheckpointsListUnchangedIndexPagesAgain() throws {
        let path = try checkpointedStore()
        let store = try open(path)
        let before = try indexPages(store)
        XCTAssertEqual(before.count, pageCount, "10,000 entries fill pages of \(perPage) and part of one more")
        XCTAssertGreaterThanOrEqual(pageCount, 4)
        let last = pageCount - 1

        // Without the whole index: an update in the first page and an insert after the last key.
        var first = try XCTUnwrap(store.row(for: item(1)))
        first.slots[try XCTUnwrap(first.layout.slot(of: "text"))] = .string("first")
        let newKey = try XCTUnwrap(store.newPrimaryKeys(entityName: "Item", count: 1).first)
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.item(newKey, owner: nil)], updated: [first]))
        try store.checkpoint()
        XCTAssertFalse(store.indexLoaded, "a checkpoint needs only the changes and the pages they fall in")
        let afterFirst = try indexPages(store)
        XCTAssertEqual(afterFirst.count, pageCount)
        XCTAssertEqual(Array(afterFirst[1..<last]), Array(before[1..<last]), "the middle pages are listed again")
        XCTAssertNotEqual(afterFirst[0], before[0])
        XCTAssertNotEqual(afterFirst[last], before[last])
        XCTAssertEqual(try store.row(for: item(1))?["text"], .string("first"))
        XCTAssertEqual(try store.row(for: item(newKey))?.version, 1)
        XCTAssertEqual(try store.row(for: item(5_000))?.version, 1)

        // With the whole index loaded: a delete in one page inside the index only.
        let deletedPage = page(of: 5_000)
        XCTAssertTrue((1..<last).contains(deletedPage))
        XCTAssertEqual(try store.objectCounts()["Item"], Int(itemCount) + 1)
        XCTAssertTrue(store.indexLoaded)
        _ = try store.save(StoreChangeSet(deleted: [(item(5_000), 1)]))
        try store.checkpoint()
        let afterSecond = try indexPages(store)
        XCTAssertEqual(afterSecond.count, pageCount)
        XCTAssertEqual(afterSecond[0], afterFirst[0], "a page the last checkpoint wrote is listed again too")
        XCTAssertNotEqual(afterSecond[deletedPage], afterFirst[deletedPage])
        XCTAssertEqual(Array(afterSecond[..<deletedPage]), Array(afterFirst[..<deletedPage]))
        XCTAssertEqual(Array(afterSecond[(deletedPage + 1)...]), Array(afterFirst[(deletedPage + 1)...]))
        XCTAssertEqual(store.root.objectCount, UInt64(itemCount))
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()

        let reopened = try open(path)
        XCTAssertNil(try reopened.row(for: item(5_000)))
        XCTAssertEqual(try reopened.row(for: item(1))?["text"], .string("first"))
        XCTAssertEqual(try reopened.row(for: item(newKey))?.version, 1)
        XCTAssertEqual(try reopened.objectCounts()["Item"], Int(itemCount))
        let verification = try reopened.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try reopened.close()
    }

    /// Changes in more than half the index pages, checkpointed without the whole index in
    /// memory: the index is loaded and written whole (§9, step 2), and reads back the same.
    func testChangesInMostPagesWriteTheWholeIndex() throws {
        let path = try checkpointedStore()
        let store = try open(path)
        let before = try indexPages(store)
        var updated: [StoreRow] = []
        // A key in three of every four pages.
        let keys = (0..<pageCount).filter { $0 % 4 != 3 }.map { Int64($0) * perPage + 1 }
        for key in keys {
            var row = try XCTUnwrap(store.row(for: item(key)))
            row.slots[try XCTUnwrap(row.layout.slot(of: "text"))] = .string("changed \(key)")
            updated.append(row)
        }
        _ = try store.save(StoreChangeSet(updated: updated))
        try store.checkpoint()
        XCTAssertTrue(store.indexLoaded, "three of four pages changed: the whole index is written")
        XCTAssertTrue(Set(try indexPages(store)).isDisjoint(with: before))
        try store.close()
        let reopened = try open(path)
        for key in keys { XCTAssertEqual(try reopened.row(for: item(key))?["text"], .string("changed \(key)")) }
        XCTAssertEqual(try reopened.objectCounts()["Item"], Int(itemCount))
        XCTAssertTrue(try reopened.verify().isIntact)
        try reopened.close()
    }

    /// A checkpoint without the whole index that meets a damaged index page (reading first keys
    /// to place a change) rebuilds the index from the data pages and writes it whole: the close
    /// succeeds and nothing is lost.
    func testACheckpointThatMeetsADamagedIndexPageRebuildsAndWritesTheWholeIndex() throws {
        let path = try checkpointedStore()
        let file = try POSIXFileSystem().open(path, create: false, readOnly: false)
        let pages = try XCTUnwrap(try BinaryStore.readIndexDirectory(file, root: try XCTUnwrap(Self.currentRoot(file)))).pageOffsets
        // The last page: the new key below falls in it, so the search for its page reads it
        // (whatever order the search reads pages in).
        // A byte near the payload's start: the last page may hold only a few entries.
        let at = try XCTUnwrap(pages.last) + UInt64(BinaryStoreLayout.pageHeaderSize) + 10
        let byte = try file.read(at: at, count: 1)
        try file.write([byte[0] ^ 0xFF], at: at)
        try file.sync()
        file.close()

        let store = try open(path)
        // A key past every persisted one, saved without asking the store for keys: nothing reads
        // an index page before the checkpoint's search for the page the key falls in.
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.item(itemCount + 5, owner: nil)]))
        XCTAssertNil(store.indexRebuiltAfterOpen)
        try store.close()
        XCTAssertNotNil(store.indexRebuiltAfterOpen, "the checkpoint found the damage and rebuilt the index")

        let reopened = try open(path)
        XCTAssertEqual(try reopened.row(for: item(itemCount + 5))?.version, 1)
        XCTAssertEqual(try reopened.row(for: item(7_000))?.objectID, item(7_000))
        XCTAssertEqual(try reopened.objectCounts()["Item"], Int(itemCount) + 1)
        XCTAssertNil(reopened.indexRebuiltAfterOpen, "the new index pages are intact")
        try reopened.close()
    }

    private static func currentRoot(_ file: any StoreFile) throws -> RootSlot? {
        var root: RootSlot?
        for offset in BinaryStoreLayout.rootSlotOffsets {
            let bytes = try file.read(at: UInt64(offset), count: BinaryStoreLayout.rootSlotSize)
            if case .valid(let slot) = RootSlot.decode(bytes), slot.generation > (root?.generation ?? 0) { root = slot }
        }
        return root
    }

    /// Random inserts, updates and deletes over three entities, checkpointed with and without the
    /// whole index in memory and reopened now and then, always read back as a reference
    /// dictionary says: reusing pages never loses or resurrects an entry.
    func testCheckpointsReusingPagesAgreeWithAReference() throws {
        let path = BinaryTestModel.temporaryPath()
        var store = try open(path)
        var versions: [StoreObjectID: Int64] = [:]
        var random = SeededGenerator(seed: 0x1D3_5EED)
        func insert(_ entity: String, _ count: Int) throws -> [StoreRow] {
            try store.newPrimaryKeys(entityName: entity, count: count).map { key in
                let row = entity == "Item" ? BinaryTestModel.item(key, owner: nil)
                    : entity == "Tag" ? BinaryTestModel.tag(key, "tag \(key)") : BinaryTestModel.owner(key, "owner \(key)", items: [])
                versions[row.objectID] = 1
                return row
            }
        }
        _ = try store.save(StoreChangeSet(inserted: try insert("Item", 7_000) + insert("Tag", 4_000) + insert("Owner", 2_000)))
        try store.checkpoint()
        // Pages listed again by checkpoints without and with the whole index loaded.
        var reused = [0, 0]
        var checkpointsWithoutTheIndex = 0
        for round in 0..<24 {
            let live = versions.keys.sorted { ($0.entityName, $0.primaryKey) < ($1.entityName, $1.primaryKey) }
            var updated: [StoreRow] = []
            var deleted: [(StoreObjectID, Int64)] = []
            var picked: Set<StoreObjectID> = []
            // Changes bunched in a few places (as an app's are) and scattered ones.
            let center = Int(random.next() % UInt64(live.count))
            for step in 0..<Int(random.next() % 40) {
                let id = live[(center + step * 3) % live.count]
                guard picked.insert(id).inserted, var row = try store.row(for: id) else { continue }
                row.version = try XCTUnwrap(versions[id])
                if random.next() % 3 == 0 {
                    deleted.append((id, row.version))
                    versions[id] = nil
                } else {
                    updated.append(row)
                    versions[id] = row.version + 1
                }
            }
            for _ in 0..<Int(random.next() % 5) {
                let id = live[Int(random.next() % UInt64(live.count))]
                guard picked.insert(id).inserted, versions[id] != nil else { continue }
                deleted.append((id, try XCTUnwrap(versions[id])))
                versions[id] = nil
            }
            let entity = ["Item", "Tag", "Owner"][Int(random.next() % 3)]
            let inserted = try insert(entity, Int(random.next() % 2_000))
            _ = try store.save(StoreChangeSet(inserted: inserted, updated: updated, deleted: deleted))
            if random.next() % 3 == 0 { _ = try store.objectCounts() }
            let loaded = store.indexLoaded
            let pagesBefore = Set(try indexPages(store))
            try store.checkpoint()
            reused[loaded ? 1 : 0] += try indexPages(store).count { pagesBefore.contains($0) }
            XCTAssertEqual(store.root.objectCount, UInt64(versions.count), "round \(round)")
            // Changes to more than an eighth of the objects load the index first (§9).
            if !store.indexLoaded { checkpointsWithoutTheIndex += 1 }
            // Reopened, the store has only the persisted pages until something loads them.
            if random.next() % 3 != 0 {
                try store.close()
                store = try open(path)
            }
            for (id, version) in versions where random.next() % 64 == 0 {
                XCTAssertEqual(try store.row(for: id)?.version, version, "round \(round): \(id)")
            }
            for (id, _) in deleted { XCTAssertNil(try store.row(for: id), "round \(round): \(id)") }
        }
        XCTAssertGreaterThan(reused[0], 10)
        XCTAssertGreaterThan(reused[1], 10)
        XCTAssertGreaterThan(checkpointsWithoutTheIndex, 3)
        try store.close()
        let reopened = try open(path)
        let counts = try reopened.objectCounts()
        for entity in ["Item", "Tag", "Owner"] {
            XCTAssertEqual(counts[entity, default: 0], versions.keys.count { $0.entityName == entity }, entity)
        }
        for (id, version) in versions { XCTAssertEqual(try reopened.row(for: id)?.version, version, "\(id)") }
        let verification = try reopened.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try reopened.close()
    }

    /// Keys stop at 2^62, so one more than any key a file holds never overflows: an entity that
    /// used them all gets a clear error, before and after a reopen.
    func testPrimaryKeysStopAtTheLimitWithAnError() throws {
        let largest = BinaryStoreLayout.largestPrimaryKey
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        store.keyLock.withLock { store.nextKeys["Item"] = largest - 1 }
        XCTAssertEqual(try store.newPrimaryKeys(entityName: "Item", count: 2), [largest - 1, largest])
        XCTAssertThrowsError(try store.newPrimaryKeys(entityName: "Item", count: 1)) { error in
            XCTAssertTrue("\(error)".contains("2^62"), "\(error)")
        }
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [BinaryTestModel.item(largest + 1, owner: nil)])))
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.item(largest, owner: nil)]))
        try store.close()

        let reopened = try open(path)
        XCTAssertEqual(try reopened.row(for: item(largest))?.version, 1)
        XCTAssertThrowsError(try reopened.newPrimaryKeys(entityName: "Item", count: 1))
        XCTAssertEqual(try reopened.newPrimaryKeys(entityName: "Owner", count: 1), [1])
        try reopened.close()
    }

    func testDecodersRejectKeysAboveTheLimit() throws {
        let tooLarge = BinaryStoreLayout.largestPrimaryKey + 1
        let page = IndexPageCodec.encodePage([IndexEntry(entityID: 0, primaryKey: tooLarge, location: 4_096 << 16)][...])
        XCTAssertThrowsError(try IndexPageCodec.decodePage(page, pageOffset: 4_096))
        var catalog = Catalog()
        _ = catalog.register(entity: "Item", properties: ["text"])
        catalog.setNextPrimaryKey(Int64.max, of: "Item")
        XCTAssertThrowsError(try Catalog(decoding: catalog.encoded()))
        catalog = Catalog()
        _ = catalog.register(entity: "Item", properties: [])
        var writer = ByteWriter()
        RecordCodec.encodeTombstone(item(Int64.max), version: 1, catalog: catalog, into: &writer)
        XCTAssertThrowsError(try RecordCodec.decodeHeader(writer.bytes, catalog: catalog))
    }
}
