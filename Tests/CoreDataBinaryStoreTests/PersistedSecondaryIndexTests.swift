@testable import CoreDataBinaryStore
import CoreDataBinaryFormat
import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

// Foundation declares these names too; here they mean the working classes.
private typealias NSPredicate = CoreDataPredicate.NSPredicate

/// Persisted secondary indexes (Formats/binary-store.md §7.2): a checkpoint writes the indexes
/// to the file, an indexed fetch after open reads them instead of building them, every later
/// checkpoint keeps them current (listed again when unchanged), damage costs only a rebuild, and
/// version-2 stores get them at compaction. Every check compares fetches with a reference
/// evaluator over the same rows and runs `verify`, which checks each index against the records.
final class PersistedSecondaryIndexTests: XCTestCase {
    static func model(indexing personAttributes: [String] = ["age", "name", "score", "born"]) -> NSManagedObjectModel {
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [
            AllTypesModel.attribute("name", .stringAttributeType), AllTypesModel.attribute("age", .integer32AttributeType),
            AllTypesModel.attribute("score", .doubleAttributeType), AllTypesModel.attribute("born", .dateAttributeType),
        ]
        person.indexes = personAttributes.map {
            NSFetchIndexDescription(name: "by\($0)", elements: [NSFetchIndexElementDescription(propertyName: $0, collationType: .binary)])
        }
        let pet = NSEntityDescription()
        pet.name = "Pet"
        pet.properties = [AllTypesModel.attribute("weight", .integer64AttributeType), AllTypesModel.attribute("nickname", .stringAttributeType)]
        pet.indexes = [NSFetchIndexDescription(name: "byweight", elements: [NSFetchIndexElementDescription(propertyName: "weight", collationType: .binary)])]
        let model = NSManagedObjectModel()
        model.entities = [person, pet]
        try? model.freeze()
        return model
    }

    private static let fullModel = model()
    private static let day = Date(timeIntervalSinceReferenceDate: 20 * 86_400)
    private static let predicates: [(entity: String, format: String)] = [
        ("Person", "age > 50"), ("Person", "age == 37"), ("Person", "age BETWEEN {10, 30}"), ("Person", "score >= 5.5"),
        ("Person", "born > %@"), ("Person", "name == 'n7'"), ("Person", "name < 'n3'"), ("Person", "age > 50 AND score < 5"),
        ("Pet", "weight < 300"), ("Pet", "weight == 42"),
    ]

    /// A random row of `entity`; now and then a value is nil (or NaN), which no index holds.
    private func row(_ entity: String, _ key: Int64, _ random: inout SeededGenerator, version: Int64 = 0) -> StoreRow {
        var values: [String: StoreValue] = [:]
        if entity == "Pet" {
            if random.next() % 7 != 0 { values["weight"] = .integer(Int64(random.next() % 1_000)) }
            values["nickname"] = .string("pet \(key)")
        } else {
            if random.next() % 9 != 0 { values["age"] = .integer(Int64(random.next() % 100)) }
            // Names long enough that an index of a few thousand rows takes several pages.
            if random.next() % 9 != 0 { values["name"] = .string("n\(random.next() % 12) of a longer name, \(random.next() % 1_000)") }
            if random.next() % 9 != 0 { values["score"] = .double(random.next() % 31 == 0 ? .nan : Double(random.next() % 40) / 4) }
            if random.next() % 9 != 0 { values["born"] = .date(Date(timeIntervalSinceReferenceDate: Double(random.next() % 40) * 86_400)) }
        }
        return StoreRow(objectID: StoreObjectID(entityName: entity, primaryKey: key), version: version, values: values)
    }

