// The store FuzzBinaryStoreSaves writes to, and what it must hold: every operation of the program
// and the checks after it.
import CoreDataBinaryStore
import CoreDataModel
import CoreDataStorage
import CoreDataTestModel
import Foundation
import FuzzBinarySupport

extension FuzzBinaryStoreSaves {
    /// Why the store must refuse a save.
    enum Fault: Hashable {
        case versionConflict, duplicateID, danglingReference

        init?(_ error: StoreError) {
            switch error {
            case .optimisticLockingFailure: self = .versionConflict
            case .duplicateObjectID: self = .duplicateID
            case .danglingReference: self = .danglingReference
            default: return nil
            }
        }
    }

    /// What a save must do, worked out from the reference before it runs.
    enum Prediction {
        case success
        /// It must throw the error of one of these faults.
        case failure(Set<Fault>)
        /// It refers to objects of entities the model does not have (in a fuzzed store), which
        /// the reference does not track: it may succeed, or throw a dangling-reference error.
        case unknown
    }

    /// One store and the reference of what it must hold.
    final class Session {
        var fileSystem: MemoryFileSystem
        var options: BinaryStoreOptions
        /// Rows made with name-keyed values (their own layout) instead of the entity's layout.
        let nameKeyedRows: Bool
        /// Whether the store was created by this input (no data file given).
        let created: Bool
        /// `nil` once it could not be reopened.
        private(set) var store: BinaryStore?
        /// Every object of the model's entities in the store, as it must read back.
        var reference: [StoreObjectID: StoreRow] = [:]
        /// Whether the store verified intact when it was opened; only then are guarantees checked.
        var trusted = false
        /// The value stored under ``metadataKey``.
        var metadataText: String?
        /// The operation running, for messages.
        var step = "open"

        static let metadataKey = "FuzzText"

        init(files: [String: [UInt8]], options: BinaryStoreOptions, nameKeyedRows: Bool, created: Bool) {
            self.fileSystem = MemoryFileSystem(files: files)
            self.options = options
            self.nameKeyedRows = nameKeyedRows
            self.created = created
        }

        // MARK: Checks

        /// Traps with `message` when the store is trusted and `condition` is false.
        func expect(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
            guard trusted, !condition() else { return }
            preconditionFailure("FuzzBinaryStoreSaves, \(step): \(message())")
        }

        /// Each object's row as the store reads it by ID matches the reference, and the counts do.
        func checkObjects(_ ids: some Sequence<StoreObjectID>) {
            guard trusted, let store else { return }
            for id in Set(ids) {
                do {
                    let row = try store.row(for: id)
                    switch (reference[id], row) {
                    case (nil, nil): continue
                    case (let expected?, let actual?): expect(same(expected, actual), "\(id) reads back as \(describe(actual)), expected \(describe(expected))")
                    case (let expected, let actual): expect(false, "\(id) reads back as \(describe(actual)), expected \(describe(expected))")
                    }
                } catch {
                    expect(false, "row(for: \(id)) threw \(error)")
                }
            }
            checkCounts()
        }

        func checkCounts() {
            guard trusted, let store else { return }
            do {
                let counts = try store.objectCounts()
                for name in entityNames {
                    let expected = reference.keys.count(where: { $0.entityName == name })
                    expect(counts[name, default: 0] == expected, "objectCounts() has \(counts[name, default: 0]) \(name) objects, expected \(expected)")
                }
            } catch {
                expect(false, "objectCounts() threw \(error)")
            }
        }

