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

    /// A handle whose file layer has no shared memory (a wrapper that does not pass
    /// `sharedCounters` on) bumps no counter. Handles that map the counters must not take their
    /// quiet for "nothing written": it marks `NAME-shm` at open, and from then on they ask the
    /// files, so neither overwrites the other's frames nor reads a stale state (Formats/wal.md §9).
    func testAHandleWithoutSharedMemoryIsHeardByHandlesThatMapTheCounters() throws {
        let path = BinaryTestModel.temporaryPath()
        let mapped = try open(path)
        _ = try insertTag(mapped, "m0")
        XCTAssertEqual(try labels(mapped), ["m0"], "the mapped handle has read its state, so its counters are quiet")
        let calls = CallCounter()
        mapped.startObservingChanges { calls.add() }
        let unmapped = try open(path) { $0.fileSystem = SyncCountingFileSystem() }
        XCTAssertEqual(try unheardWord(path), 1, "the unheard writers' word")
        // The mark itself moves the observation from the counters to the files: one call.
        var deadline = Date().addingTimeInterval(5)
        while calls.count == 0, Date() < deadline { usleep(1_000) }
        usleep(30_000)
        let before = calls.count
        _ = try insertTag(unmapped, "u0")
        deadline = Date().addingTimeInterval(5)
        while calls.count == before, Date() < deadline { usleep(1_000) }
        XCTAssertGreaterThan(calls.count, before, "the mapped handle's remote-change observation hears the unmapped handle's save")
        mapped.stopObservingChanges()
        var expected = ["m0", "u0"]
        for round in 1...3 {
            _ = try insertTag(unmapped, "u\(round)")
            expected.append("u\(round)")
            XCTAssertEqual(try labels(mapped), expected.sorted(), "round \(round): the mapped handle reads the other's save")
            _ = try insertTag(mapped, "m\(round)")
            expected.append("m\(round)")
            XCTAssertEqual(try labels(unmapped), expected.sorted(), "round \(round)")
        }
        _ = try insertTag(unmapped, "u4")
        _ = try insertTag(mapped, "m4")
        expected += ["u4", "m4"]
        try unmapped.checkpoint()
        _ = try insertTag(unmapped, "u5")
        expected.append("u5")
        XCTAssertEqual(try labels(mapped), expected.sorted(), "after the other's checkpoint")
        try mapped.checkpoint()
        XCTAssertEqual(try labels(unmapped), expected.sorted())
        try unmapped.close()
        XCTAssertEqual(try unheardWord(path), 1, "a handle is still open")
        try mapped.close()
        XCTAssertEqual(try unheardWord(path), 0, "the last handle closed alone: the counters are trusted again")
        let reopened = try open(path)
        XCTAssertEqual(try labels(reopened), expected.sorted())
        XCTAssertEqual(Set(try reopened.objectIDs(ofEntity: "Tag").map(\.primaryKey)).count, expected.count, "no key handed out twice")
        try reopened.close()
        XCTAssertTrue(BinaryStore.verify(path: path).isIntact)
    }

    /// The unheard writers' word of `NAME-shm` (Formats/wal.md §9).
    private func unheardWord(_ path: String) throws -> UInt8 {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "-shm"))
        XCTAssertGreaterThanOrEqual(bytes.count, 32)
        XCTAssertEqual(Array(bytes[25..<32]), [0, 0, 0, 0, 0, 0, 0])
        return bytes[24]
    }

    /// An unheard handle that creates the store makes `NAME-shm` shorter than a page; a writable
    /// handle that maps it later grows it and asks the files, a read-only one asks the files
    /// without mapping it, and each sees the others' saves.
    func testAnUnheardHandleThatCreatesTheStoreIsHeardByHandlesOpenedLater() throws {
        let path = BinaryTestModel.temporaryPath()
        let unmapped = try open(path) { $0.fileSystem = SyncCountingFileSystem() }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path + "-shm")).count, 32)
        _ = try insertTag(unmapped, "u1")
        let mapped = try open(path)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path + "-shm")).count, 4_096)
        XCTAssertEqual(try unheardWord(path), 1)
        let reader = try open(path) { $0.readOnly = true }
        XCTAssertEqual(try labels(mapped), ["u1"])
        _ = try insertTag(mapped, "m1")
        _ = try insertTag(unmapped, "u2")
        _ = try insertTag(mapped, "m2")
        XCTAssertEqual(try labels(reader), ["m1", "m2", "u1", "u2"])
        XCTAssertEqual(try labels(unmapped), ["m1", "m2", "u1", "u2"])
        XCTAssertEqual(Set(try reader.objectIDs(ofEntity: "Tag").map(\.primaryKey)).count, 4)
        try mapped.close()
        try unmapped.close()
        XCTAssertEqual(try unheardWord(path), 1, "the reader is still open, so no close was alone")
        try reader.close()
        XCTAssertTrue(BinaryStore.verify(path: path).isIntact)
    }

    /// A writable handle without shared memory that cannot mark `NAME-shm` does not open: the
    /// handles that map it would overwrite its saves.
    func testAnUnheardWriterThatCannotMarkTheCountersFileDoesNotOpen() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        _ = try insertTag(store, "m")
        try store.close()
        try FileManager.default.removeItem(atPath: path + "-shm")
        try FileManager.default.createSymbolicLink(atPath: path + "-shm", withDestinationPath: path + "-elsewhere")
        XCTAssertThrowsError(try open(path) { $0.fileSystem = POSIXFileSystemWithoutSharedMemory() }) { error in
            XCTAssertTrue("\(error)".contains("cannot mark the shared counters file"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-elsewhere"), "nothing written through the link")
    }

    func testOnlyAWritableHandleWithoutSharedMemoryMarksTheCountersFile() throws {
        let path = BinaryTestModel.temporaryPath()
        let mapped = try open(path)
        _ = try insertTag(mapped, "m")
        let reader = try open(path) { options in
            options.fileSystem = SyncCountingFileSystem()
            options.readOnly = true
        }
        XCTAssertEqual(try labels(reader), ["m"])
        let counters = try Data(contentsOf: URL(fileURLWithPath: path + "-shm"))
        XCTAssertEqual(Array(counters[24..<32]), [0, 0, 0, 0, 0, 0, 0, 0], "a reader writes nothing, so the counters stay trusted")
        try reader.close()
        try mapped.close()
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

/// The system's file layer without its shared memory, as a wrapper that does not pass
/// `sharedCounters` on is: symbolic links refused, permissions copied.
private struct POSIXFileSystemWithoutSharedMemory: StoreFileSystem {
    let base = POSIXFileSystem()
    func open(_ path: String, create: Bool, readOnly: Bool) throws(StoreIOError) -> any StoreFile { try base.open(path, create: create, readOnly: readOnly) }
    func openOwnFile(_ path: String, creation: StoreFileCreation, readOnly: Bool, permissionsOf reference: String?) throws(StoreIOError) -> any StoreFile {
        try base.openOwnFile(path, creation: creation, readOnly: readOnly, permissionsOf: reference)
    }
    func fileExists(_ path: String) -> Bool { base.fileExists(path) }
    func remove(_ path: String) throws(StoreIOError) { try base.remove(path) }
    func rename(_ source: String, to destination: String) throws(StoreIOError) { try base.rename(source, to: destination) }
    func syncDirectory(containing path: String) throws(StoreIOError) { try base.syncDirectory(containing: path) }
    func identity(of path: String) -> FileIdentity? { base.identity(of: path) }
}
