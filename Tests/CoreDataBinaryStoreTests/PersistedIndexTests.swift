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
    /// More than three index pages (3,276 entries each).
    private let itemCount: Int64 = 10_000

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
        XCTAssertGreaterThanOrEqual(directory.pageOffsets.count, 4)
        let damaged = directory.pageOffsets[1]
        let at = damaged + UInt64(BinaryStoreLayout.pageHeaderSize) + 100
        try file.write([bytes[Int(at)] ^ 0xFF], at: at)
        try file.sync()
        file.close()

        let store = try open(path)
        XCTAssertNil(store.openReport.rebuiltIndex, "only the directory is read at open")
        XCTAssertNil(store.indexRebuiltAfterOpen)
        // Key 4,000 lives in the second page: its first read finds the damage and rebuilds.
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