        /// Every fetch of every entity (rows, IDs, count) and every row by ID match the reference.
        func checkAll() {
            guard trusted, let store else { return }
            for name in entityNames {
                guard let entity = entities[name] else { continue }
                let expected = reference.values.filter { $0.objectID.entityName == name }.sorted { $0.objectID < $1.objectID }
                do {
                    guard case .rows(let rows) = try store.execute(StoreFetchRequest(entity: entity)) else {
                        preconditionFailure("a rows fetch returned something else")
                    }
                    // StoreFetchRequest: no sort descriptors means the store's order, by object ID.
                    expect(zip(rows, rows.dropFirst()).allSatisfy { $0.objectID < $1.objectID }, "a fetch of \(name) is not in object-ID order: \(rows.map(\.objectID))")
                    let sorted = rows.sorted { $0.objectID < $1.objectID }
                    expect(sorted.map(\.objectID) == expected.map(\.objectID), "a fetch of \(name) returns \(sorted.map(\.objectID)), expected \(expected.map(\.objectID))")
                    for (row, reference) in zip(sorted, expected) {
                        expect(same(reference, row), "a fetch reads \(describe(row)), expected \(describe(reference))")
                    }
                    if case .objectIDs(let ids) = try store.execute(StoreFetchRequest(entity: entity, resultType: .objectIDs)) {
                        expect(ids.sorted() == expected.map(\.objectID), "an ID fetch of \(name) returns \(ids.sorted()), expected \(expected.map(\.objectID))")
                    }
                    if case .count(let count) = try store.execute(StoreFetchRequest(entity: entity, resultType: .count)) {
                        expect(count == expected.count, "a count fetch of \(name) returns \(count), expected \(expected.count)")
                    }
                } catch {
                    expect(false, "a fetch of \(name) threw \(error)")
                }
            }
            checkObjects(reference.keys)
            do {
                let stored = try store.metadata()[Self.metadataKey] as? String
                expect(stored == metadataText, "the metadata lost \(Self.metadataKey) = \(metadataText.debugDescription)")
            } catch {
                expect(false, "metadata() threw \(error)")
            }
        }

        func checkIntact() {
            guard trusted, let store else { return }
            do {
                let verification = try store.verify()
                expect(verification.isIntact, "a store written only through the API does not verify intact:\n\(verification)")
            } catch {
                expect(false, "verify() threw \(error)")
            }
        }

        // MARK: Opening

        /// Opens the input's files; `false` when they do not open (fine: the input ends).
        func open() -> Bool {
            options.fileSystem = fileSystem
            guard let opened = try? BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options) else { return false }
            store = opened
            guard let verification = try? opened.verify() else {
                try? opened.close()
                return false
            }
            trusted = verification.isIntact
            for name in entityNames {
                guard let entity = entities[name] else { continue }
                do {
                    guard case .rows(let rows) = try opened.execute(StoreFetchRequest(entity: entity)) else { continue }
                    for row in rows { reference[row.objectID] = row }
                } catch {
                    expect(false, "a store that verifies intact cannot fetch \(name): \(error)")
                }
            }
            metadataText = (try? opened.metadata())?[Self.metadataKey] as? String
            checkAll()
            return true
        }

        /// Opens the files again after the handle was closed or abandoned: a trusted store must
        /// open and hold exactly the reference.
        func reopen() {
            options.fileSystem = fileSystem
            do {
                store = try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
            } catch {
                expect(false, "the store does not open again: \(error)")
                store = nil
                return
            }
            checkAll()
        }

        /// Closes, reopens and closes the store: what the program saved must survive.
        func finish() {
            step = "the final close"
            guard let store else { return }
            do { try store.close() } catch { expect(false, "close() threw \(error)") }
            self.store = nil
            step = "the final reopen"
            reopen()
            checkIntact()
            do { try self.store?.close() } catch { expect(false, "close() after the final reopen threw \(error)") }
        }

        // MARK: Operations

