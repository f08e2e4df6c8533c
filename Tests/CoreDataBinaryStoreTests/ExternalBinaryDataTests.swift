import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataFileSystem
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// External binary data on the binary store (Formats/binary-store.md §15): large values of
/// attributes that allow external storage live in `NAME-external/`, named by their digest.
final class ExternalBinaryDataTests: XCTestCase {
    typealias M = CrashTestModel
    private let large = ExternalDataLayout.threshold + 1_000
    private let folder = WorkloadRunner.path + ExternalDataLayout.folderSuffix

    private func files(_ fileSystem: FaultInjectingFileSystem) -> [String] {
        fileSystem.paths(startingWith: folder + "/").sorted()
    }

    private func payload(_ store: BinaryStore, _ key: Int64) throws -> Data? {
        guard case .data(let data)? = try store.row(for: M.id("Attachment", key))?.values["payload"] else { return nil }
        return data
    }

    private func updated(_ row: StoreRow, version: Int64) -> StoreRow {
        var copy = row
        copy.version = version
        return copy
    }

    func testValuesFromTheThresholdOnGoToFilesAndSmallerOnesStayInTheRecord() throws {
        let fileSystem = FaultInjectingFileSystem()
        let store = try WorkloadRunner.open(fileSystem)
        let below = M.attachment(1, "below", size: ExternalDataLayout.threshold - 1, seed: 1)
        let at = M.attachment(2, "at", size: ExternalDataLayout.threshold, seed: 2)
        // `preview` does not allow external storage: it stays in the record at any size.
        let preview = M.attachment(3, "preview", size: 0, seed: 3, previewSize: large)
        _ = try store.save(StoreChangeSet(inserted: [below, at, preview]))
        XCTAssertEqual(files(fileSystem), [folder + "/" + BinaryStore.referenceFileName(of: at.values["payload"])])
        XCTAssertEqual(try store.row(for: below.objectID)?.values["payload"], below.values["payload"])
        XCTAssertEqual(try store.row(for: at.objectID)?.values["payload"], at.values["payload"])
        XCTAssertEqual(try store.row(for: preview.objectID)?.values["preview"], preview.values["preview"])
        // A point read without a row loads the external value through the same loader.
        var visited: [Int: StoreValue] = [:]
        let found = try XCTUnwrap(store.visitValues(of: at.objectID) { slot, value in visited[slot] = value })
        XCTAssertEqual(visited[try XCTUnwrap(found.layout.slot(of: "payload"))], at.values["payload"])
        XCTAssertEqual(visited[try XCTUnwrap(found.layout.slot(of: "name"))], .string("at"))
        // The record holds a reference (tag 13), not the bytes: the log grew by far less than the value.
        XCTAssertLessThan(try store.statistics().logEnd, UInt64(2 * ExternalDataLayout.threshold + large), "the external value was written into the log too")
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        XCTAssertEqual(verification.externalFiles, 1)
        XCTAssertEqual(verification.externalBytes, UInt64(ExternalDataLayout.threshold))
        try store.close()
    }