    /// Every predicate's fetch against the reference evaluator.
    private func check(_ store: BinaryStore, _ rows: [StoreObjectID: StoreRow], _ context: String, model: NSManagedObjectModel = fullModel) throws {
        for (name, format) in Self.predicates {
            let entity = try XCTUnwrap(model.entitiesByName[name])
            let predicate = NSPredicate(format: format, argumentArray: format.contains("%@") ? [Self.day] : [])
            let candidates = rows.values.filter { $0.objectID.entityName == name }
            let expected = StoreQuery.run(StoreFetchRequest(entity: entity, predicate: predicate), candidates: Array(candidates),
                                          resolve: { _ in nil }, entities: model.entitiesByName)
            var request = StoreFetchRequest(entity: entity, predicate: predicate)
            request.resultType = .objectIDs
            guard case .objectIDs(let ids) = try store.execute(request) else { return XCTFail("IDs expected") }
            XCTAssertEqual(ids.count, Set(ids).count, "\(context): \(format) returned an object twice")
            XCTAssertEqual(Set(ids), Set(expected.map(\.objectID)), "\(context): \(format)")
        }
    }

    private func assertIntact(_ store: BinaryStore, _ context: String) throws {
        let verification = try store.verify()
        XCTAssertTrue(verification.isIntact, "\(context): \(verification)")
    }

    private func counts(_ store: BinaryStore) -> (read: Int, built: Int) {
        store.secondaryLock.withLock { (store.secondaryIndexesRead, store.secondaryIndexesBuilt) }
    }

    private func listings(_ store: BinaryStore) -> [String: SecondaryIndexListing] {
        let catalog = store.rw.withReadLock { store.catalog }
        return store.secondaryLock.withLock {
            Dictionary(uniqueKeysWithValues: store.persistedSecondary.map { id, listing in
                ("\(catalog.entities[id.entityID].name).\(catalog.entities[id.entityID].properties[id.propertyIndex])", listing)
            })
        }
    }

    private func open(_ path: String, model: NSManagedObjectModel = fullModel) throws -> BinaryStore {
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        return try BinaryStore(path: path, model: model, metadata: StoreMetadata(), options: options)
    }

    /// Random saves of one round: updates and deletes of about a third of the rows of
    /// `entities`, and new rows.
    private func randomSave(_ store: BinaryStore, _ rows: inout [StoreObjectID: StoreRow], _ random: inout SeededGenerator,
                            nextKey: inout Int64, entities: [String] = ["Person", "Pet"]) throws {
        var updated: [StoreRow] = []
        var deleted: [(StoreObjectID, Int64)] = []
        for id in rows.keys.sorted(by: { ($0.entityName, $0.primaryKey) < ($1.entityName, $1.primaryKey) })
        where entities.contains(id.entityName) && random.next() % 3 == 0 {
            let version = try XCTUnwrap(rows[id]?.version)
            if random.next() % 8 == 0 {
                deleted.append((id, version))
                rows[id] = nil
            } else {
                var changed = row(id.entityName, id.primaryKey, &random, version: version)
                updated.append(changed)
                changed.version += 1
                rows[id] = changed
            }
        }
        var inserted: [StoreRow] = []
        for _ in 0..<Int(random.next() % 60) {
            let entity = entities[Int(random.next() % UInt64(entities.count))]
            var new = row(entity, nextKey, &random)
            nextKey += 1
            inserted.append(new)
            new.version = 1
            rows[new.objectID] = new
        }
        _ = try store.save(StoreChangeSet(inserted: inserted, updated: updated, deleted: deleted))
    }

    /// A store of `count` Person and `count / 4` Pet rows, checked once (which builds every
    /// index) and checkpointed.
    private func seeded(_ path: String, count: Int64, seed: UInt64) throws -> (BinaryStore, [StoreObjectID: StoreRow], SeededGenerator, Int64) {
        let store = try open(path)
        var random = SeededGenerator(seed: seed)
        var rows: [StoreObjectID: StoreRow] = [:]
        var initial = (Int64(1)...count).map { row("Person", $0, &random) }
        initial += (Int64(1)...(count / 4)).map { row("Pet", $0, &random) }
        _ = try store.save(StoreChangeSet(inserted: initial))
        for var row in initial {
            row.version = 1
            rows[row.objectID] = row
        }
        try check(store, rows, "after the first save")
        try store.checkpoint()
        return (store, rows, random, count + 1)
    }