        func perform(_ operation: Operation, _ reader: inout Reader) {
            guard let store else { return }
            step = "\(operation)"
            switch operation {
            case .insert:
                save(build(deletes: 0, updates: 0, inserts: 1 + Int(reader.byte() % 4), &reader))
            case .update:
                save(build(deletes: 0, updates: 1 + Int(reader.byte() % 4), inserts: 0, &reader))
            case .delete:
                save(build(deletes: 1 + Int(reader.byte() % 3), updates: 0, inserts: 0, &reader))
            case .mixed, .faulty:
                let sizes = reader.byte()
                var changes = build(deletes: Int(sizes % 3), updates: Int(sizes / 3 % 3), inserts: Int(sizes / 9 % 4), &reader)
                if operation == .faulty {
                    for _ in 0..<(1 + reader.byte() % 2) { addFault(to: &changes, &reader) }
                }
                save(changes)
            case .checkpoint, .checkpointTruncatingLog:
                // No verify here (nor after a reopen): it reads both files whole, which is most of
                // an input's time in the fuzz build; the damage it looks for stays for the next
                // verify operation or the final one.
                do { try store.checkpoint(truncatingLog: operation == .checkpointTruncatingLog) } catch { expect(false, "checkpoint threw \(error)") }
                checkAll()
            case .compact:
                do { try store.compact() } catch { expect(false, "compact() threw \(error)") }
                checkAll()
                checkIntact()
            case .reopen:
                do { try store.close() } catch { expect(false, "close() threw \(error)") }
                self.store = nil
                reopen()
            case .crash:
                // The handle is dropped without a close, as a process that died leaves it; it
                // still points at the old file system, so nothing it does later reaches the copy.
                fileSystem = MemoryFileSystem(files: fileSystem.snapshot())
                self.store = nil
                reopen()
                checkIntact()
            case .verify:
                checkAll()
                checkIntact()
            case .metadata:
                setMetadata(String(decoding: reader.filler(reader.length() % 2_048), as: UTF8.self))
            case .batchDelete:
                batchDelete(&reader)
            case .batchUpdate:
                batchUpdate(&reader)
            }
        }

        /// The IDs of the reference's objects of one entity, or of all, in object-ID order.
        func existing(_ entityName: String? = nil) -> [StoreObjectID] {
            reference.keys.filter { entityName == nil || $0.entityName == entityName }.sorted()
        }

        /// The version a caller would send: what `row(for:)` reads (the reference's when it fails).
        func readVersion(_ id: StoreObjectID) -> Int64 {
            if let row = try? store?.row(for: id) { return row.version }
            return reference[id]?.version ?? 1
        }

        /// A new key from the store; it must not name an object that exists.
        func newID(_ entityName: String) -> StoreObjectID? {
            guard let key = try? store?.newPrimaryKeys(entityName: entityName, count: 1).first else { return nil }
            let id = StoreObjectID(entityName: entityName, primaryKey: key)
            expect(reference[id] == nil, "newPrimaryKeys handed out \(id), which exists")
            return id
        }

        func row(_ id: StoreObjectID, version: Int64, _ values: [String: StoreValue]) -> StoreRow {
            guard !nameKeyedRows, let layout = entities[id.entityName]?.propertyLayout else {
                return StoreRow(objectID: id, version: version, values: values)
            }
            return StoreRow(objectID: id, version: version, layout: layout, slots: layout.names.map { values[$0] })
        }

        /// Values for every property of the entity; with `old`, the properties whose bit is set in
        /// `keep` keep their value. Relationships name objects of `candidates`: a kept one drops
        /// the objects that are gone, as the object graph's delete rules would have.
        func values(
            _ entityName: String, old: StoreRow? = nil, keep: UInt16 = 0, candidates: [String: [StoreObjectID]], _ reader: inout Reader
        ) -> [String: StoreValue] {
            guard let entity = entities[entityName] else { return [:] }
            var values: [String: StoreValue] = [:]
            for (index, name) in (propertyNames[entityName] ?? []).enumerated() {
                if let old, keep & (1 << (index % 16)) != 0 {
                    let live = { (target: StoreObjectID) in candidates[target.entityName]?.contains(target) ?? false }
                    switch old[name] {
                    case .reference(let target): values[name] = live(target) ? .reference(target) : .null
                    case .references(let targets): values[name] = .references(targets.filter(live))
                    case let value: values[name] = value
                    }
                } else if let attribute = entity.attributesByName[name] {
                    values[name] = attributeValue(attribute.attributeType, &reader)
                } else if let relationship = entity.relationshipsByName[name] {
                    values[name] = relationshipValue(relationship, candidates: candidates, &reader)
                }
            }
            return values
        }