    func testValuesReadBackByteForByteAfterReopenCheckpointAndCompaction() throws {
        let path = BinaryTestModel.temporaryPath()
        var options = WorkloadRunner.options(POSIXFileSystem())
        options.backgroundCheckpoints = false
        let rows = (1...3).map { M.attachment(Int64($0), "a\($0)", size: large * $0, seed: UInt64($0)) }
        var store = try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: options)
        _ = try store.save(StoreChangeSet(inserted: rows))
        // Dropped without closing, as in a crash: the log replays the references.
        store = try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: options)
        for row in rows { XCTAssertEqual(try store.row(for: row.objectID), updated(StoreSnapshot.normalized(row), version: 1)) }
        try store.checkpoint()
        try store.compact()
        try store.close()
        store = try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: options)
        for row in rows { XCTAssertEqual(try store.row(for: row.objectID)?.values["payload"], row.values["payload"]) }
        let fetched = try store.execute(StoreFetchRequest(entity: try XCTUnwrap(M.model.entitiesByName["Attachment"]), resultType: .rows))
        guard case .rows(let all) = fetched else { return XCTFail("a fetch of rows returned \(fetched)") }
        XCTAssertEqual(Set(all.compactMap { $0.values["payload"] }), Set(rows.compactMap { $0.values["payload"] }))
        XCTAssertEqual(try store.statistics().externalFiles, 3)
        XCTAssertEqual(try store.statistics().formatVersion, BinaryStoreLayout.formatVersion)
        try store.close()
        let names = try FileManager.default.contentsOfDirectory(atPath: path + ExternalDataLayout.folderSuffix)
        XCTAssertEqual(names.count, 3)
        XCTAssertTrue(names.allSatisfy(ExternalDataLayout.isValueFileName), "\(names)")
        try BinaryStore.destroy(path: path, options: options)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ExternalDataLayout.folderSuffix), "destroy left the external-data folder")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testAnUpdateThatKeepsTheValueWritesNoFileAndEqualValuesShareOne() throws {
        let fileSystem = FaultInjectingFileSystem()
        let store = try WorkloadRunner.open(fileSystem)
        _ = try store.save(StoreChangeSet(inserted: [M.attachment(1, "a", size: large, seed: 1)]))
        let before = fileSystem.operations.count
        _ = try store.save(StoreChangeSet(updated: [updated(M.attachment(1, "renamed", size: large, seed: 1), version: 1)]))
        let writes = fileSystem.operations[before...].filter { $0.contains(folder + "/") && ($0.contains(" write ") || $0.contains(" create ")) }
        XCTAssertEqual(writes, [], "an unchanged value was written again")
        _ = try store.save(StoreChangeSet(inserted: [M.attachment(2, "same bytes", size: large, seed: 1)]))
        XCTAssertEqual(files(fileSystem).count, 1)
        XCTAssertEqual(try payload(store, 2), try payload(store, 1))
        try store.close()
    }

    /// Replaced and deleted values keep their files until compaction: a durable save, a snapshot
    /// or another process may still name them. `verify` lists them as orphans meanwhile.
    func testReplacedAndDeletedValuesLoseTheirFilesAtCompaction() throws {
        let fileSystem = FaultInjectingFileSystem()
        let store = try WorkloadRunner.open(fileSystem)
        let first = M.attachment(1, "a", size: large, seed: 1)
        _ = try store.save(StoreChangeSet(inserted: [first, M.attachment(2, "b", size: large, seed: 2)]))
        let replaced = M.attachment(1, "a", size: large, seed: 11)
        _ = try store.save(StoreChangeSet(updated: [updated(replaced, version: 1)]))
        XCTAssertEqual(try payload(store, 1), replaced.values["payload"].flatMap { if case .data(let d) = $0 { d } else { nil } })
        _ = try store.save(StoreChangeSet(deleted: [(M.id("Attachment", 2), 1)]))
        XCTAssertEqual(files(fileSystem).count, 3, "files went before compaction")
        try store.checkpoint()
        XCTAssertEqual(files(fileSystem).count, 3, "a checkpoint removed files")
        let before = try store.verify()
        XCTAssertTrue(before.isIntact, "\(before)")
        // The checkpoint copied only the latest record of each object: nothing names the two.
        XCTAssertEqual(before.orphanedExternalFiles.count, 2, "\(before)")
        try store.compact()
        XCTAssertEqual(files(fileSystem), [folder + "/" + BinaryStore.referenceFileName(of: replaced.values["payload"])])
        let after = try store.verify()
        XCTAssertTrue(after.isIntact, "\(after)")
        XCTAssertEqual(after.externalFiles, 1)
        XCTAssertEqual(try payload(store, 1), replaced.values["payload"].flatMap { if case .data(let d) = $0 { d } else { nil } })
        try store.close()
    }

    /// A snapshot (query generation) of the state before a replacement still reads the old
    /// value; compaction, which would remove its file, refuses to run while the snapshot lives.
    func testASnapshotReadsTheValueALaterSaveReplaced() throws {
        // POSIX: the snapshot lock is a real lock (the fault-injecting layer grants every lock).
        let path = BinaryTestModel.temporaryPath()
        let store = try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: WorkloadRunner.options(POSIXFileSystem()))
        let first = M.attachment(1, "a", size: large, seed: 1)
        _ = try store.save(StoreChangeSet(inserted: [first]))
        var snapshot: (any StoreGenerationView)? = try store.snapshot()
        _ = try store.save(StoreChangeSet(updated: [updated(M.attachment(1, "a", size: large, seed: 2), version: 1)]))
        try store.checkpoint()
        XCTAssertThrowsError(try store.compact())
        XCTAssertEqual(try snapshot?.row(for: first.objectID)?.values["payload"], first.values["payload"])
        XCTAssertNotEqual(try store.row(for: first.objectID)?.values["payload"], first.values["payload"])
        snapshot = nil
        try store.compact()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: path + ExternalDataLayout.folderSuffix).count, 1)
        try store.close()
    }

    /// A save that fails (here an optimistic-locking conflict) writes no file and leaves the
    /// value that was there; a save whose file cannot be written saves nothing and poisons the
    /// handle (binary-store.md §15.2), and the next open holds the value saved before.
    func testAFailedSaveLeavesTheOldValueAndNoFile() throws {
        let fileSystem = FaultInjectingFileSystem()
        let store = try WorkloadRunner.open(fileSystem)
        let first = M.attachment(1, "a", size: large, seed: 1)
        _ = try store.save(StoreChangeSet(inserted: [first]))
        XCTAssertThrowsError(try store.save(StoreChangeSet(updated: [updated(M.attachment(1, "a", size: large, seed: 2), version: 7)])))
        XCTAssertEqual(files(fileSystem).count, 1)
        fileSystem.setPlan(.fail(code: ENOSPC, at: fileSystem.operationCount + 2, persistent: false))
        XCTAssertThrowsError(try store.save(StoreChangeSet(updated: [updated(M.attachment(1, "b", size: large, seed: 3), version: 1)]))) { error in
            XCTAssertTrue("\(error)".contains("external data"), "\(error)")
        }
        // Poisoned: every later call names the failure and writes nothing.
        XCTAssertThrowsError(try store.row(for: first.objectID)) { XCTAssertTrue("\($0)".contains("external data"), "\($0)") }
        XCTAssertThrowsError(try store.save(StoreChangeSet(updated: [updated(M.attachment(1, "c", size: large, seed: 4), version: 1)])))
        XCTAssertThrowsError(try store.close())
        let reopened = try WorkloadRunner.open(FaultInjectingFileSystem(image: fileSystem.currentImage))
        XCTAssertEqual(try reopened.row(for: first.objectID)?.values["payload"], first.values["payload"])
        XCTAssertEqual(try reopened.row(for: first.objectID)?.version, 1)
        XCTAssertTrue(try reopened.verify().isIntact)
        try reopened.close()
    }

    func testVerifyReportsAMissingOrDamagedFileAndAReadFailsNamingIt() throws {
        let fileSystem = FaultInjectingFileSystem()
        let store = try WorkloadRunner.open(fileSystem)
        let row = M.attachment(1, "a", size: large, seed: 1)
        _ = try store.save(StoreChangeSet(inserted: [row]))
        try store.close()
        let file = folder + "/" + BinaryStore.referenceFileName(of: row.values["payload"])

        var damaged = fileSystem.currentImage
        damaged.files[file]?[100] ^= 0x01
        let flipped = BinaryStore.verify(path: WorkloadRunner.path, fileSystem: FaultInjectingFileSystem(image: damaged))
        XCTAssertEqual(flipped.issues.count, 1, "\(flipped)")
        XCTAssertTrue(flipped.issues.first?.problem.contains("checksum does not match") == true, "\(flipped)")
        let reopened = try WorkloadRunner.open(FaultInjectingFileSystem(image: damaged))
        XCTAssertThrowsError(try reopened.row(for: row.objectID)) { error in
            guard case StoreError.corrupt(let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains(file), detail)
        }
        XCTAssertThrowsError(try reopened.visitValues(of: row.objectID) { _, _ in }) { error in
            guard case StoreError.corrupt(let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains(file), detail)
        }
        try reopened.close()

        var missing = fileSystem.currentImage
        missing.files[file] = nil
        missing.files[folder + "/" + String(repeating: "0", count: 64)] = [1, 2, 3]
        let gone = BinaryStore.verify(path: WorkloadRunner.path, fileSystem: FaultInjectingFileSystem(image: missing))
        XCTAssertEqual(gone.issues.map(\.location), [file], "\(gone)")
        XCTAssertTrue(gone.issues.first?.problem.contains("missing") == true, "\(gone)")
        XCTAssertEqual(gone.orphanedExternalFiles, [String(repeating: "0", count: 64)])
    }

    /// A store of format version 1 keeps its version and its values in the records until it is
    /// compacted, so an older build still opens it; compaction makes it the current version.
    func testAVersion1StoreKeepsValuesInlineUntilCompaction() throws {
        let fileSystem = FaultInjectingFileSystem()
        var store = try WorkloadRunner.open(fileSystem)
        try store.close()
        // The same store as version 1 wrote it: header and root slot say 1.
        var image = fileSystem.currentImage
        var data = try XCTUnwrap(image.files[WorkloadRunner.path])
        var header = try FileHeader(decoding: Array(data[0..<64]))
        header.formatVersion = 1
        data.replaceSubrange(0..<64, with: header.encoded())
        let (root, slot) = try XCTUnwrap(RootSlot.newest(in: data))
        let offset = BinaryStoreLayout.rootSlotOffsets[slot]
        data.replaceSubrange(offset..<(offset + BinaryStoreLayout.rootSlotSize), with: root.encoded(formatVersion: 1))
        image.files[WorkloadRunner.path] = data
        let old = FaultInjectingFileSystem(image: image)
        store = try WorkloadRunner.open(old)
        let row = M.attachment(1, "a", size: large, seed: 1)
        _ = try store.save(StoreChangeSet(inserted: [row]))
        try store.checkpoint()
        XCTAssertEqual(old.paths(startingWith: folder + "/"), [])
        XCTAssertEqual(try store.statistics().formatVersion, 1)
        XCTAssertEqual(try store.row(for: row.objectID)?.values["payload"], row.values["payload"])
        try store.compact()
        XCTAssertEqual(try store.statistics().formatVersion, BinaryStoreLayout.formatVersion)
        _ = try store.save(StoreChangeSet(updated: [updated(M.attachment(1, "b", size: large, seed: 2), version: 1)]))
        XCTAssertEqual(old.paths(startingWith: folder + "/").count, 1)
        try store.close()
    }
}

extension BinaryStore {
    /// The file name the store gives a data value (§15).
    static func referenceFileName(of value: StoreValue?) -> String {
        guard case .data(let data)? = value else { return "" }
        return externalReference(to: data).fileName
    }
}
