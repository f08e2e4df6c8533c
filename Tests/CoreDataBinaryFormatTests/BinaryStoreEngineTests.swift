import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

// Foundation on Linux declares its own (format-less) predicate classes.
fileprivate typealias NSPredicate = CoreDataPredicate.NSPredicate
fileprivate typealias NSSortDescriptor = CoreDataPredicate.NSSortDescriptor

/// The engine through the store protocol: durability across reopen, checkpoints, the persisted
/// and rebuilt index, conflicts, batch operations, compaction, locking and group commit.
final class BinaryStoreEngineTests: XCTestCase {
    private func open(_ path: String, _ options: BinaryStoreOptions = BinaryStoreOptions()) throws -> BinaryStore {
        try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(["NSStoreUUID": UUID().uuidString]), options: options)
    }

    private func seed(_ store: any PersistentStoreEngine) throws {
        _ = try store.save(StoreChangeSet(inserted: [
            BinaryTestModel.owner(1, "Ann", items: [1, 2]),
            BinaryTestModel.item(1, owner: 1, tags: [1]), BinaryTestModel.item(2, owner: 1),
            BinaryTestModel.tag(1, "red", items: [1]),
        ]))
    }

    private func withVersion(_ row: StoreRow, _ version: Int64) -> StoreRow {
        var copy = row
        copy.version = version
        return copy
    }

    func testSavesSurviveReopenFromTheLogAndFromPages() throws {
        let path = BinaryTestModel.temporaryPath()
        var store: BinaryStore? = try open(path)
        try seed(XCTUnwrap(store))
        let expected = withVersion(BinaryTestModel.item(2, owner: 1), 1)
        XCTAssertEqual(try store?.row(for: expected.objectID), expected)
        // Drop the handle without closing: the next open replays the log.
        store = nil
        let replayed = try open(path)
        XCTAssertEqual(replayed.openReport.replayedSaves, 1)
        XCTAssertEqual(try replayed.row(for: expected.objectID), expected)
        try replayed.close()
        // After close, everything is in pages and the log is empty.
        let reopened = try open(path)
        XCTAssertEqual(reopened.openReport, BinaryStore.OpenReport())
        XCTAssertEqual(try reopened.row(for: expected.objectID), expected)
        XCTAssertEqual(try reopened.objectCounts(), ["Owner": 1, "Item": 2, "Tag": 1])
        XCTAssertTrue(try reopened.verify().isIntact)
        try reopened.close()
    }

    /// A point read without a row (`visitValues(of:_:)`) gives what `row(for:)` gives, from
    /// the log and from pages, and nothing for a deleted or unknown object; the in-memory
    /// store's default implementation agrees.
    func testVisitingValuesGivesTheRowsValues() throws {
        func visited(_ store: any PersistentStoreEngine, _ id: StoreObjectID) throws -> StoreRow? {
            var slots: [Int: StoreValue] = [:]
            guard let found = try store.visitValues(of: id, { slot, value in
                XCTAssertNil(slots[slot], "slot \(slot) visited twice")
                slots[slot] = value
            }) else {
                XCTAssertTrue(slots.isEmpty)
                return nil
            }
            return StoreRow(objectID: id, version: found.version, layout: found.layout, slots: (0..<found.layout.count).map { slots[$0] })
        }
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        try seed(store)
        let memory = InMemoryStore(model: BinaryTestModel.model, metadata: StoreMetadata())
        try seed(memory)
        let ids = [
            StoreObjectID(entityName: "Owner", primaryKey: 1), StoreObjectID(entityName: "Item", primaryKey: 1),
            StoreObjectID(entityName: "Item", primaryKey: 2), StoreObjectID(entityName: "Tag", primaryKey: 1),
        ]
        for id in ids {
            let expected = try XCTUnwrap(store.row(for: id))
            XCTAssertEqual(try visited(store, id), expected, "\(id) from the log")
            XCTAssertEqual(try visited(memory, id)?.values, expected.values, "\(id) in memory")
        }
        try store.checkpoint()
        for id in ids { XCTAssertEqual(try visited(store, id), try store.row(for: id), "\(id) from pages") }
        _ = try store.save(StoreChangeSet(deleted: [(ids[2], 1)]))
        XCTAssertNil(try visited(store, ids[2]))
        XCTAssertNil(try visited(store, StoreObjectID(entityName: "Item", primaryKey: 99)))
        XCTAssertNil(try visited(memory, StoreObjectID(entityName: "Item", primaryKey: 99)))
        try store.close()
        XCTAssertThrowsError(try store.visitValues(of: ids[0]) { _, _ in }) { error in XCTAssertEqual(error as? StoreError, .closed) }
    }

    func testUpdatesDeletesAndVersions() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        try seed(store)
        var changed = BinaryTestModel.item(1, owner: nil)
        changed.version = 1
        changed.values["text"] = .string("changed")
        let versions = try store.save(StoreChangeSet(updated: [changed], deleted: [(StoreObjectID(entityName: "Item", primaryKey: 2), 1)]))
        XCTAssertEqual(versions[changed.objectID], 2)
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Item", primaryKey: 2)))
        // A stale version is an optimistic-locking failure that names the stored row.
        XCTAssertThrowsError(try store.save(StoreChangeSet(updated: [changed]))) { error in
            guard case StoreError.optimisticLockingFailure(let conflicts) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(conflicts.first?.storedRow?.version, 2)
        }
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [BinaryTestModel.tag(1, "again")]))) { error in
            XCTAssertEqual(error as? StoreError, .duplicateObjectID(StoreObjectID(entityName: "Tag", primaryKey: 1)))
        }
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [BinaryTestModel.item(9, owner: 99)]))) { error in
            guard case StoreError.danglingReference = error else { return XCTFail("\(error)") }
        }
        try store.checkpoint()
        try store.close()
        let reopened = try open(path)
        XCTAssertEqual(try reopened.row(for: changed.objectID)?.values["text"], .string("changed"))
        XCTAssertNil(try reopened.row(for: StoreObjectID(entityName: "Item", primaryKey: 2)))
        XCTAssertEqual(try reopened.newPrimaryKeys(entityName: "Item", count: 1), [3])
        try reopened.close()
    }

    /// A row in its entity's own layout has only its relationship slots looked at for
    /// references: a dangling to-one or to-many there is still refused, naming the property,
    /// and a row whose references all exist saves.
    func testRowsInTheModelsLayoutAreCheckedForDanglingReferences() throws {
        let store = try open(BinaryTestModel.temporaryPath())
        try seed(store)
        let entity = try XCTUnwrap(BinaryTestModel.model.entitiesByName["Item"])
        let layout = entity.propertyLayout
        XCTAssertTrue(layout === entity.propertyLayout, "a frozen model hands out one layout, which rows share")
        for (row, property) in [
            (BinaryTestModel.item(20, owner: 99).relaid(as: layout), "owner"),
            (BinaryTestModel.item(21, owner: nil, tags: [1, 98]).relaid(as: layout), "tags"),
        ] {
            XCTAssertTrue(row.layout === layout)
            XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [row]))) { error in
                guard case StoreError.danglingReference(let from, let named, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(from, row.objectID)
                XCTAssertEqual(named, property)
            }
        }
        let linked = BinaryTestModel.item(22, owner: 1, tags: [1]).relaid(as: layout)
        _ = try store.save(StoreChangeSet(inserted: [linked]))
        XCTAssertEqual(try store.row(for: linked.objectID)?.values["owner"], .reference(StoreObjectID(entityName: "Owner", primaryKey: 1)))
        try store.close()
    }

    func testFetchesSortPageAndCount() throws {
        let store = try open(BinaryTestModel.temporaryPath())
        let items = (1...50).map { BinaryTestModel.item(Int64($0), owner: nil) }
        _ = try store.save(StoreChangeSet(inserted: items))
        try store.checkpoint()
        _ = try store.save(StoreChangeSet(inserted: (51...60).map { BinaryTestModel.item(Int64($0), owner: nil) }))
        let entity = try XCTUnwrap(BinaryTestModel.model.entitiesByName["Item"])
        let request = StoreFetchRequest(
            entity: entity, predicate: NSPredicate(format: "i64 < %@", NSNumber(value: Int64.min + 30)),
            sortDescriptors: [NSSortDescriptor(key: "double", ascending: false)], offset: 2, limit: 5)
        guard case .rows(let rows) = try store.execute(request) else { return XCTFail("expected rows") }
        XCTAssertEqual(rows.map(\.objectID.primaryKey), [27, 26, 25, 24, 23])
        guard case .count(let all) = try store.execute(StoreFetchRequest(entity: entity, resultType: .count)) else { return XCTFail() }
        XCTAssertEqual(all, 60)
        try store.close()
    }

    /// A large fetch of rows in key order comes in runs (so the object graph frees each as it
    /// goes); joined, the runs are `execute`'s rows, with offset and limit, pages and log alike.
    func testRowsInRunsJoinToTheRowsOfExecute() throws {
        let store = try open(BinaryTestModel.temporaryPath())
        let count = BinaryStore.rowRunLength * 2 + 100
        _ = try store.save(StoreChangeSet(inserted: (1...count - 50).map { BinaryTestModel.item(Int64($0), owner: nil) }))
        try store.checkpoint()
        _ = try store.save(StoreChangeSet(inserted: (count - 49...count).map { BinaryTestModel.item(Int64($0), owner: nil) }))
        let entity = try XCTUnwrap(BinaryTestModel.model.entitiesByName["Item"])
        for (offset, limit) in [(0, 0), (3, 0), (BinaryStore.rowRunLength - 1, BinaryStore.rowRunLength + 2), (count, 0)] {
            let request = StoreFetchRequest(entity: entity, offset: offset, limit: limit)
            guard case .rows(let rows) = try store.execute(request),
                  case .rows(let runs) = try store.executeInRuns(request) else { return XCTFail("expected rows") }
            XCTAssertEqual(runs.flatMap { $0 }, rows, "offset \(offset), limit \(limit)")
            XCTAssertTrue(runs.allSatisfy { $0.count <= BinaryStore.rowRunLength })
            let expected = limit > 0 ? min(limit, count - offset) : count - offset
            XCTAssertEqual(rows.count, expected)
            XCTAssertEqual(rows.first?.objectID.primaryKey, expected > 0 ? Int64(offset + 1) : nil)
        }
        guard case .rows(let runs) = try store.executeInRuns(StoreFetchRequest(entity: entity)) else { return XCTFail("expected rows") }
        XCTAssertEqual(runs.count, 3)
        // Other answers pass through unchanged.
        guard case .other(.count(let all)) = try store.executeInRuns(StoreFetchRequest(entity: entity, resultType: .count)) else { return XCTFail() }
        XCTAssertEqual(all, count)
        try store.close()
    }

    func testBatchDeleteAndUpdateAndCompaction() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        _ = try store.save(StoreChangeSet(inserted: (1...200).map { BinaryTestModel.item(Int64($0), owner: nil) }))
        let entity = try XCTUnwrap(BinaryTestModel.model.entitiesByName["Item"])
        let deleted = try store.batchDelete(StoreFetchRequest(entity: entity, predicate: NSPredicate(format: "flag == YES")))
        XCTAssertEqual(deleted.count, 100)
        let updated = try store.batchUpdate(StoreFetchRequest(entity: entity, predicate: NSPredicate(format: "i32 > %d", Int32.max - 10)), values: ["text": .string("top")])
        XCTAssertEqual(updated.count, 5)
        try store.checkpoint()
        let before = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        try store.compact()
        let after = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        XCTAssertLessThan(after, before)
        XCTAssertEqual(try store.row(for: StoreObjectID(entityName: "Item", primaryKey: 9))?.values["text"], .string("top"))
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.item(500, owner: nil)]))
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()
        let reopened = try open(path)
        XCTAssertEqual(try reopened.objectCounts()["Item"], 101)
        XCTAssertEqual(try reopened.row(for: StoreObjectID(entityName: "Item", primaryKey: 9))?.version, 2)
        let verification = try reopened.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try reopened.close()
    }

    func testDamagedIndexIsRebuiltFromTheDataPages() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        try seed(store)
        try store.close()
        // Damage the index directory page: open must rebuild, and lose nothing.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        let bytes = try XCTUnwrap(handle.readToEnd())
        let rootA = RootSlot.decode(Array(bytes[512..<640]))
        let rootB = RootSlot.decode(Array(bytes[1024..<1152]))
        var directory: UInt64 = 0
        for case .valid(let root) in [rootA, rootB] where root.generation >= 2 { directory = root.indexDirectoryOffset }
        XCTAssertGreaterThan(directory, 0)
        try handle.seek(toOffset: directory + 40)
        try handle.write(contentsOf: Data([0xFF]))
        try handle.close()
        let reopened = try open(path)
        XCTAssertNotNil(reopened.openReport.rebuiltIndex)
        XCTAssertEqual(try reopened.objectCounts(), ["Owner": 1, "Item": 2, "Tag": 1])
        XCTAssertEqual(try reopened.row(for: StoreObjectID(entityName: "Item", primaryKey: 1)), withVersion(BinaryTestModel.item(1, owner: 1, tags: [1]), 1))
        let report = try reopened.verify()
        XCTAssertFalse(report.isIntact)
        XCTAssertTrue(report.issues.contains { $0.location.contains("data file offset \(directory)") }, "\(report)")
        try reopened.close()
    }

    func testASecondWriterIsRefusedWithAClearErrorUnderExclusiveAccess() throws {
        let path = BinaryTestModel.temporaryPath()
        var exclusive = BinaryStoreOptions()
        exclusive.exclusiveAccess = true
        let store = try open(path, exclusive)
        XCTAssertThrowsError(try open(path)) { error in
            XCTAssertTrue("\(error)".contains("locked by another process"), "\(error)")
        }
        XCTAssertThrowsError(try open(path, exclusive)) { error in
            XCTAssertTrue("\(error)".contains("locked by another process"), "\(error)")
        }
        var readOnly = BinaryStoreOptions()
        readOnly.readOnly = true
        XCTAssertThrowsError(try open(path, readOnly)) { XCTAssertTrue("\($0)".contains("locked"), "\($0)") }
        try store.close()
        let reader = try open(path, readOnly)
        let secondReader = try open(path, readOnly)
        XCTAssertThrowsError(try reader.save(StoreChangeSet(inserted: [BinaryTestModel.tag(1, "x")]))) {
            XCTAssertTrue("\($0)".contains("read-only"), "\($0)")
        }
        try reader.close()
        try secondReader.close()
    }

    /// Concurrent savers share syncs, and a fetch always sees whole saves.
    func testGroupCommitSharesSyncsAndFetchesSeeWholeSaves() throws {
        let counting = SyncCountingFileSystem()
        var options = BinaryStoreOptions()
        options.fileSystem = counting
        let store = try open(BinaryTestModel.temporaryPath(), options)
        let keys = try store.newPrimaryKeys(entityName: "Tag", count: 8 * 50 * 2)
        let entity = try XCTUnwrap(BinaryTestModel.model.entitiesByName["Tag"])
        let syncsBefore = counting.syncs
        let torn = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 9) { worker in
            if worker == 8 {
                // A reader: every save inserts two tags, so a whole-save view has an even count.
                for _ in 0..<200 {
                    if case .count(let n)? = try? store.execute(StoreFetchRequest(entity: entity, resultType: .count)), n % 2 != 0 { torn.add() }
                }
                return
            }
            for round in 0..<50 {
                let base = (worker * 50 + round) * 2
                _ = try? store.save(StoreChangeSet(inserted: [
                    BinaryTestModel.tag(keys[base], "a"), BinaryTestModel.tag(keys[base + 1], "b"),
                ]))
            }
        }
        XCTAssertEqual(torn.value, 0)
        XCTAssertEqual(try store.objectCounts()["Tag"], 800)
        let syncs = counting.syncs - syncsBefore
        XCTAssertLessThanOrEqual(syncs, 400, "each of 400 saves syncs at most once")
        print("group commit: 400 saves from 8 threads took \(syncs) log syncs")
        try store.close()
    }

    func testRelaxedDurabilityDoesNotSyncEachSave() throws {
        let counting = SyncCountingFileSystem()
        var options = BinaryStoreOptions()
        options.fileSystem = counting
        options.durability = .normal
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path, options)
        let before = counting.syncs
        for key in 1...20 { _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.tag(Int64(key), "t")])) }
        XCTAssertEqual(counting.syncs, before)
        try store.close()
        XCTAssertEqual(try open(path).objectCounts()["Tag"], 20)
    }

    /// A checkpoint syncs the log before its root only when a frame may be unsynced (Formats/
    /// binary-store.md §9 step 3): after full-durability saves this handle synced itself it
    /// skips that sync; after relaxed saves, its own or another handle's, it does not.
    func testACheckpointSyncsTheLogOnlyWhenAFrameMayBeUnsynced() throws {
        func checkpointSyncs(_ durability: BinaryStoreOptions.Durability) throws -> Int {
            let counting = SyncCountingFileSystem()
            var options = BinaryStoreOptions()
            options.fileSystem = counting
            options.durability = durability
            options.backgroundCheckpoints = false
            let store = try open(BinaryTestModel.temporaryPath(), options)
            defer { try? store.close() }
            _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.tag(1, "t")]))
            let before = counting.syncs
            try store.checkpoint()
            return counting.syncs - before
        }
        let full = try checkpointSyncs(.full)
        XCTAssertEqual(try checkpointSyncs(.normal), full + 1, "relaxed frames are synced before the root")

        // Another handle's relaxed frames end the log: the full-durability handle syncs it.
        let path = BinaryTestModel.temporaryPath()
        let counting = SyncCountingFileSystem()
        var options = BinaryStoreOptions()
        options.fileSystem = counting
        options.backgroundCheckpoints = false
        let durable = try open(path, options)
        defer { try? durable.close() }
        var relaxedOptions = BinaryStoreOptions()
        // The same kind of file layer as the other handle's (one without shared memory), so
        // both find each other's saves in the files.
        relaxedOptions.fileSystem = SyncCountingFileSystem()
        relaxedOptions.durability = .normal
        relaxedOptions.backgroundCheckpoints = false
        let relaxed = try open(path, relaxedOptions)
        defer { try? relaxed.close() }
        for (store, label) in [(durable, "t"), (relaxed, "u")] {
            // Keys from the store: a shared store hands out keys no other handle uses.
            let key = try store.newPrimaryKeys(entityName: "Tag", count: 1)[0]
            _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.tag(key, label)]))
        }
        // A read tails the other handle's frames first, as an app's fetch would.
        XCTAssertEqual(try durable.objectCounts()["Tag"], 2)
        let before = counting.syncs
        try durable.checkpoint()
        XCTAssertEqual(counting.syncs - before, full + 1, "the other handle's frames are synced before the root")
    }

    func testMetadataIsDurable() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        var metadata = try store.metadata()
        metadata["AppVersion"] = "3.0"
        try store.setMetadata(metadata)
        try store.close()
        XCTAssertEqual(try open(path).metadata()["AppVersion"] as? String, "3.0")
    }

    func testNotAStoreAndMissingStoreErrors() throws {
        let path = BinaryTestModel.temporaryPath()
        try Data("hello, this is not a store".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try open(path)) { XCTAssertTrue("\($0)".contains("not a binary store"), "\($0)") }
        var readOnly = BinaryStoreOptions()
        readOnly.readOnly = true
        XCTAssertThrowsError(try open(BinaryTestModel.temporaryPath(), readOnly)) { XCTAssertTrue("\($0)".contains("there is no store"), "\($0)") }
    }
}