        func relationshipValue(_ relationship: NSRelationshipDescription, candidates: [String: [StoreObjectID]], _ reader: inout Reader) -> StoreValue {
            let targets = candidates[relationship.destinationEntity?.name ?? ""] ?? []
            if relationship.isToMany {
                var chosen: [StoreObjectID] = []
                for _ in 0..<(reader.byte() % 4) {
                    if let target = reader.pick(targets), !chosen.contains(target) { chosen.append(target) }
                }
                return .references(chosen)
            }
            if reader.byte() % 4 == 0 { return .null }
            return reader.pick(targets).map { .reference($0) } ?? .null
        }

        /// A save the store must accept: deletes and updates of distinct existing objects
        /// (versions as `row(for:)` reads them), inserts with new keys, relationships to objects
        /// that exist after it (old or new).
        func build(deletes: Int, updates: Int, inserts: Int, _ reader: inout Reader) -> StoreChangeSet {
            var changes = StoreChangeSet()
            var available = existing()
            for _ in 0..<deletes {
                guard let id = reader.pick(available) else { break }
                available.removeAll { $0 == id }
                changes.deleted.append((id, readVersion(id)))
            }
            var updated: [(StoreObjectID, UInt16)] = []
            for _ in 0..<updates {
                guard let id = reader.pick(available) else { break }
                available.removeAll { $0 == id }
                updated.append((id, reader.u16()))
            }
            var insertedIDs: [StoreObjectID] = []
            for _ in 0..<inserts {
                guard let name = reader.pick(entityNames), let id = newID(name) else { continue }
                insertedIDs.append(id)
            }
            let deleted = Set(changes.deleted.map(\.objectID))
            var candidates: [String: [StoreObjectID]] = [:]
            for id in existing() where !deleted.contains(id) { candidates[id.entityName, default: []].append(id) }
            for id in insertedIDs { candidates[id.entityName, default: []].append(id) }
            for id in insertedIDs {
                changes.inserted.append(row(id, version: 0, values(id.entityName, candidates: candidates, &reader)))
            }
            for (id, keep) in updated {
                let old = reference[id]
                changes.updated.append(row(id, version: readVersion(id), values(id.entityName, old: old, keep: keep, candidates: candidates, &reader)))
            }
            return changes
        }

        /// Adds one reason the store must refuse the save.
        func addFault(to changes: inout StoreChangeSet, _ reader: inout Reader) {
            let untouched = existing().filter { id in
                !changes.deleted.contains { $0.objectID == id } && !changes.updated.contains { $0.objectID == id }
            }
            let candidates = Dictionary(grouping: existing(), by: \.entityName)
            switch reader.byte() % 6 {
            case 0:
                // An insert of an object that exists.
                guard let id = reader.pick(untouched) else { return }
                changes.inserted.append(row(id, version: 0, values(id.entityName, candidates: candidates, &reader)))
            case 1:
                // The same new object inserted twice.
                guard let twice = reader.pick(changes.inserted) else { return }
                changes.inserted.append(twice)
            case 2, 3:
                // An update or delete with a version other than the stored one.
                guard let id = reader.pick(untouched) else { return }
                let delta = Int64(reader.byte() % 5) - 2
                let version = readVersion(id) + (delta == 0 ? 1 : delta)
                if reader.byte() % 2 == 0 {
                    changes.deleted.append((id, version))
                } else {
                    changes.updated.append(row(id, version: version, values(id.entityName, old: reference[id], keep: reader.u16(), candidates: candidates, &reader)))
                }
            case 4:
                // An update or delete of an object that was never saved.
                guard let name = reader.pick(entityNames), let id = newID(name) else { return }
                if reader.byte() % 2 == 0 {
                    changes.deleted.append((id, 1))
                } else {
                    changes.updated.append(row(id, version: 1, values(name, candidates: candidates, &reader)))
                }
            default:
                // A relationship to an object that was never saved.
                let rows = changes.inserted.indices.map { (true, $0) } + changes.updated.indices.map { (false, $0) }
                guard let (isInsert, index) = reader.pick(rows) else { return }
                var target = isInsert ? changes.inserted[index] : changes.updated[index]
                let relationships = (entities[target.objectID.entityName]?.relationshipsByName ?? [:]).sorted { $0.key < $1.key }
                guard let (name, relationship) = reader.pick(relationships),
                      let destination = relationship.destinationEntity?.name, let missing = newID(destination) else { return }
                target[name] = relationship.isToMany ? .references([missing]) : .reference(missing)
                if isInsert { changes.inserted[index] = target } else { changes.updated[index] = target }
            }
        }

