import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataModel
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Binary-store snapshots (query generations; Formats/wal.md §9 "Snapshots"): a snapshot reads
/// its state while this and another handle save; while it lives, no handle restarts the log (a
/// checkpoint waits, a compaction fails with a clear error); once it is released they go on.
final class SnapshotStoreTests: XCTestCase {
    private func open(_ path: String) throws -> BinaryStore {
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        return try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
    }

    private func labels(_ engine: any PersistentStoreEngine) throws -> [String] {
        let entity = try XCTUnwrap(BinaryTestModel.model.entitiesByName["Tag"])
        guard case .rows(let rows) = try engine.execute(StoreFetchRequest(entity: entity)) else { return [] }
        return rows.compactMap { row in if case .string(let label) = row["label"] { return label } else { return nil } }.sorted()
    }

    private func insertTag(_ store: BinaryStore, _ label: String) throws -> Int64 {
        let key = try store.newPrimaryKeys(entityName: "Tag", count: 1)[0]
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.tag(key, label)]))
        return key
    }

    /// With exclusive access the handle counts its own snapshots: no lock file appears.
    func testExclusiveAccessSnapshotsHoldCheckpointsBackWithoutALockFile() throws {
        let path = BinaryTestModel.temporaryPath()
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        options.exclusiveAccess = true
        let store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
        _ = try insertTag(store, "one")
        var snapshot: (any StoreGenerationView)? = try store.snapshot()
        _ = try insertTag(store, "two")
        try store.checkpoint()
        XCTAssertThrowsError(try store.compact())
        XCTAssertEqual(try labels(XCTUnwrap(snapshot)), ["one"])
        snapshot = nil
        try store.compact()
        XCTAssertEqual(try labels(store), ["one", "two"])
        try store.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-shm"))
        XCTAssertThrowsError(try store.snapshot(), "a closed handle takes no snapshot")
    }

    func testASnapshotHoldsItsStateAcrossSavesAndMaintenanceAttempts() throws {
        let path = BinaryTestModel.temporaryPath()
        let a = try open(path)
        let b = try open(path)
        let first = try insertTag(a, "one")
        try a.checkpoint()
        _ = try insertTag(a, "two")
        var snapshot: (any StoreGenerationView)? = try a.snapshot()
        let generation = try XCTUnwrap(snapshot?.generation)
        XCTAssertEqual(try a.snapshot().generation, generation, "two snapshots of one state name one generation")

        var renamed = BinaryTestModel.tag(first, "uno")
        renamed.version = 1
        _ = try b.save(StoreChangeSet(updated: [renamed]))
        _ = try insertTag(b, "three")
        let sizeBefore = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        try b.checkpoint()
        try a.checkpoint()
        XCTAssertThrowsError(try b.compact()) { error in
            XCTAssertTrue("\(error)".contains("query generation"), "\(error)")
        }
        XCTAssertEqual(try labels(XCTUnwrap(snapshot)), ["one", "two"], "the snapshot's state")
        XCTAssertEqual(try snapshot?.row(for: StoreObjectID(entityName: "Tag", primaryKey: first))?["label"], .string("one"))
        XCTAssertEqual(try labels(a), ["three", "two", "uno"], "the store's latest state")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int, sizeBefore, "no checkpoint restarted the log")
        XCTAssertThrowsError(try snapshot?.save(StoreChangeSet()))

        snapshot = nil
        try b.checkpoint(truncatingLog: true)
        try b.compact()
        XCTAssertEqual(try labels(a), ["three", "two", "uno"])
        XCTAssertNotEqual(try a.snapshot().generation, generation)
        try a.close()
        try b.close()
        let verification = BinaryStore.verify(path: path)
        XCTAssertTrue(verification.isIntact, "\(verification)")
    }
}
