import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Two handles on one store in one process share it exactly as two processes do (their locks
/// are per open file): saves seen at the next read, validation against the other's saves, keys
/// never handed out twice, the write lock's timeout, exclusive access, and the path without
/// shared memory (Formats/wal.md §9).
final class SharedStoreTests: XCTestCase {
    private func open(_ path: String, _ configure: (inout BinaryStoreOptions) -> Void = { _ in }) throws -> BinaryStore {
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        configure(&options)
        return try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
    }

    private func labels(_ store: BinaryStore) throws -> [String] {
        let entity = try XCTUnwrap(BinaryTestModel.model.entitiesByName["Tag"])
        guard case .rows(let rows) = try store.execute(StoreFetchRequest(entity: entity)) else { return [] }
        return rows.compactMap { row in if case .string(let label) = row["label"] { return label } else { return nil } }.sorted()
    }

    private func insertTag(_ store: BinaryStore, _ label: String) throws -> Int64 {
        let key = try store.newPrimaryKeys(entityName: "Tag", count: 1)[0]
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.tag(key, label)]))
        return key
    }

    func testTwoHandlesSeeEachOthersSavesCheckpointsAndCompactions() throws {
        for sharedMemory in [true, false] {
            let path = BinaryTestModel.temporaryPath()
            let configure: (inout BinaryStoreOptions) -> Void = { options in
                // A file layer without shared memory: every read asks the files.
                if !sharedMemory { options.fileSystem = SyncCountingFileSystem() }
            }
            let a = try open(path, configure)
            let b = try open(path, configure)
            let first = try insertTag(a, "a1")
            XCTAssertEqual(try labels(b), ["a1"], "shared memory: \(sharedMemory)")
            let second = try insertTag(b, "b1")
            XCTAssertNotEqual(first, second, "keys come from reservations that never overlap")
            XCTAssertEqual(try labels(a), ["a1", "b1"])
            try a.checkpoint()
            XCTAssertEqual(try labels(b), ["a1", "b1"], "b reloads a's checkpoint")
            _ = try insertTag(b, "b2")
            try b.compact()
            XCTAssertEqual(try labels(a), ["a1", "b1", "b2"], "a follows b's compaction to the new file")
            _ = try insertTag(a, "a2")
            XCTAssertEqual(try labels(b), ["a1", "a2", "b1", "b2"])
            try a.close()
            try b.close()
            let reopened = try open(path)
            XCTAssertEqual(try labels(reopened), ["a1", "a2", "b1", "b2"])
            XCTAssertEqual(Set(try reopened.objectIDs(ofEntity: "Tag").map(\.primaryKey)).count, 4)
            try reopened.close()
            XCTAssertTrue(BinaryStore.verify(path: path).isIntact)
        }
    }

    func testASaveIsValidatedAgainstTheOtherHandlesSaves() throws {
        let path = BinaryTestModel.temporaryPath()
        let a = try open(path)
        let b = try open(path)
        _ = try a.save(StoreChangeSet(inserted: [BinaryTestModel.owner(1, "Ann", items: [])]))
        let seen = try XCTUnwrap(try b.row(for: StoreObjectID(entityName: "Owner", primaryKey: 1)))
        var fromA = BinaryTestModel.owner(1, "Ann A", items: [])
        fromA.version = seen.version
        _ = try a.save(StoreChangeSet(updated: [fromA]))
        var fromB = BinaryTestModel.owner(1, "Ann B", items: [])
        fromB.version = seen.version
        XCTAssertThrowsError(try b.save(StoreChangeSet(updated: [fromB]))) { error in
            guard case .optimisticLockingFailure(let conflicts)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(conflicts.first?.storedRow?["name"], .string("Ann A"), "the conflict carries the other handle's row")
        }
        XCTAssertThrowsError(try b.save(StoreChangeSet(inserted: [BinaryTestModel.owner(1, "twice", items: [])]))) { error in
            guard case .duplicateObjectID? = error as? StoreError else { return XCTFail("\(error)") }
        }
        try a.close()
        try b.close()
    }

    func testTheWriteLockTimesOutWithALockConflictAndThenSaves() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path) { $0.lockTimeout = 0.3 }
        _ = try insertTag(store, "before")
        // Another holder of the write lock: the log locked through a descriptor of its own.
        let fd = Glibc.open(path + "-wal", O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { Glibc.close(fd) }
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let started = Date()
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [BinaryTestModel.tag(9_999, "blocked")]))) { error in
            XCTAssertTrue((error as? StoreError)?.isLockConflict == true, "\(error)")
            XCTAssertTrue("\(error)".contains("held for more than 0.3 s"), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertEqual(try labels(store), ["before"], "reads never wait for the write lock")
        XCTAssertEqual(flock(fd, LOCK_UN), 0)
        _ = try insertTag(store, "after")
        XCTAssertEqual(try labels(store), ["after", "before"], "a timed-out save leaves the handle usable")
        try store.close()
    }

    func testExclusiveAccessKeepsEveryOtherHandleOut() throws {
        let path = BinaryTestModel.temporaryPath()
        let shared = try open(path)
        XCTAssertThrowsError(try open(path) { $0.exclusiveAccess = true }) { error in
            XCTAssertTrue((error as? StoreError)?.isLockConflict == true, "\(error)")
        }
        try shared.close()
        let exclusive = try open(path) { $0.exclusiveAccess = true }
        XCTAssertThrowsError(try open(path)) { error in
            XCTAssertTrue((error as? StoreError)?.isLockConflict == true, "\(error)")
        }
        try exclusive.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-compact"))
    }

    func testRemoteChangeObservationSeesTheOtherHandlesSaves() throws {
        let path = BinaryTestModel.temporaryPath()
        let observer = try open(path)
        let writer = try open(path)
        let calls = CallCounter()
        observer.startObservingChanges { calls.add() }
        _ = try insertTag(writer, "x")
        let deadline = Date().addingTimeInterval(5)
        while calls.count == 0, Date() < deadline { usleep(1_000) }
        XCTAssertGreaterThan(calls.count, 0)
        XCTAssertEqual(try labels(observer), ["x"])
        observer.stopObservingChanges()
        try observer.close()
        try writer.close()
    }
}

private final class CallCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0
    var count: Int { lock.withLock { calls } }
    func add() { lock.withLock { calls += 1 } }
}