        /// What the store must do with `changes`, from the reference (StoreChangeSet's contract).
        func predict(_ changes: StoreChangeSet) -> Prediction {
            var faults = Set<Fault>()
            for (id, version) in changes.deleted where reference[id]?.version != version { faults.insert(.versionConflict) }
            for row in changes.updated where reference[row.objectID]?.version != row.version { faults.insert(.versionConflict) }
            var inserted = Set<StoreObjectID>()
            for row in changes.inserted {
                let isNew = inserted.insert(row.objectID).inserted
                if !isNew || reference[row.objectID] != nil { faults.insert(.duplicateID) }
            }
            let updated = Set(changes.updated.map(\.objectID))
            if !updated.isDisjoint(with: inserted) { faults.insert(.duplicateID) }
            let deleted = Set(changes.deleted.map(\.objectID))
            var unknown = false
            for row in changes.inserted + changes.updated {
                for value in row.slots {
                    let targets: [StoreObjectID]
                    switch value {
                    case .reference(let target)?: targets = [target]
                    case .references(let list)?: targets = list
                    default: targets = []
                    }
                    for target in targets {
                        guard entities[target.entityName] != nil else {
                            unknown = true
                            continue
                        }
                        let exists = !deleted.contains(target) && (updated.contains(target) || inserted.contains(target) || reference[target] != nil)
                        if !exists { faults.insert(.danglingReference) }
                    }
                }
            }
            if !faults.isEmpty { return .failure(faults) }
            return unknown ? .unknown : .success
        }

        /// Checks a thrown error against the prediction.
        func expectRefusal(_ error: StoreError, _ prediction: Prediction, _ what: String) {
            switch prediction {
            case .success:
                expect(false, "\(what) the store must accept threw \(error)")
            case .failure(let faults):
                expect(Fault(error).map(faults.contains) ?? false, "\(what) that must fail for \(faults) threw \(error)")
            case .unknown:
                expect(Fault(error) == .danglingReference, "\(what) threw \(error)")
            }
        }

        func save(_ changes: StoreChangeSet) {
            guard let store, !changes.isEmpty else { return }
            let prediction = predict(changes)
            do {
                let versions = try store.save(changes)
                if case .failure(let faults) = prediction {
                    expect(false, "a save that must fail for \(faults) returned: \(summary(changes))")
                }
                for (id, _) in changes.deleted { reference[id] = nil }
                for row in changes.updated {
                    expect(versions[row.objectID] == row.version + 1, "save() gives \(row.objectID) version \(versions[row.objectID].map(String.init) ?? "none"), expected \(row.version + 1)")
                    var saved = row
                    saved.version = row.version + 1
                    reference[row.objectID] = saved
                }
                for row in changes.inserted {
                    expect(versions[row.objectID].map { $0 == 1 } ?? true, "save() gives the inserted \(row.objectID) version \(versions[row.objectID] ?? 0)")
                    var saved = row
                    saved.version = 1
                    reference[row.objectID] = saved
                }
            } catch {
                expectRefusal(error, prediction, "a save (\(summary(changes)))")
            }
            checkObjects(changes.inserted.map(\.objectID) + changes.updated.map(\.objectID) + changes.deleted.map(\.objectID))
        }

