import CoreDataBinaryFormat
@testable import CoreDataBinaryStore
import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Stores written by each format version, checked in, must keep reading back exactly. A format
/// change changes the spec, adds a fixture of the new version (write it with
/// `COREDATA_WRITE_GOLDEN=1 swift test --filter GoldenStoreTests`) and bumps the format version
/// together. The fixtures of versions 1 to 3 can no longer be written (this code makes
/// version-4 stores): they are kept as they are.
final class GoldenStoreTests: XCTestCase {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/golden-v1.store")

    /// The fixture's contents: every attribute type, to-one, to-many and ordered to-many, an
    /// update (version 2) and a deletion (tombstone), then a second checkpoint's worth of saves.
    static func expectedRows() -> [StoreRow] {
        var first = BinaryTestModel.item(1, owner: 1, tags: [1, 2])
        first.values["text"] = .string("updated")
        first.version = 2
        var rows = [first]
        for key in 3...5 { rows.append(withVersion(BinaryTestModel.item(Int64(key), owner: 1), 1)) }
        rows.append(withVersion(BinaryTestModel.owner(1, "Ann", items: [5, 1, 3, 4]), 2))
        rows.append(withVersion(BinaryTestModel.tag(1, "red", items: [1]), 1))
        rows.append(withVersion(BinaryTestModel.tag(2, "blue", items: [1]), 1))
        return rows
    }

    private static func withVersion(_ row: StoreRow, _ version: Int64) -> StoreRow {
        var copy = row
        copy.version = version
        return copy
    }

    static let fixtureV2 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/golden-v2.store")