    func testAnIndexedFetchAfterReopenReadsTheIndexFromTheFile() throws {
        let path = BinaryTestModel.temporaryPath()
        let (store, rows, _, _) = try seeded(path, count: 6_000, seed: 11)
        XCTAssertEqual(counts(store).built, 5)
        let written = listings(store)
        XCTAssertEqual(Set(written.keys), ["Person.age", "Person.name", "Person.score", "Person.born", "Pet.weight"])
        XCTAssertGreaterThan(try XCTUnwrap(written["Person.name"]).pageOffsets.count, 1, "a string index of 6,000 rows takes several pages")
        XCTAssertEqual(try store.statistics().secondaryIndexes["Person.age"], rows.values.count { $0.objectID.entityName == "Person" && $0.values["age"] != nil })
        try assertIntact(store, "after the checkpoint")
        try store.close()

        let reopened = try open(path)
        try check(reopened, rows, "after reopening")
        XCTAssertEqual(counts(reopened).read, 5, "every index is read from the file")
        XCTAssertEqual(counts(reopened).built, 0, "no index is built from the records")
        try reopened.close()
    }

    /// A checkpoint lists again every page of an index that no change reached, whether the index
    /// is in memory (changed by saves) or only in the file (read and updated by the checkpoint);
    /// a save that sends a value unchanged rewrites only the page holding its key.
    func testPagesNoChangeReachedAreListedAgain() throws {
        let path = BinaryTestModel.temporaryPath()
        var (store, rows, _, _) = try seeded(path, count: 6_000, seed: 21)
        func rename(_ key: Int64, _ name: String) throws {
            let id = StoreObjectID(entityName: "Person", primaryKey: key)
            var row = try XCTUnwrap(rows[id])
            row.values["name"] = .string(name)
            _ = try store.save(StoreChangeSet(updated: [row]))
            row.version += 1
            rows[id] = row
        }
        func kept(_ before: [UInt64], _ after: [UInt64]) -> Int { Set(before).intersection(after).count }

        let names = try XCTUnwrap(listings(store)["Person.name"]).pageOffsets
        let ages = try XCTUnwrap(listings(store)["Person.age"])
        XCTAssertGreaterThan(names.count, 3)
        try rename(1, "n5 of a longer name, 500 and one")
        try rename(2, "n5 of a longer name, 500 and two")
        try store.checkpoint()
        let afterInMemory = try XCTUnwrap(listings(store)["Person.name"]).pageOffsets
        XCTAssertGreaterThanOrEqual(kept(names, afterInMemory), names.count - 2, "\(names) then \(afterInMemory)")
        // The two saves sent the same ages again: only the pages holding those keys are rewritten.
        let agesAfter = try XCTUnwrap(listings(store)["Person.age"])
        XCTAssertEqual(agesAfter.entryCount, ages.entryCount)
        XCTAssertGreaterThanOrEqual(kept(ages.pageOffsets, agesAfter.pageOffsets), ages.pageOffsets.count - 2)
        try check(store, rows, "after the in-memory checkpoint")
        try assertIntact(store, "after the in-memory checkpoint")

        try store.close()
        store = try open(path)
        try rename(3, "n0 of a longer name, 3")
        try store.checkpoint()
        XCTAssertEqual(counts(store).read + counts(store).built, 0, "no fetch ran")
        let afterRead = try XCTUnwrap(listings(store)["Person.name"]).pageOffsets
        XCTAssertGreaterThanOrEqual(kept(afterInMemory, afterRead), afterInMemory.count - 2, "\(afterInMemory) then \(afterRead)")
        try assertIntact(store, "after the checkpoint that read the index")
        // Kept in memory with its new pages: the next checkpoint reads nothing again.
        try rename(4, "n9 of a longer name, 4")
        try store.checkpoint()
        XCTAssertGreaterThanOrEqual(kept(afterRead, try XCTUnwrap(listings(store)["Person.name"]).pageOffsets), afterRead.count - 2)
        try check(store, rows, "at the end")
        // Person's four stayed in memory after the checkpoint read them; Pet's, whose entity no
        // save touched, was listed again unread and is read by the first fetch.
        XCTAssertEqual(counts(store).read, 1, "the indexes the checkpoint read stayed in memory")
        try assertIntact(store, "at the end")
        try store.close()
    }

