import CoreDataStorage
import Foundation

/// A scripted run against one store and what it should hold after each step: the oracle of the
/// crash and fault suites.
package struct CrashWorkload: Sendable {
    package enum Action: Sendable {
        /// Opens the store, creating it when missing.
        case open
        case save(StoreChangeSet)
        /// Sets the metadata marker (a durable change, like a save).
        case setMarker(String)
        case checkpoint
        case compact
        /// Drops the handle without closing it and opens the store again: recovery replays the log.
        case reopen
        case close
        /// Reads everything back from the live store, which must hold exactly this.
        case check(StoreSnapshot)
        /// Fetches the object IDs of `entity` matching `format`, a comparison a secondary index
        /// answers (Formats/binary-store.md §7.1–§7.2), which must be exactly `expected`.
        case fetchIndexed(entity: String, format: String, expected: Set<StoreObjectID>)

        package var opensOrCloses: Bool {
            switch self {
            case .open, .reopen, .close: return true
            case .save, .setMarker, .checkpoint, .compact, .check, .fetchIndexed: return false
            }
        }
    }

    package struct Step: Sendable {
        package var label: String
        package var action: Action

        /// Whether the step changes the contents (and so moves to the next snapshot).
        package var changesContents: Bool {
            switch action {
            case .save, .setMarker: return true
            case .open, .checkpoint, .compact, .reopen, .close, .check, .fetchIndexed: return false
            }
        }

        /// Whether the step, once returned, makes every earlier change durable even with
        /// relaxed durability.
        package var syncsEverything: Bool {
            switch action {
            case .checkpoint, .compact, .close: return true
            case .open, .save, .setMarker, .reopen, .check, .fetchIndexed: return false
            }
        }
    }

    package private(set) var steps: [Step] = []
    /// `snapshots[k]`: the contents after the first `k` content-changing steps.
    package private(set) var snapshots = [StoreSnapshot()]

    package var current: StoreSnapshot { snapshots[snapshots.count - 1] }

    /// For each operation of a clean run (numbered from 1), the step it belongs to, given the
    /// operation count after each step (`ends[k]`: operations done by the end of step `k`).
    package static func stepOfOperation(endingAt ends: [Int]) -> [Int] {
        var steps: [Int] = []
        for (step, end) in ends.enumerated() {
            while steps.count < end { steps.append(step) }
        }
        return steps
    }

    /// How many content-changing steps come before step `index`.
    package func changes(before index: Int) -> Int {
        steps[..<index].filter(\.changesContents).count
    }

    package mutating func open() { steps.append(Step(label: "open", action: .open)) }
    package mutating func reopen() { steps.append(Step(label: "reopen", action: .reopen)) }
    package mutating func checkpoint() { steps.append(Step(label: "checkpoint", action: .checkpoint)) }
    package mutating func compact() { steps.append(Step(label: "compact", action: .compact)) }
    package mutating func close() { steps.append(Step(label: "close", action: .close)) }
    package mutating func check() { steps.append(Step(label: "check contents", action: .check(current))) }

    /// The notes' index on `title` (``CrashTestModel``): a fetch of every titled note, through it.
    package static let notesByTitle = (entity: "Note", format: "title >= 'note'")

    /// The notes of `snapshot` that ``notesByTitle`` finds.
    package static func titledNotes(in snapshot: StoreSnapshot) -> Set<StoreObjectID> {
        Set(snapshot.rows.values.filter { $0.objectID.entityName == "Note" && $0.values["title"] != nil }.map(\.objectID))
    }

    package mutating func fetchNotesByTitle() {
        steps.append(Step(label: "fetch notes by title", action: .fetchIndexed(
            entity: Self.notesByTitle.entity, format: Self.notesByTitle.format, expected: Self.titledNotes(in: current))))
    }

    package mutating func setMarker(_ marker: String) {
        steps.append(Step(label: "set marker \(marker)", action: .setMarker(marker)))
        var next = current
        next.marker = marker
        snapshots.append(next)
    }

    /// A save; updated rows get the version the store holds, which the oracle tracks.
    package mutating func save(_ label: String, insert: [StoreRow] = [], update: [StoreRow] = [], delete: [StoreObjectID] = []) {
        var next = current
        var updated: [StoreRow] = []
        var deleted: [(objectID: StoreObjectID, version: Int64)] = []
        for row in insert {
            precondition(next.rows[row.objectID] == nil, "the workload inserts \(row.objectID) twice")
            var stored = StoreSnapshot.normalized(row)
            stored.version = 1
            next.rows[row.objectID] = stored
        }
        for row in update {
            guard let version = next.rows[row.objectID]?.version else { preconditionFailure("the workload updates missing \(row.objectID)") }
            var sent = row
            sent.version = version
            updated.append(sent)
            var stored = StoreSnapshot.normalized(row)
            stored.version = version + 1
            next.rows[row.objectID] = stored
        }
        for id in delete {
            guard let version = next.rows[id]?.version else { preconditionFailure("the workload deletes missing \(id)") }
            deleted.append((id, version))
            next.rows[id] = nil
        }
        steps.append(Step(label: "save: \(label)", action: .save(StoreChangeSet(inserted: insert, updated: updated, deleted: deleted))))
        snapshots.append(next)
    }

    /// The same workload with every object ID passed through `rename` (a store that numbers
    /// objects store-wide, like the XML store, needs keys that differ across entities).
    package func renumbered(_ rename: (StoreObjectID) -> StoreObjectID) -> CrashWorkload {
        func row(_ row: StoreRow) -> StoreRow {
            var copy = row
            copy.objectID = rename(row.objectID)
            copy.values = row.values.mapValues { value in
                switch value {
                case .reference(let id): return .reference(rename(id))
                case .references(let ids): return .references(ids.map(rename))
                default: return value
                }
            }
            return copy
        }
        var copy = self
        copy.steps = steps.map { step in
            var step = step
            switch step.action {
            case .save(let changes):
                step.action = .save(StoreChangeSet(
                    inserted: changes.inserted.map(row), updated: changes.updated.map(row),
                    deleted: changes.deleted.map { (rename($0.objectID), $0.version) }))
            case .check(let snapshot):
                step.action = .check(snapshot.renumbered(rename, row))
            default:
                break
            }
            return step
        }
        copy.snapshots = snapshots.map { $0.renumbered(rename, row) }
        return copy
    }

    /// The suites' workload: inserts, updates and deletes of every entity, to-one and ordered and
    /// unordered to-many changes, a save spanning two log frames, metadata, a checkpoint that
    /// leaves old frames in the log for later saves to overwrite, reads between saves, a reopen
    /// that replays the log, a compaction and a close.
    package static let standard: CrashWorkload = {
        typealias M = CrashTestModel
        var w = CrashWorkload()
        w.open()
        w.save("insert owners, items and tags", insert: [
            M.owner(1, "Ann", items: [1, 2]), M.owner(2, "Bob", rank: 2, items: [3, 4]),
            M.item(1, owner: 1, tags: [1]), M.item(2, owner: 1, tags: [1, 2]), M.item(3, owner: 2, tags: [2]), M.item(4, owner: 2),
            M.tag(1, "red", items: [1, 2]), M.tag(2, "green", items: [2, 3]),
        ])
        w.save("update item 1, insert item 5 under owner 2",
               insert: [M.item(5, owner: 2, tags: [1])],
               update: [M.item(1, owner: 1, tags: [1], variant: 1), M.owner(2, "Bob", rank: 2, items: [3, 4, 5]), M.tag(1, "red", items: [1, 2, 5])])
        w.save("reorder owner 2's items, tag item 4",
               update: [M.owner(2, "Bob", rank: 2, items: [5, 3, 4]), M.item(4, owner: 2, tags: [2]), M.tag(2, "green", items: [2, 3, 4])])
        w.setMarker("m1")
        w.save("delete item 2",
               update: [M.owner(1, "Ann", items: [1]), M.tag(1, "red", items: [1, 5]), M.tag(2, "green", items: [3, 4])],
               delete: [M.id("Item", 2)])
        w.check()
        w.checkpoint()
        // Small saves over the old frames the checkpoint left in the log, read back in between.
        w.save("rename tag 1", update: [M.tag(1, "crimson", items: [1, 5])])
        w.check()
        w.save("update item 4", update: [M.item(4, owner: 2, tags: [2], variant: 4)])
        w.check()
        w.save("insert twelve large notes (two log frames)", insert: (1...12).map { M.note($0, size: 100_000) })
        w.save("move item 3 to owner 1, rename owner 1",
               update: [M.item(3, owner: 1, tags: [2], variant: 2), M.owner(1, "Ann B.", rank: 3, items: [1, 3]), M.owner(2, "Bob", rank: 2, items: [5, 4])])
        w.save("delete note 2 and tag 2",
               update: [M.item(3, owner: 1, variant: 2), M.item(4, owner: 2, variant: 4)],
               delete: [M.id("Note", 2), M.id("Tag", 2)])
        w.reopen()
        w.check()
        w.save("insert items 6–9 and tag 3",
               insert: (6...9).map { M.item($0, owner: 2, tags: [3]) } + [M.tag(3, "blue", items: [6, 7, 8, 9])],
               update: [M.owner(2, "Bob", rank: 2, items: [5, 4, 6, 7, 8, 9])])
        w.compact()
        w.save("update note 1 and item 6", update: [M.note(1, size: 3_000), M.item(6, owner: 2, tags: [3], variant: 3)])
        w.setMarker("m2")
        w.save("delete items 7 and 8",
               update: [M.owner(2, "Bob", rank: 2, items: [5, 4, 6, 9]), M.tag(3, "blue", items: [6, 9])],
               delete: [M.id("Item", 7), M.id("Item", 8)])
        w.check()
        w.close()
        return w
    }()

    /// Checkpoints that list unchanged index pages again (Formats/binary-store.md §9, step 2):
    /// 8,000 tags fill three index pages; after a reopen (only the directory read) a save
    /// changes the first page's keys and adds keys past the last, so the next checkpoint lists the
    /// middle page again; reading everything back loads the whole index, and a save in the middle page only
    /// is checkpointed by the close.
    package static let indexPages: CrashWorkload = {
        typealias M = CrashTestModel
        var w = CrashWorkload()
        w.open()
        w.save("insert 8,000 tags", insert: (1...8_000).map { M.tag($0, "tag \($0)") })
        w.checkpoint()
        w.reopen()
        w.save("update tags 1 and 2, insert tags 8,001–8,100, delete tag 3",
               insert: (8_001...8_100).map { M.tag($0, "tag \($0)") },
               update: [M.tag(1, "first"), M.tag(2, "second")], delete: [M.id("Tag", 3)])
        w.checkpoint()
        w.check()
        w.save("update tag 4,000, delete tag 4,001", update: [M.tag(4_000, "middle")], delete: [M.id("Tag", 4_001)])
        w.close()
        return w
    }()

    /// Persisted secondary indexes (Formats/binary-store.md §7.2): the notes' title index built by
    /// a fetch, written by a checkpoint, read, updated and written again by a checkpoint of a
    /// reopened handle that never fetched, read back with the log's saves applied, and written
    /// from memory at close; each fetch through it is checked, and every recovery's `verify`
    /// checks the index against the records.
    package static let secondaryIndexes: CrashWorkload = {
        typealias M = CrashTestModel
        var w = CrashWorkload()
        w.open()
        w.save("insert 1,500 notes", insert: (1...1_500).map { M.note($0, size: 8) })
        w.fetchNotesByTitle()
        w.checkpoint()
        w.reopen()
        w.save("retitle notes 1–20, delete notes 21–30, insert notes 1,501–1,540",
               insert: (1_501...1_540).map { M.note($0, size: 8) },
               update: (1...20).map { M.retitled(M.note($0, size: 8), "note \($0), retitled") },
               delete: (21...30).map { M.id("Note", $0) })
        w.checkpoint()
        w.fetchNotesByTitle()
        w.save("untitle note 40, retitle note 41", update: [M.retitled(M.note(40, size: 8), nil), M.retitled(M.note(41, size: 8), "note 41b")])
        w.fetchNotesByTitle()
        w.close()
        return w
    }()

    /// External binary data (Formats/binary-store.md §15): large values written, kept by an
    /// update of another attribute, replaced, shared by two objects, deleted and rolled into a
    /// checkpoint and a compaction (which removes the files no record names), with small values
    /// in the records beside them, reads in between and a reopen.
    package static let externalData: CrashWorkload = {
        typealias M = CrashTestModel
        let large = 120 * 1_024
        var w = CrashWorkload()
        w.open()
        w.save("insert two large attachments and a small one", insert: [
            M.attachment(1, "a", size: large, seed: 1, previewSize: 300), M.attachment(2, "b", size: large + 7, seed: 2),
            M.attachment(3, "c", size: 2_000, seed: 3),
        ])
        w.check()
        w.save("rename attachment 1 (its payload stays)", update: [M.attachment(1, "a2", size: large, seed: 1, previewSize: 300)])
        w.save("replace attachment 2's payload, insert 4 with attachment 1's bytes", insert: [M.attachment(4, "d", size: large, seed: 1)],
               update: [M.attachment(2, "b2", size: large + 100, seed: 22)])
        w.checkpoint()
        w.save("delete attachment 1, grow attachment 3 past the threshold",
               update: [M.attachment(3, "c2", size: large, seed: 33)], delete: [M.id("Attachment", 1)])
        w.reopen()
        w.check()
        w.save("shrink attachment 2 below the threshold", update: [M.attachment(2, "b3", size: 500, seed: 5)])
        w.compact()
        w.check()
        w.save("insert attachment 5, delete 4", insert: [M.attachment(5, "e", size: large * 2, seed: 55)], delete: [M.id("Attachment", 4)])
        w.check()
        w.close()
        return w
    }()
}