    /// The version-2 fixture (CrashTestModel): external data (Formats/binary-store.md §15) in the
    /// data pages and in the log, a small value of the same attribute in its record, a value too
    /// large for the record in an attribute without external storage, and a deleted attachment
    /// whose file is an orphan.
    static func expectedV2Rows() -> [StoreRow] {
        [
            withVersion(StoreSnapshot.normalized(CrashTestModel.attachment(1, "external, paged", size: 110_000, seed: 1, previewSize: 200)), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.attachment(3, "small", size: 1_000, seed: 3, previewSize: 120_000)), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.attachment(4, "external, in the log", size: 105_000, seed: 4)), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.item(1, owner: 1, tags: [1])), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.owner(1, "Ann", items: [1])), 1),
            withVersion(StoreSnapshot.normalized(CrashTestModel.tag(1, "red", items: [1])), 1),
        ]
    }

    static let fixtureV3 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/golden-v3.store")

    /// The version-3 fixture's model: one entity with two fetch indexes (Formats/binary-store.md
    /// §7.2), on an integer and a string, and an attribute without one.
    static let readingModel: NSManagedObjectModel = {
        let reading = NSEntityDescription()
        reading.name = "Reading"
        reading.properties = [
            AllTypesModel.attribute("value", .integer64AttributeType), AllTypesModel.attribute("label", .stringAttributeType),
            AllTypesModel.attribute("taken", .dateAttributeType),
        ]
        reading.indexes = ["value", "label"].map {
            NSFetchIndexDescription(name: "by\($0)", elements: [NSFetchIndexElementDescription(propertyName: $0, collationType: .binary)])
        }
        let model = NSManagedObjectModel()
        model.entities = [reading]
        try? model.freeze()
        return model
    }()

    /// Reading `key` as the fixture first saves it: value `key * 7 % 50` (none for every
    /// eleventh), a label of ten kinds, a time.
    static func reading(_ key: Int64, version: Int64 = 0) -> StoreRow {
        var values: [String: StoreValue] = ["label": .string("label \(key % 10)"), "taken": .date(Date(timeIntervalSinceReferenceDate: Double(key) * 3_600))]
        if key % 11 != 0 { values["value"] = .integer(key * 7 % 50) }
        return StoreRow(objectID: StoreObjectID(entityName: "Reading", primaryKey: key), version: version, values: values)
    }

    static let fixtureV4 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/golden-v4.store")

    /// The version-3 fixture, and the version-4 one written the same way: readings 1–60
    /// checkpointed with both indexes persisted (and, in version 4, the page bounds of their data
    /// page, §7.3), then in the log an update of reading 3 (value 1000), a deletion of reading 4
    /// and a new reading 61.
    static func expectedV3Rows() -> [StoreRow] {
        var rows = (Int64(1)...61).filter { $0 != 4 && $0 != 3 }.map { reading($0, version: 1) }
        var third = reading(3, version: 2)
        third.values["value"] = .integer(1_000)
        rows.append(third)
        return rows
    }

    func testWriteGoldenFixtureWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["COREDATA_WRITE_GOLDEN"] == "1" else { return }
        let path = Self.fixtureV4.path
        try? BinaryStore.destroy(path: path)
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        let store = try BinaryStore(path: path, model: Self.readingModel, metadata: StoreMetadata([
            "NSStoreUUID": "8E2B4C1D-5A6F-4B70-9C81-D2E3F4A5B6C7", "NSStoreType": "Binary", "Fixture": "golden-v4",
        ]), options: options)
        _ = try store.save(StoreChangeSet(inserted: (Int64(1)...60).map { Self.reading($0) }))
        // Fetches build both indexes; the checkpoint persists them.
        let entity = try XCTUnwrap(Self.readingModel.entitiesByName["Reading"])
        for format in ["value > 40", "label == 'label 3'"] {
            _ = try store.execute(StoreFetchRequest(entity: entity, predicate: CoreDataPredicate.NSPredicate(format: format)))
        }
        try store.checkpoint()
        var third = Self.reading(3, version: 1)
        third.values["value"] = .integer(1_000)
        _ = try store.save(StoreChangeSet(
            inserted: [Self.reading(61)], updated: [third], deleted: [(StoreObjectID(entityName: "Reading", primaryKey: 4), 1)]))
        // Dropped without closing, as the version-2 fixture: the last save stays in the log.
        let logEnd = try store.statistics().logEnd
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "-wal"))
        try log.truncate(atOffset: logEnd)
        try log.close()
        try FileManager.default.removeItem(atPath: path + "-shm")
    }

    /// A copy of `fixture` (data file and log, and the external folder when asked) in a new
    /// folder; returns its path.
    private func copyOfFixture(_ fixture: URL, external: Bool = false) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("golden.store").path
        for suffix in ["", "-wal"] + (external ? [ExternalDataLayout.folderSuffix] : []) {
            try FileManager.default.copyItem(atPath: fixture.path + suffix, toPath: copy + suffix)
        }
        return copy
    }

    func testGoldenV3FixtureReadsBackExactlyWithItsIndexes() throws {
        let copy = try copyOfFixture(Self.fixtureV3)
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        XCTAssertEqual(try FileHeader(decoding: [UInt8](before.prefix(64))).formatVersion, 3)
        var options = BinaryStoreOptions()
        options.readOnly = true
        let store = try BinaryStore(path: copy, model: Self.readingModel, metadata: StoreMetadata(), options: options)
        for row in Self.expectedV3Rows() {
            XCTAssertEqual(try store.row(for: row.objectID), row)
        }
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Reading", primaryKey: 4)))
        XCTAssertEqual(try store.metadata()["Fixture"] as? String, "golden-v3")
        // The checkpoint's 60 readings: 55 with a value, all 60 with a label.
        XCTAssertEqual(try store.statistics().secondaryIndexes, ["Reading.value": 55, "Reading.label": 60])
        let entity = try XCTUnwrap(Self.readingModel.entitiesByName["Reading"])
        let rows = Self.expectedV3Rows()
        for format in ["value > 40", "value == 1000", "value == 21", "label == 'label 4'", "label BETWEEN {'label 2', 'label 3'}"] {
            let predicate = CoreDataPredicate.NSPredicate(format: format)
            let expected = StoreQuery.run(StoreFetchRequest(entity: entity, predicate: predicate), candidates: rows, resolve: { _ in nil },
                                          entities: Self.readingModel.entitiesByName)
            var request = StoreFetchRequest(entity: entity, predicate: predicate)
            request.resultType = .objectIDs
            guard case .objectIDs(let ids) = try store.execute(request) else { return XCTFail("IDs expected") }
            XCTAssertEqual(Set(ids), Set(expected.map(\.objectID)), format)
            XCTAssertFalse(ids.isEmpty, format)
        }
        XCTAssertEqual(store.secondaryLock.withLock { (store.secondaryIndexesRead, store.secondaryIndexesBuilt) }.0, 2, "both indexes are read from the file")
        XCTAssertEqual(store.secondaryLock.withLock { store.secondaryIndexesBuilt }, 0)
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try store.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: copy)), before, "a read-only open changed the file")
    }

    func testGoldenV4FixtureReadsBackExactlyWithItsIndexesAndPageBounds() throws {
        let copy = try copyOfFixture(Self.fixtureV4)
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        XCTAssertEqual(try FileHeader(decoding: [UInt8](before.prefix(64))).formatVersion, 4)
        var options = BinaryStoreOptions()
        options.readOnly = true
        let store = try BinaryStore(path: copy, model: Self.readingModel, metadata: StoreMetadata(), options: options)
        let rows = Self.expectedV3Rows()
        for row in rows {
            XCTAssertEqual(try store.row(for: row.objectID), row)
        }
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Reading", primaryKey: 4)))
        XCTAssertEqual(try store.metadata()["Fixture"] as? String, "golden-v4")
        XCTAssertEqual(try store.statistics().secondaryIndexes, ["Reading.value": 55, "Reading.label": 60])
        // The one data page's bounds: every label is "label N", so the page runs from
        // "label 0" to "label 9" by their 8-byte prefixes.
        let (directory, dataEnd) = store.rw.withReadLock { (store.root.pageBoundsDirectoryOffset, store.root.dataEnd) }
        let listings = try store.readPageBoundsDirectory(at: directory, dataEnd: dataEnd)
        XCTAssertEqual(listings.map(\.entryCount), [1])
        let entries = try store.readPageBoundsPage(try XCTUnwrap(listings.first), dataEnd: dataEnd, catalog: store.rw.withReadLock { store.catalog })
        func prefix(_ text: String) -> UInt64 { Array(text.utf8).withUnsafeBufferPointer { PageSortBounds.prefix($0) } ?? 0 }
        XCTAssertEqual(entries.map(\.bounds), [PageSortBounds(low: prefix("label 0"), high: prefix("label 9"))])
        let entity = try XCTUnwrap(Self.readingModel.entitiesByName["Reading"])
        for ascending in [true, false] {
            let request = StoreFetchRequest(
                entity: entity, predicate: CoreDataPredicate.NSPredicate(format: "taken != nil"),
                sortDescriptors: [CoreDataPredicate.NSSortDescriptor(key: "label", ascending: ascending)], limit: 5)
            let expected = StoreQuery.run(request, candidates: rows, resolve: { _ in nil }, entities: Self.readingModel.entitiesByName)
            guard case .rows(let got) = try store.execute(request) else { return XCTFail("rows expected") }
            XCTAssertEqual(got.map(\.objectID), expected.map(\.objectID))
        }
        XCTAssertEqual(store.pageSortBounds.counts.pages, 1, "the file's bounds were read")
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try store.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: copy)), before, "a read-only open changed the file")
    }

    /// The previous version's fixture is written on as version 3 (no page bounds), and
    /// compaction upgrades it to version 4 with every row as it was and its pages bounded.
    func testGoldenV3FixtureUpgradesToVersion4ByCompaction() throws {
        let copy = try copyOfFixture(Self.fixtureV3)
        let store = try BinaryStore(path: copy, model: Self.readingModel, metadata: StoreMetadata())
        try store.checkpoint()
        XCTAssertEqual(try store.statistics().formatVersion, 3)
        XCTAssertEqual(store.rw.withReadLock { store.root.pageBoundsDirectoryOffset }, 0)
        try store.compact()
        XCTAssertEqual(try store.statistics().formatVersion, 4)
        XCTAssertNotEqual(store.rw.withReadLock { store.root.pageBoundsDirectoryOffset }, 0)
        try store.close()
        let reopened = try BinaryStore(path: copy, model: Self.readingModel, metadata: StoreMetadata())
        for row in Self.expectedV3Rows() {
            XCTAssertEqual(try reopened.row(for: row.objectID), row)
        }
        let verification = try reopened.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try reopened.close()
    }

    /// An older version's fixture opens writable, is written on as version 2 (no secondary
    /// index), and compaction upgrades it to the current version with every row as it was.
    func testGoldenV2FixtureUpgradesToTheCurrentVersionByCompaction() throws {
        let copy = try copyOfFixture(Self.fixtureV2, external: true)
        let store = try BinaryStore(path: copy, model: CrashTestModel.model, metadata: StoreMetadata())
        try store.checkpoint()
        XCTAssertEqual(try store.statistics().formatVersion, 2)
        try store.compact()
        XCTAssertEqual(try store.statistics().formatVersion, BinaryStoreLayout.formatVersion)
        try store.close()
        let reopened = try BinaryStore(path: copy, model: CrashTestModel.model, metadata: StoreMetadata())
        for row in Self.expectedV2Rows() {
            XCTAssertEqual(try reopened.row(for: row.objectID), row)
        }
        let verification = try reopened.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try reopened.close()
    }

    func testGoldenV2FixtureReadsBackExactly() throws {
        let copy = try copyOfFixture(Self.fixtureV2, external: true)
        let header = try FileHeader(decoding: [UInt8](try Data(contentsOf: URL(fileURLWithPath: copy)).prefix(64)))
        XCTAssertEqual(header.formatVersion, 2)
        var options = BinaryStoreOptions()
        options.readOnly = true
        let store = try BinaryStore(path: copy, model: CrashTestModel.model, metadata: StoreMetadata(), options: options)
        for row in Self.expectedV2Rows() {
            XCTAssertEqual(try store.row(for: row.objectID), row)
        }
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Attachment", primaryKey: 2)))
        XCTAssertEqual(try store.metadata()["Fixture"] as? String, "golden-v2")
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        XCTAssertEqual(verification.externalFiles, 3, "attachment 2's superseded record in the data pages still names its file")
        XCTAssertEqual(verification.orphanedExternalFiles, [])
        try store.close()
    }

    func testGoldenFixtureReadsBackExactly() throws {
        let copy = URL(fileURLWithPath: try copyOfFixture(Self.fixture))
        let header = try FileHeader(decoding: [UInt8](try Data(contentsOf: copy).prefix(64)))
        XCTAssertEqual(header.formatVersion, 1)
        XCTAssertEqual(header.storeUUID.uuidString, "6F1C2A3B-4D5E-4F60-8172-93A4B5C6D7E8")
        var options = BinaryStoreOptions()
        options.readOnly = true
        let store = try BinaryStore(path: copy.path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
        for row in Self.expectedRows() {
            XCTAssertEqual(try store.row(for: row.objectID), row)
        }
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Item", primaryKey: 2)))
        XCTAssertEqual(try store.objectCounts(), ["Owner": 1, "Item": 4, "Tag": 2])
        XCTAssertEqual(try store.metadata()["Fixture"] as? String, "golden-v1")
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try store.close()
        XCTAssertEqual(try Data(contentsOf: copy), try Data(contentsOf: Self.fixture), "a read-only open changed the file")
    }

    /// The fixture was written with 64 KiB pages: a checkpoint keeps its header's page size, and
    /// compaction rewrites it at today's target size, with every row as it was.
    func testGoldenFixtureCompactsToTodaysPageSize() throws {
        let copy = URL(fileURLWithPath: try copyOfFixture(Self.fixture))
        func pageSize() throws -> UInt32 { try FileHeader(decoding: [UInt8](try Data(contentsOf: copy).prefix(64))).pageSize }
        XCTAssertEqual(try pageSize(), 65_536)

        var store = try BinaryStore(path: copy.path, model: BinaryTestModel.model, metadata: StoreMetadata())
        try store.checkpoint()
        XCTAssertEqual(try pageSize(), 65_536, "a checkpoint keeps the header's page size")
        try store.compact()
        XCTAssertEqual(try pageSize(), UInt32(BinaryStoreLayout.targetPageSize))
        try store.close()

        store = try BinaryStore(path: copy.path, model: BinaryTestModel.model, metadata: StoreMetadata())
        for row in Self.expectedRows() {
            XCTAssertEqual(try store.row(for: row.objectID), row)
        }
        XCTAssertNil(try store.row(for: StoreObjectID(entityName: "Item", primaryKey: 2)))
        XCTAssertEqual(try store.objectCounts(), ["Owner": 1, "Item": 4, "Tag": 2])
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(verification)")
        try store.close()
    }
}