    /// A checkpoint that reads an index only in the file and applies more changes than an
    /// index keeps beside its entries: every change reaches the pages, including values that
    /// changed without moving their entry (its neighbours stay the same), which a comparison of
    /// keys alone would take for unchanged.
    func testManyChangesToAnIndexOnlyInTheFileAllReachItsPages() throws {
        let path = BinaryTestModel.temporaryPath()
        var store = try open(path)
        var rows: [StoreObjectID: StoreRow] = [:]
        let initial = (Int64(1)...12_000).map { key in
            StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: key), version: 0, values: ["age": .integer(key * 10)])
        }
        _ = try store.save(StoreChangeSet(inserted: initial))
        for var row in initial {
            row.version = 1
            rows[row.objectID] = row
        }
        try check(store, rows, "seeded")
        try store.checkpoint()
        try store.close()

        store = try open(path)
        // Every other age moves by one: each entry keeps its neighbours.
        var updated: [StoreRow] = []
        for key in stride(from: Int64(2), through: 12_000, by: 2) {
            var row = try XCTUnwrap(rows[StoreObjectID(entityName: "Person", primaryKey: key)])
            row.values["age"] = .integer(key * 10 + 1)
            updated.append(row)
            row.version += 1
            rows[row.objectID] = row
        }
        _ = try store.save(StoreChangeSet(updated: updated))
        try store.checkpoint()
        XCTAssertEqual(counts(store).read + counts(store).built, 0, "no fetch ran: the checkpoint read the index")
        try assertIntact(store, "after the checkpoint")
        try store.close()

        store = try open(path)
        let entity = try XCTUnwrap(Self.fullModel.entitiesByName["Person"])
        var request = StoreFetchRequest(entity: entity, predicate: NSPredicate(format: "age == 20001"))
        request.resultType = .objectIDs
        guard case .objectIDs(let ids) = try store.execute(request) else { return XCTFail("IDs expected") }
        XCTAssertEqual(ids.map(\.primaryKey), [2_000])
        try check(store, rows, "reopened")
        try store.close()
    }

    /// Appends to an index (ever larger ages, as a timestamp grows) past the number of changes
    /// an index keeps beside its entries: the index folds them between checkpoints, and the next
    /// checkpoint still lists again every page but the last few.
    func testFoldsBetweenCheckpointsKeepUntouchedPagesListed() throws {
        let path = BinaryTestModel.temporaryPath()
        let store = try open(path)
        var rows: [StoreObjectID: StoreRow] = [:]
        func insert(_ keys: ClosedRange<Int64>) throws {
            let new = keys.map { StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: $0), version: 0, values: ["age": .integer($0)]) }
            _ = try store.save(StoreChangeSet(inserted: new))
            for var row in new {
                row.version = 1
                rows[row.objectID] = row
            }
        }
        try insert(1...20_000)
        try check(store, rows, "seeded")
        try store.checkpoint()
        let before = try XCTUnwrap(listings(store)["Person.age"]).pageOffsets
        for chunk in Int64(0)..<3 { try insert((20_001 + chunk * 2_000)...(22_000 + chunk * 2_000)) }
        try check(store, rows, "after 6,000 appends, folded once")
        try store.checkpoint()
        let after = try XCTUnwrap(listings(store)["Person.age"]).pageOffsets
        XCTAssertGreaterThanOrEqual(Set(before).intersection(after).count, before.count - 1, "\(before) then \(after)")
        try assertIntact(store, "after the checkpoint")
        try check(store, rows, "after the checkpoint")
        try store.close()
    }

    /// The page layout of a changed index: pages a change did not reach are listed again, and an
    /// entry that falls between two pages (or after the last) does not get a page of its own.
    func testAnEntryBetweenPagesLeavesNoSliverPage() throws {
        let old: [SecondaryIndexCodec.Entry] = (Int64(1)...4_000).map { (.integer($0), $0) }
        let listing = SecondaryIndexListing(entityID: 0, propertyIndex: 0, kind: .integer, entryCount: 4_000, pageOffsets: [4_096, 8_192, 12_288, 16_384])
        // The fold's edit: two entries inserted, before old position 2,000 and at the end.
        let reuse = SecondaryPageReuse(
            pages: SecondaryIndexPages(listing: listing, starts: [0, 1_000, 2_000, 3_000]),
            edit: SecondaryEntries.Edit(oldCount: 4_000, dropped: [], insertions: [2_000, 4_000]))
        // Value 2,000 with a larger key sorts just after page 2's last entry; 5,000 after the last.
        var entries = old
        entries.insert((.integer(2_000), 9_001), at: 2_000)
        entries.append((.integer(5_000), 9_002))
        var layout = SecondaryPageLayout(entries: SecondaryEntries(kind: .integer, sorted: entries))
        var written: [Range<Int>] = []
        try layout.place(reusing: reuse) { (range) throws(StoreError) -> Int in
            written.append(range)
            return written.count - 1
        }
        let listed = layout.slots.compactMap { slot -> UInt64? in if case .old(let offset) = slot { return offset } else { return nil } }
        XCTAssertEqual(listed, [4_096, 8_192], "pages 1 and 2 are listed again; 3 and 4 take the new entries with them")
        XCTAssertEqual(written, [2_000..<3_001, 3_001..<4_002], "the rest in two even pages, no page of one entry")
        XCTAssertEqual(layout.starts, [0, 1_000, 2_000, 3_001])
    }

    /// Saves, checkpoints, reopens, fetches and another handle's saves in a fixed rotation, so
    /// that every path of §7.2 runs: indexes in memory written or listed again, indexes only in
    /// the file listed again or read, updated and written, and indexes read after open with the
    /// log's saves applied. After every checkpoint `verify` checks each index against the records.
    func testRandomWorkAcrossCheckpointsAndReopensAgreesWithTheReference() throws {
        let path = BinaryTestModel.temporaryPath()
        var (store, rows, random, nextKey) = try seeded(path, count: 1_500, seed: 0x7E57)
        var checkpoints = 0
        for round in 0..<36 {
            let context = "round \(round)"
            switch round % 6 {
            case 0:
                // Reopen; save; checkpoint without a fetch: the indexes are only in the file.
                try store.close()
                store = try open(path)
                try randomSave(store, &rows, &random, nextKey: &nextKey)
                try store.checkpoint()
                XCTAssertEqual(counts(store).read + counts(store).built, 0, "\(context): the checkpoint needed no fetch")
            case 1:
                // Saves in the log, then fetches: read from the file with the log applied.
                try randomSave(store, &rows, &random, nextKey: &nextKey)
                try check(store, rows, context)
                XCTAssertEqual(counts(store).built, 0, "\(context): read from the file, not built")
                try randomSave(store, &rows, &random, nextKey: &nextKey)
                try store.checkpoint()
            case 2:
                // Only Pet changes: Person's indexes are listed again, in memory or not.
                try store.close()
                store = try open(path)
                let before = listings(store)
                try randomSave(store, &rows, &random, nextKey: &nextKey, entities: ["Pet"])
                try store.checkpoint()
                let after = listings(store)
                for name in ["Person.age", "Person.name", "Person.score", "Person.born"] {
                    XCTAssertEqual(after[name], before[name], "\(context): \(name) is listed again")
                }
            case 3:
                // Another handle saves: this one's indexes of what it changed are dropped.
                try check(store, rows, context)
                let other = try open(path)
                try randomSave(other, &rows, &random, nextKey: &nextKey)
                try other.close()
                try check(store, rows, "\(context), after the other handle's save")
                try store.checkpoint()
            case 4:
                // A checkpoint with nothing to copy changes nothing.
                let before = listings(store)
                try store.checkpoint()
                XCTAssertEqual(listings(store), before, context)
                try randomSave(store, &rows, &random, nextKey: &nextKey)
                try store.checkpoint()
            default:
                try randomSave(store, &rows, &random, nextKey: &nextKey)
                try check(store, rows, context)
                try store.checkpoint()
            }
            checkpoints += 1
            XCTAssertEqual(listings(store).count, 5, "\(context): every index stays in the file")
            try assertIntact(store, context)
        }
        try check(store, rows, "at the end")
        try store.close()
        let reopened = try open(path)
        try check(reopened, rows, "after the last reopen")
        XCTAssertEqual(counts(reopened).built, 0)
        try assertIntact(reopened, "after the last reopen")
        try reopened.close()
        XCTAssertGreaterThan(checkpoints, 30)
    }

    /// A damaged index page costs only that index: the fetch builds it from the records, verify
    /// names the page, and the next checkpoint writes it anew. A damaged directory is reported by
    /// open and costs every index the same way.
    func testDamageCostsOnlyARebuild() throws {
        let path = BinaryTestModel.temporaryPath()
        let (store, rows, _, _) = try seeded(path, count: 800, seed: 5)
        let ageListing = try XCTUnwrap(listings(store)["Person.age"])
        let directory = store.rw.withReadLock { store.root.secondaryIndexDirectoryOffset }
        try store.close()

        func flip(at offset: UInt64) throws {
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            try handle.seek(toOffset: offset)
            let byte = try XCTUnwrap(handle.readData(ofLength: 1).first)
            try handle.seek(toOffset: offset)
            handle.write(Data([byte ^ 0x5A]))
            try handle.close()
        }
        // A byte of the payload: the page's checksum no longer matches.
        try flip(at: ageListing.pageOffsets[0] + UInt64(BinaryStoreLayout.pageHeaderSize) + 3)
        var reopened = try open(path)
        XCTAssertNil(reopened.openReport.droppedSecondaryIndexes)
        let damaged = try reopened.verify()
        XCTAssertTrue(damaged.issues.contains { "\($0)".contains("secondary index Person.age") }, "\(damaged)")
        try check(reopened, rows, "with a damaged page")
        XCTAssertEqual(counts(reopened).built, 1, "only the damaged index is built from the records")
        XCTAssertEqual(counts(reopened).read, 4)
        // Nothing to copy: a checkpoint needs a save.
        _ = try reopened.save(StoreChangeSet(inserted: [StoreRow(objectID: StoreObjectID(entityName: "Pet", primaryKey: 10_000), version: 0, values: ["weight": .integer(7)])]))
        var rowsAfter = rows
        rowsAfter[StoreObjectID(entityName: "Pet", primaryKey: 10_000)] = StoreRow(
            objectID: StoreObjectID(entityName: "Pet", primaryKey: 10_000), version: 1, values: ["weight": .integer(7)])
        try reopened.checkpoint()
        // The damaged page stays in the file, unlisted, until compaction: the only damage left.
        let damagedPage = "data file offset \(ageListing.pageOffsets[0])"
        let left = try reopened.verify().issues
        XCTAssertFalse(left.isEmpty)
        XCTAssertTrue(left.allSatisfy { "\($0)".contains(damagedPage) }, "\(left)")
        let directoryAfter = reopened.rw.withReadLock { reopened.root.secondaryIndexDirectoryOffset }
        try reopened.close()

        try flip(at: directoryAfter + UInt64(BinaryStoreLayout.pageHeaderSize) + 1)
        reopened = try open(path)
        XCTAssertNotNil(reopened.openReport.droppedSecondaryIndexes)
        XCTAssertNotEqual(directory, directoryAfter)
        XCTAssertFalse(try reopened.verify().isIntact)
        try check(reopened, rowsAfter, "with a damaged directory")
        XCTAssertEqual(counts(reopened).built, 5)
        _ = try reopened.save(StoreChangeSet(deleted: [(StoreObjectID(entityName: "Pet", primaryKey: 10_000), 1)]))
        try reopened.checkpoint()
        XCTAssertEqual(listings(reopened).count, 5)
        let stillLeft = try reopened.verify().issues
        XCTAssertTrue(stillLeft.allSatisfy { "\($0)".contains(damagedPage) || "\($0)".contains("data file offset \(directoryAfter)") }, "\(stillLeft)")
        try reopened.compact()
        try assertIntact(reopened, "after compaction")
        try check(reopened, rowsAfter.filter { $0.key.primaryKey != 10_000 || $0.key.entityName != "Pet" }, "after compaction")
        try reopened.close()
    }

    /// A store of format version 2 is written on as version 2, without secondary indexes, so an
    /// older build still opens it; compaction makes it the current version with its indexes in the file.
    func testAVersion2StoreGetsItsIndexesAtCompaction() throws {
        let path = BinaryTestModel.temporaryPath()
        let (first, rows, _, _) = try seeded(path, count: 300, seed: 3)
        try first.close()
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        var header = try FileHeader(decoding: Array(data[0..<64]))
        header.formatVersion = 2
        data.replaceSubrange(0..<64, with: header.encoded())
        let (root, slot) = try XCTUnwrap(RootSlot.newest(in: [UInt8](data)))
        let offset = BinaryStoreLayout.rootSlotOffsets[slot]
        data.replaceSubrange(offset..<(offset + BinaryStoreLayout.rootSlotSize), with: root.encoded(formatVersion: 2))
        try data.write(to: URL(fileURLWithPath: path))

        let store = try open(path)
        XCTAssertEqual(listings(store).count, 0, "a version-2 root names no secondary index")
        try check(store, rows, "version 2")
        XCTAssertEqual(counts(store).built, 5)
        _ = try store.save(StoreChangeSet(inserted: [StoreRow(objectID: StoreObjectID(entityName: "Pet", primaryKey: 9_999), version: 0, values: [:])]))
        var all = rows
        all[StoreObjectID(entityName: "Pet", primaryKey: 9_999)] = StoreRow(objectID: StoreObjectID(entityName: "Pet", primaryKey: 9_999), version: 1, values: [:])
        try store.checkpoint()
        XCTAssertEqual(try store.statistics().formatVersion, 2)
        XCTAssertEqual(store.rw.withReadLock { store.root.secondaryIndexDirectoryOffset }, 0)
        XCTAssertEqual(listings(store).count, 0, "a version-2 checkpoint writes no secondary index")
        try store.compact()
        XCTAssertEqual(try store.statistics().formatVersion, BinaryStoreLayout.formatVersion)
        XCTAssertEqual(listings(store).count, 5)
        try assertIntact(store, "after compaction")
        try store.close()

        let reopened = try open(path)
        try check(reopened, all, "after compaction and reopen")
        XCTAssertEqual(counts(reopened).built, 0)
        try reopened.close()
    }

    /// Fetch indexes are not part of the version hash, so a model may drop one: its index is not
    /// used and the next checkpoint leaves it out; the others carry on.
    func testAnIndexTheModelNoLongerHasIsLeftOut() throws {
        let path = BinaryTestModel.temporaryPath()
        var (store, rows, random, nextKey) = try seeded(path, count: 500, seed: 8)
        try store.close()
        let fewer = Self.model(indexing: ["age", "name"])
        store = try open(path, model: fewer)
        try randomSave(store, &rows, &random, nextKey: &nextKey)
        try store.checkpoint()
        XCTAssertEqual(Set(listings(store).keys), ["Person.age", "Person.name", "Pet.weight"])
        try assertIntact(store, "with fewer indexes")
        try check(store, rows, "with fewer indexes", model: fewer)
        try store.close()

        store = try open(path)
        try check(store, rows, "with every index again")
        XCTAssertEqual(counts(store).read, 3)
        XCTAssertEqual(counts(store).built, 2, "score and born are built from the records")
        try store.close()
    }
}