/// The real file layer, counting syncs.
final class SyncCountingFileSystem: StoreFileSystem, @unchecked Sendable {
    private let base = POSIXFileSystem()
    private let counter = LockedCounter()
    var syncs: Int { counter.value }

    func open(_ path: String, create: Bool, readOnly: Bool) throws(StoreIOError) -> any StoreFile {
        CountingFile(try base.open(path, create: create, readOnly: readOnly), counter)
    }
    func fileExists(_ path: String) -> Bool { base.fileExists(path) }
    func remove(_ path: String) throws(StoreIOError) { try base.remove(path) }
    func rename(_ source: String, to destination: String) throws(StoreIOError) { try base.rename(source, to: destination) }
    func syncDirectory(containing path: String) throws(StoreIOError) { try base.syncDirectory(containing: path) }
    func identity(of path: String) -> FileIdentity? { base.identity(of: path) }

    private final class CountingFile: StoreFile, @unchecked Sendable {
        let file: any StoreFile
        let counter: LockedCounter
        init(_ file: any StoreFile, _ counter: LockedCounter) {
            self.file = file
            self.counter = counter
        }
        func read(at offset: UInt64, count: Int) throws(StoreIOError) -> [UInt8] { try file.read(at: offset, count: count) }
        func write(_ bytes: [UInt8], at offset: UInt64) throws(StoreIOError) { try file.write(bytes, at: offset) }
        func sync() throws(StoreIOError) {
            counter.add()
            try file.sync()
        }
        func size() throws(StoreIOError) -> UInt64 { try file.size() }
        func truncate(to size: UInt64) throws(StoreIOError) { try file.truncate(to: size) }
        func lock(exclusive: Bool, wait: Bool) throws(StoreIOError) -> Bool { try file.lock(exclusive: exclusive, wait: wait) }
        func unlock() { file.unlock() }
        func identity() -> FileIdentity? { file.identity() }
        func close() { file.close() }
    }
}

final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}