        func summary(_ changes: StoreChangeSet) -> String {
            "inserts \(changes.inserted.map(\.objectID)), updates \(changes.updated.map { "\($0.objectID) v\($0.version)" }), "
                + "deletes \(changes.deleted.map { "\($0.objectID) v\($0.version)" })"
        }

        func setMetadata(_ text: String) {
            guard let store else { return }
            do {
                var metadata = try store.metadata()
                metadata[Self.metadataKey] = text
                try store.setMetadata(metadata)
                metadataText = text
            } catch {
                // A fuzzed store's own metadata may hold what cannot be written back; a new one's cannot.
                expect(!created, "setMetadata() of a new store threw \(error)")
            }
            do {
                let stored = try store.metadata()[Self.metadataKey] as? String
                expect(stored == metadataText, "metadata() does not read back \(Self.metadataKey) = \(metadataText.debugDescription)")
            } catch {
                expect(false, "metadata() threw \(error)")
            }
        }

        /// The request of a batch operation: all rows of an entity or the first few (the order
        /// of a fetch without sort descriptors is by object ID).
        func batchRequest(_ reader: inout Reader) -> (StoreFetchRequest, [StoreObjectID])? {
            guard let name = reader.pick(entityNames), let entity = entities[name] else { return nil }
            let limit = Int(reader.byte() % 6)
            let matching = existing(name)
            return (StoreFetchRequest(entity: entity, limit: limit), limit == 0 ? matching : Array(matching.prefix(limit)))
        }

        func batchDelete(_ reader: inout Reader) {
            guard let store, let (request, matching) = batchRequest(&reader) else { return }
            do {
                let ids = try store.batchDelete(request)
                expect(ids.sorted() == matching, "batchDelete deleted \(ids.sorted()), expected \(matching)")
                for id in ids { reference[id] = nil }
            } catch {
                expect(false, "batchDelete threw \(error)")
            }
            checkObjects(matching)
        }

        func batchUpdate(_ reader: inout Reader) {
            guard let store, let (request, matching) = batchRequest(&reader), let entityName = request.entity.name else { return }
            let names = propertyNames[entityName] ?? []
            var values: [String: StoreValue] = [:]
            let candidates = Dictionary(grouping: existing(), by: \.entityName)
            for _ in 0..<(1 + reader.byte() % 2) {
                guard let name = reader.pick(names) else { continue }
                if let attribute = request.entity.attributesByName[name] {
                    values[name] = attributeValue(attribute.attributeType, &reader)
                } else if let relationship = request.entity.relationshipsByName[name] {
                    values[name] = relationshipValue(relationship, candidates: candidates, &reader)
                }
            }
            // The save the store makes: each matching row as stored, with the values merged in.
            let rows: [StoreRow] = matching.compactMap { id in
                guard let old = reference[id] else { return nil }
                var merged: [String: StoreValue] = [:]
                for name in names { merged[name] = values[name] ?? old[name] }
                return row(id, version: old.version, merged)
            }
            let prediction = rows.isEmpty ? .success : predict(StoreChangeSet(updated: rows))
            do {
                let ids = try store.batchUpdate(request, values: values)
                if case .failure(let faults) = prediction { expect(false, "a batch update that must fail for \(faults) returned") }
                expect(ids.sorted() == matching, "batchUpdate updated \(ids.sorted()), expected \(matching)")
                for var row in rows {
                    row.version += 1
                    reference[row.objectID] = row
                }
            } catch {
                expectRefusal(error, prediction, "a batch update of \(matching)")
            }
            checkObjects(matching)
        }
    }
}
