import CoreDataBinaryFormat
@testable import CoreDataBinaryStore
import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

// Foundation declares these names too; here they mean the working classes.
private typealias NSPredicate = CoreDataPredicate.NSPredicate
private typealias NSSortDescriptor = CoreDataPredicate.NSSortDescriptor

/// Page bounds in the file (format version 4, Formats/binary-store.md §7.3): checkpoints and
/// compaction write the bounds of every data page they write, so the first top-k scan after
/// open passes over pages too; checkpoints list the old bounds pages again and fold a small
/// last one into their own; damage leaves scans to learn bounds, and every fetch matches the
/// reference evaluator throughout.
final class PersistedPageBoundsTests: XCTestCase {
    private static let model = PersonModel.model

    private func open(_ path: String) throws -> BinaryStore { try PersonModel.open(path) }

    /// Person `key`: names in no order of keys, long enough that a few hundred fill a page.
    private func person(_ key: Int64, _ random: inout SeededGenerator, version: Int64 = 0) -> StoreRow {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let start = String((0..<4).map { _ in letters[Int(random.next() % 26)] })
        var values: [String: StoreValue] = ["name": .string("\(start), person number \(key) with a tail"), "age": .integer(Int64(random.next() % 100))]
        if key % 3 == 0 { values["note"] = .string("note \(key)") }
        return StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: key), version: version, values: values)
    }

    private struct Rows {
        var random = SeededGenerator(seed: 0xB0_04D5)
        var rows: [StoreObjectID: StoreRow] = [:]
        var nextKey: Int64 = 1
    }

    private func insert(_ count: Int, into store: BinaryStore, _ state: inout Rows) throws {
        var inserted: [StoreRow] = []
        for _ in 0..<count {
            var new = person(state.nextKey, &state.random)
            state.nextKey += 1
            inserted.append(new)
            new.version = 1
            state.rows[new.objectID] = new
        }
        _ = try store.save(StoreChangeSet(inserted: inserted))
    }

    /// One top-k fetch against the reference; returns the records passed over with their pages.
    @discardableResult
    private func fetch(_ store: BinaryStore, _ rows: [StoreObjectID: StoreRow], ascending: Bool = true, _ context: String) throws -> Int {
        let entity = try XCTUnwrap(Self.model.entitiesByName["Person"])
        let before = store.pageSortBounds.counts.passedOver
        let request = StoreFetchRequest(
            entity: entity, predicate: NSPredicate(format: "age > 50"), sortDescriptors: [NSSortDescriptor(key: "name", ascending: ascending)], limit: 20)
        let expected = StoreQuery.run(request, candidates: Array(rows.values), resolve: { _ in nil }, entities: Self.model.entitiesByName)
        guard case .rows(let got) = try store.execute(request) else { return -1 }
        XCTAssertEqual(got.map(\.objectID), expected.map(\.objectID), context)
        XCTAssertEqual(got.count, 20, context)
        return store.pageSortBounds.counts.passedOver - before
    }

    private func listings(_ store: BinaryStore) throws -> [PageBoundsListing] {
        let (directory, dataEnd) = store.rw.withReadLock { (store.root.pageBoundsDirectoryOffset, store.root.dataEnd) }
        guard directory != 0 else { return [] }
        return try store.readPageBoundsDirectory(at: directory, dataEnd: dataEnd)
    }

    func testTheFirstTopKScanAfterOpenPassesOverPages() throws {
        let path = BinaryTestModel.temporaryPath()
        var store = try open(path)
        var state = Rows()
        for _ in 0..<3 {
            try insert(3_000, into: store, &state)
            try store.checkpoint()
        }
        try store.close()

        store = try open(path)
        XCTAssertEqual(store.pageSortBounds.counts.pages, 0, "open reads no bounds")
        XCTAssertGreaterThan(try fetch(store, state.rows, "first fetch after open"), 1_000, "without bounds from the file it passes over nothing")
        XCTAssertGreaterThan(store.pageSortBounds.counts.pages, 40, "the file's bounds, name and note of every page")
        XCTAssertGreaterThan(try fetch(store, state.rows, ascending: false, "descending"), 1_000)

        // Updates move records out of their pages (the old bounds still hold), deletes leave
        // tombstones, and the log's records are never passed over.
        var updated: [StoreRow] = []
        var deleted: [(StoreObjectID, Int64)] = []
        for id in state.rows.keys.sorted(by: { $0.primaryKey < $1.primaryKey }) where state.random.next() % 7 == 0 {
            let version = try XCTUnwrap(state.rows[id]?.version)
            if id.primaryKey % 2 == 0 {
                deleted.append((id, version))
                state.rows[id] = nil
            } else {
                var changed = person(id.primaryKey, &state.random, version: version)
                updated.append(changed)
                changed.version += 1
                state.rows[id] = changed
            }
        }
        _ = try store.save(StoreChangeSet(updated: updated, deleted: deleted))
        try fetch(store, state.rows, "updates in the log")
        try store.checkpoint()
        try fetch(store, state.rows, "checkpointed")
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()

        store = try open(path)
        XCTAssertGreaterThan(try fetch(store, state.rows, "reopened after updates"), 0)
        try store.compact()
        try store.close()
        store = try open(path)
        XCTAssertGreaterThan(try fetch(store, state.rows, "reopened after compaction"), 1_000)
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        XCTAssertEqual(verification.pagesByKind["page-bounds directory page"], 1)
        try store.close()
    }

    /// Listings across checkpoints: a full page is listed again at its offset, a small last page
    /// is folded into the next checkpoint's, and a checkpoint without a data page row keeps
    /// the directory it had.
    func testCheckpointsListFullPagesAgainAndFoldASmallLastOne() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        var state = Rows()
        try insert(20_000, into: store, &state)
        try store.checkpoint()
        let first = try listings(store)
        XCTAssertEqual(first.count, 1)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(first.first).entryCount, UInt32(PageBoundsLayout.fewestEntriesKept))

        try insert(50, into: store, &state)
        try store.checkpoint()
        let second = try listings(store)
        XCTAssertEqual(second.count, 2)
        XCTAssertEqual(second.first, first.first, "a full page is listed again")

        try insert(50, into: store, &state)
        try store.checkpoint()
        let third = try listings(store)
        XCTAssertEqual(third.count, 2)
        XCTAssertEqual(third.first, first.first)
        XCTAssertNotEqual(third.last?.offset, second.last?.offset, "the small page is written again with the new entries")
        XCTAssertEqual(third.last?.entryCount, (second.last?.entryCount ?? 0) * 2, "both checkpoints' single page, name and note")

        // Only a tombstone: no row, no bound, the same directory.
        let directory = store.rw.withReadLock { store.root.pageBoundsDirectoryOffset }
        let victim = StoreObjectID(entityName: "Person", primaryKey: 5)
        _ = try store.save(StoreChangeSet(deleted: [(victim, try XCTUnwrap(state.rows[victim]?.version))]))
        state.rows[victim] = nil
        try store.checkpoint()
        XCTAssertEqual(store.rw.withReadLock { store.root.pageBoundsDirectoryOffset }, directory)
        try fetch(store, state.rows, "after the checkpoints")
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()
    }

    /// A damaged page-bounds page: fetches stay right and learn bounds themselves, `verify`
    /// names the page, and the next checkpoint starts a directory of its own pages.
    func testDamagedBoundsAreIgnoredAndTheNextCheckpointStartsOver() throws {
        let path = BinaryTestModel.temporaryPath()
        var store = try open(path)
        var state = Rows()
        try insert(6_000, into: store, &state)
        try store.checkpoint()
        let page = try XCTUnwrap(try listings(store).first)
        try store.close()

        // One byte of the page's stored payload flipped: its checksum fails.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: page.offset + UInt64(BinaryStoreLayout.pageHeaderSize) + 5)
        let byte = try XCTUnwrap(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: page.offset + UInt64(BinaryStoreLayout.pageHeaderSize) + 5)
        try handle.write(contentsOf: Data([byte ^ 0x40]))
        try handle.close()

        store = try open(path)
        let verification = try store.verify()
        XCTAssertFalse(verification.isIntact)
        XCTAssertTrue("\(verification)".contains("data file offset \(page.offset)"), "\(verification)")
        XCTAssertEqual(try fetch(store, state.rows, "damaged bounds: learns"), 0)
        XCTAssertTrue(store.pageSortBounds.persistedDamaged)
        XCTAssertGreaterThan(try fetch(store, state.rows, "learned bounds"), 500)
        try insert(100, into: store, &state)
        try store.checkpoint()
        let fresh = try listings(store)
        XCTAssertEqual(fresh.count, 1)
        XCTAssertNotEqual(fresh.first?.offset, page.offset, "the damaged page is not listed again")
        try store.close()

        store = try open(path)
        try fetch(store, state.rows, "after the new directory")
        XCTAssertFalse(store.pageSortBounds.persistedDamaged)
        try store.compact()
        XCTAssertTrue(try store.verify().isIntact, "compaction writes every bound anew")
        try store.close()
    }

    /// Bounds that decode but are not what their page holds: `verify` recomputes each entry
    /// from its data page and names the page. (They are appended with a root naming them, as a
    /// checkpoint would write them.)
    func testVerifyReportsBoundsThatDifferFromTheirPage() throws {
        let path = BinaryTestModel.temporaryPath()
        var store = try open(path)
        var state = Rows()
        try insert(2_000, into: store, &state)
        try store.checkpoint()
        let listing = try XCTUnwrap(try listings(store).first)
        let (root, slot, catalog) = store.rw.withReadLock { (store.root, store.activeSlot, store.catalog) }
        var entries = try store.readPageBoundsPage(listing, dataEnd: root.dataEnd, catalog: catalog)
        try store.close()

        let wrong = try XCTUnwrap(entries.firstIndex { $0.bounds != .unbounded })
        entries[wrong].bounds.low += 1
        var checkpoint = try AppendedCheckpoint(path: path, root: root, slot: slot)
        let pageOffset = checkpoint.append(.pageBounds, PageBoundsCodec.encodePage(entries[...]))
        let directoryOffset = checkpoint.append(.pageBoundsDirectory, PageBoundsCodec.encodeDirectory([PageBoundsListing(offset: pageOffset, entryCount: UInt32(entries.count))]))
        checkpoint.root.pageBoundsDirectoryOffset = directoryOffset
        try checkpoint.write(to: path)

        store = try open(path)
        XCTAssertEqual(store.rw.withReadLock { store.root.pageBoundsDirectoryOffset }, directoryOffset)
        let verification = try store.verify()
        XCTAssertFalse(verification.isIntact)
        XCTAssertTrue("\(verification)".contains("data file offset \(entries[wrong].pageOffset) (data page)"), "\(verification)")
        XCTAssertTrue("\(verification)".contains("its records give"), "\(verification)")
        try store.compact()
        XCTAssertTrue(try store.verify().isIntact, "compaction writes every bound anew")
        try fetch(store, state.rows, "compacted")
        try store.close()
    }

    /// A store of format version 3 is written on as version 3, without page bounds, so an older
    /// build still opens it; compaction makes it the current version, bounds and all.
    func testAVersion3StoreGetsBoundsAtCompaction() throws {
        let path = BinaryTestModel.temporaryPath()
        var store = try open(path)
        var state = Rows()
        try insert(3_000, into: store, &state)
        try store.checkpoint()
        try store.close()
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        var header = try FileHeader(decoding: Array(data[0..<64]))
        header.formatVersion = 3
        data.replaceSubrange(0..<64, with: header.encoded())
        let (root, slot) = try XCTUnwrap(RootSlot.newest(in: [UInt8](data)))
        let offset = BinaryStoreLayout.rootSlotOffsets[slot]
        data.replaceSubrange(offset..<(offset + BinaryStoreLayout.rootSlotSize), with: root.encoded(formatVersion: 3))
        try data.write(to: URL(fileURLWithPath: path))

        store = try open(path)
        XCTAssertEqual(try listings(store), [], "a version-3 root names no page bounds")
        XCTAssertEqual(try fetch(store, state.rows, "version 3: learns"), 0)
        try insert(100, into: store, &state)
        try store.checkpoint()
        XCTAssertEqual(try store.statistics().formatVersion, 3)
        XCTAssertEqual(try listings(store), [], "a version-3 checkpoint writes no page bounds")
        try store.compact()
        XCTAssertEqual(try store.statistics().formatVersion, BinaryStoreLayout.formatVersion)
        XCTAssertFalse(try listings(store).isEmpty)
        try store.close()
        store = try open(path)
        XCTAssertGreaterThan(try fetch(store, state.rows, "compacted to the current version"), 100)
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()
    }
}
