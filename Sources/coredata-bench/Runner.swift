import CoreData
import CoreDataBinaryStore
import CoreDataStorage
import Foundation

/// Runs every workload on both sides, alternating which side goes first, and collects figures.
final class Runner {
    let objects: Int
    let repetitions: Int
    let users: [User]
    let model = UserModel.make(indexOnAge: false)
    let indexedModel = UserModel.make(indexOnAge: true)
    private(set) var results: [WorkloadResult] = []
    private var progress: ProgressLine
    private let selected: Set<String>?

    /// The workloads, in run order; `--only` takes these keys.
    static let phases = ["main", "index", "single", "concurrent", "processes", "history", "recovery", "managed", "xml", "migration", "frc", "open"]
    /// Phases run only when `--only` names them: `open` repeats main's open for a run at 10M
    /// objects without the rest of main.
    static let onRequest: Set<String> = ["open"]
    /// Objects in the XML phase at most (issue 7: "XML store: load and save 100,000 objects").
    static let xmlObjects = 100_000

    init(objects: Int, repetitions: Int, only: Set<String>?) {
        self.objects = objects
        self.repetitions = repetitions
        self.selected = only
        users = Users.make(count: objects)
        let phases = Self.phases.filter { only?.contains($0) ?? !Self.onRequest.contains($0) }.count
        progress = ProgressLine(total: phases * repetitions * 2)
    }

    var singleSaves: Int { min(10_000, max(100, objects / 10)) }
    var writersPerThread: Int { max(50, singleSaves / 8) }
    var tailBytes: Int { objects >= 1_000_000 ? 64 << 20 : max(256 << 10, (64 << 20) / 1_000_000 * objects) }

    func run() throws -> [WorkloadResult] {
        for repetition in 0..<repetitions {
            // Alternate which side runs first so neither always meets a warmer machine.
            let order: [Side] = repetition % 2 == 0 ? [.ours, .sqlite] : [.sqlite, .ours]
            for phase in Self.phases where selected?.contains(phase) ?? !Self.onRequest.contains(phase) {
                for side in order {
                    progress.step("\(phase) · \(side.rawValue) · repetition \(repetition + 1)")
                    switch phase {
                    case "main": try mainPhase(side)
                    case "index": try indexPhase(side)
                    case "single": try singlePhase(side)
                    case "concurrent": try concurrentPhase(side)
                    case "processes": try processesPhase(side)
                    case "history": try historyPhase(side)
                    case "recovery": try recoveryPhase(side)
                    case "xml": try xmlPhase(side)
                    case "open": try openPhase(side)
                    case "migration": try migrationPhase(side)
                    case "frc": try fetchedResultsPhase(side)
                    default: try managedPhase(side)
                    }
                }
            }
        }
        progress.finish()
        return results
    }

    // MARK: - Recording

    private func record(_ name: String, _ side: Side, operations: Int, unit: String, _ body: () throws -> Void) rethrows {
        PeakMemory.reset()
        let seconds = try measure(body)
        let peak = PeakMemory.read()
        update(name, operations: operations, unit: unit) { $0.record(side, seconds: seconds, peak: peak) }
    }

    private func update(_ name: String, operations: Int, unit: String, _ change: (inout WorkloadResult) -> Void) {
        if let index = results.firstIndex(where: { $0.name == name }) {
            change(&results[index])
        } else {
            var result = WorkloadResult(name: name, operations: operations, unit: unit)
            change(&result)
            results.append(result)
        }
    }

    private func note(_ name: String, _ text: String) {
        update(name, operations: 0, unit: "") { result in
            if !result.notes.contains(text) { result.notes.append(text) }
        }
    }

    // MARK: - Phases

    private var lookupKeys: [Int64] {
        var random = SeededRandom(seed: 42)
        return (0..<objects).map { _ in Int64.random(in: 1...Int64(objects), using: &random) }
    }

    /// Bulk insert, file size, open + first lookup, warm lookups, the query, update, delete, compaction.
    private func mainPhase(_ side: Side) throws {
        let scratch = Scratch("main")
        defer { scratch.remove() }
        let n = objects
        let tenth = Array(stride(from: Int64(1), through: Int64(n), by: 10))
        let otherTenth = Array(stride(from: Int64(6), through: Int64(n), by: 10))
        let keys = lookupKeys
        switch side {
        case .ours:
            let path = scratch.file("users.store")
            var store = try BinaryUsers(path: path, model: model, durability: .full)
            try record("bulk insert, one save", side, operations: n, unit: "rows") { try store.insert(users[...]) }
            try store.close()
            update("file size after checkpoint", operations: 0, unit: "") { $0.bytes[side.rawValue] = scratch.size(prefix: "users.store") }
            try record("open + first lookup", side, operations: 1, unit: "") { _ = try BinaryUsers.openAndLookup(path: path, model: model, key: Int64(n / 2)) }
            store = try BinaryUsers(path: path, model: model, durability: .full)
            _ = try store.lookups(keys)
            let before = store.store.pageCacheStatistics.counts
            try record("random lookups by ID, warm", side, operations: n, unit: "lookups") { _ = try store.lookups(keys) }
            let after = store.store.pageCacheStatistics
            let hits = Double(after.counts.hits - before.hits), misses = Double(after.counts.misses - before.misses)
            note("random lookups by ID, warm", "ours: \(Int((100 * hits / max(1, hits + misses)).rounded()))% page-cache hits (\(after.capacity >> 20) MiB cache holding \(after.entries) pages of \(after.bytes / max(1, after.entries)) bytes on average)")
            try record("age > 50 by name, limit 100 (no index), first run", side, operations: 1, unit: "") { _ = try store.olderThan50ByName(limit: 100) }
            try record("age > 50 by name, limit 100 (no index)", side, operations: 1, unit: "") { _ = try store.olderThan50ByName(limit: 100) }
            try record("update 10% (one save)", side, operations: tenth.count, unit: "rows") { try store.updateScores(tenth[...], users: users) }
            try record("delete 10% (one save)", side, operations: otherTenth.count, unit: "rows") { try store.delete(otherTenth[...]) }
            try record("compaction", side, operations: 1, unit: "") { try store.store.compact() }
            try store.close()
        case .sqlite:
            let path = scratch.file("users.sqlite")
            let db = try SQLiteUsers(path: path, synchronous: "FULL")
            try db.createTable(indexOnAge: false)
            try record("bulk insert, one save", side, operations: n, unit: "rows") { try db.insert(users[...], firstID: 1) }
            try db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            update("file size after checkpoint", operations: 0, unit: "") { $0.bytes[side.rawValue] = scratch.size(prefix: "users.sqlite") }
            try record("open + first lookup", side, operations: 1, unit: "") { _ = try SQLiteUsers.openAndLookup(path: path, id: Int64(n / 2)) }
            _ = try db.lookups(keys)
            try record("random lookups by ID, warm", side, operations: n, unit: "lookups") { _ = try db.lookups(keys) }
            try record("age > 50 by name, limit 100 (no index), first run", side, operations: 1, unit: "") { _ = try db.olderThan50ByName(limit: 100) }
            try record("age > 50 by name, limit 100 (no index)", side, operations: 1, unit: "") { _ = try db.olderThan50ByName(limit: 100) }
            try record("update 10% (one save)", side, operations: tenth.count, unit: "rows") { try db.updateScores(tenth[...]) }
            try record("delete 10% (one save)", side, operations: otherTenth.count, unit: "rows") { try db.delete(otherTenth[...]) }
            try record("compaction", side, operations: 1, unit: "") { try db.exec("VACUUM") }
            note("compaction", "SQLite: VACUUM")
            db.close()
        }
    }

    /// Bulk insert then open + first lookup, nothing else: the open figure (and its peak memory)
    /// at sizes where the rest of main would take too long.
    private func openPhase(_ side: Side) throws {
        let scratch = Scratch("open")
        defer { scratch.remove() }
        let name = "open + first lookup (open phase)"
        switch side {
        case .ours:
            let path = scratch.file("users.store")
            let store = try BinaryUsers(path: path, model: model, durability: .full)
            try record("bulk insert, one save (open phase)", side, operations: objects, unit: "rows") { try store.insert(users[...]) }
            try store.close()
            try record(name, side, operations: 1, unit: "") { _ = try BinaryUsers.openAndLookup(path: path, model: model, key: Int64(objects / 2)) }
            update("file size (open phase)", operations: 0, unit: "") { $0.bytes[side.rawValue] = scratch.size(prefix: "users.store") }
        case .sqlite:
            let path = scratch.file("users.sqlite")
            let db = try SQLiteUsers(path: path, synchronous: "FULL")
            try db.createTable(indexOnAge: false)
            try record("bulk insert, one save (open phase)", side, operations: objects, unit: "rows") { try db.insert(users[...], firstID: 1) }
            try db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            db.close()
            try record(name, side, operations: 1, unit: "") { _ = try SQLiteUsers.openAndLookup(path: path, id: Int64(objects / 2)) }
            update("file size (open phase)", operations: 0, unit: "") { $0.bytes[side.rawValue] = scratch.size(prefix: "users.sqlite") }
        }
    }

    private func indexPhase(_ side: Side) throws {
        let scratch = Scratch("index")
        defer { scratch.remove() }
        let name = "age > 50 by name, limit 100 (index on age)"
        // Saves between queries: the index must follow each save, not be built again.
        let rounds = 20
        let afterSaves = "\(rounds) × (save 1 age change, then age > 50 by name, limit 100) (index on age)"
        let changedKeys = (0..<rounds).map { Int64(1 + $0 * (objects / rounds)) }
        // After a close: our index comes from the file (binary-store.md §7.2), SQLite's from its b-tree.
        let reopened = "open + first age > 50 by name, limit 100 (index on age, reopened store)"
        // 1,000 new ages land all over the index: the checkpoint rewrites the pages they reach.
        let insertsIndexed = "checkpoint of 1000 inserts (index on age, reopened store)"
        switch side {
        case .ours:
            let store = try BinaryUsers(path: scratch.file("users.store"), model: indexedModel, durability: .full)
            try store.insert(users[...])
            _ = try store.olderThan50ByName(limit: 100)
            try record(name, side, operations: 1, unit: "") { _ = try store.olderThan50ByName(limit: 100) }
            try record(afterSaves, side, operations: rounds, unit: "queries") {
                for key in changedKeys {
                    try store.setAge(51 + key % 30, of: key)
                    _ = try store.olderThan50ByName(limit: 100)
                }
            }
            try store.close()
            var again: BinaryUsers?
            try record(reopened, side, operations: 1, unit: "") {
                again = try BinaryUsers(path: scratch.file("users.store"), model: indexedModel, durability: .full, backgroundCheckpoints: false)
                _ = try again?.olderThan50ByName(limit: 100)
            }
            if let again {
                try again.insert(users[0..<1_000])
                let before = Self.fileBytes(scratch.file("users.store"))
                try record(insertsIndexed, side, operations: 1, unit: "") { try again.store.checkpoint() }
                note(insertsIndexed, "ours: the data file grew \((Self.fileBytes(scratch.file("users.store")) - before) >> 10) KiB")
                try again.close()
            }
        case .sqlite:
            let db = try SQLiteUsers(path: scratch.file("users.sqlite"), synchronous: "FULL")
            try db.createTable(indexOnAge: true)
            try db.insert(users[...], firstID: 1)
            _ = try db.olderThan50ByName(limit: 100)
            try record(name, side, operations: 1, unit: "") { _ = try db.olderThan50ByName(limit: 100) }
            try record(afterSaves, side, operations: rounds, unit: "queries") {
                for key in changedKeys {
                    try db.setAge(51 + key % 30, of: key)
                    _ = try db.olderThan50ByName(limit: 100)
                }
            }
            db.close()
            var again: SQLiteUsers?
            try record(reopened, side, operations: 1, unit: "") {
                again = try SQLiteUsers(path: scratch.file("users.sqlite"), synchronous: "FULL", autocheckpoint: false)
                _ = try again?.olderThan50ByName(limit: 100)
            }
            if let again {
                try again.insert(users[0..<1_000], firstID: Int64(objects + 1))
                try record(insertsIndexed, side, operations: 1, unit: "") { try again.exec("PRAGMA wal_checkpoint(TRUNCATE)") }
                again.close()
            }
        }
    }

    /// Single-object saves, durable (`FULL`) and relaxed (`NORMAL`).
    private func singlePhase(_ side: Side) throws {
        let count = singleSaves
        let durable = "\(count) single-object saves, durable"
        let relaxed = "\(count) single-object saves, relaxed"
        for (name, full) in [(durable, true), (relaxed, false)] {
            let scratch = Scratch("single")
            defer { scratch.remove() }
            switch side {
            case .ours:
                let counter = SyncCounter()
                let store = try BinaryUsers(path: scratch.file("users.store"), model: model, durability: full ? .full : .normal, fileSystem: counter)
                let before = counter.count
                try record(name, side, operations: count, unit: "saves") { try store.insertEach(users.prefix(count)) }
                note(name, String(format: "ours: %.2f fdatasync per save", Double(counter.count - before) / Double(count)))
                try store.close()
            case .sqlite:
                let db = try SQLiteUsers(path: scratch.file("users.sqlite"), synchronous: full ? "FULL" : "NORMAL")
                try db.createTable(indexOnAge: false)
                try record(name, side, operations: count, unit: "saves") { try db.insertEach(users.prefix(count), firstID: 1) }
                db.close()
            }
        }
    }

    /// Persistent history on (issue 16): the single-object durable saves again, each also
    /// recording its transaction, then reading every transaction back with its changes. SQLite
    /// writes and reads Apple's history tables (ATRANSACTION, ACHANGE) in the same commits.
    private func historyPhase(_ side: Side) throws {
        let count = singleSaves
        let saves = "\(count) single-object saves with persistent history, durable"
        let fetch = "fetch \(count) history transactions with their changes"
        let scratch = Scratch("history")
        defer { scratch.remove() }
        switch side {
        case .ours:
            let store = try BinaryUsers(path: scratch.file("users.store"), model: model, durability: .full, recordsHistory: true)
            try record(saves, side, operations: count, unit: "saves") { try store.insertEach(users.prefix(count), author: "bench") }
            var read = 0
            try record(fetch, side, operations: count, unit: "transactions") {
                read = try store.store.history(StoreHistoryQuery()).transactions.reduce(0) { $0 + $1.changes.count }
            }
            if read != count { note(fetch, "ours read \(read) changes for \(count) saves") }
            try store.close()
        case .sqlite:
            let db = try SQLiteUsers(path: scratch.file("users.sqlite"), synchronous: "FULL")
            try db.createTable(indexOnAge: false)
            try db.createHistoryTables()
            try record(saves, side, operations: count, unit: "saves") { try db.insertEachWithHistory(users.prefix(count), firstID: 1, author: "bench") }
            var read = 0
            try record(fetch, side, operations: count, unit: "transactions") { read = try db.fetchHistory(after: 0) }
            if read != count { note(fetch, "SQLite read \(read) changes for \(count) saves") }
            db.close()
        }
    }

    /// Eight threads saving one object at a time into one store (group commit).
    private func concurrentPhase(_ side: Side) throws {
        let threads = 8
        let perThread = writersPerThread
        let name = "\(threads) concurrent writers, \(threads * perThread) durable saves"
        let scratch = Scratch("concurrent")
        defer { scratch.remove() }
        let users = self.users
        switch side {
        case .ours:
            let counter = SyncCounter()
            let store = try BinaryUsers(path: scratch.file("users.store"), model: model, durability: .full, fileSystem: counter)
            let before = counter.count
            let failures = FailureBox()
            try record(name, side, operations: threads * perThread, unit: "saves") {
                runThreads(threads) { thread in
                    do {
                        let start = (thread * perThread) % max(1, users.count - perThread)
                        try store.insertEach(users[start..<(start + perThread)])
                    } catch { failures.add(error) }
                }
                try failures.check()
            }
            note(name, String(format: "ours: %.2f saves per fdatasync", Double(threads * perThread) / Double(max(1, counter.count - before))))
            try store.close()
        case .sqlite:
            let path = scratch.file("users.sqlite")
            let db = try SQLiteUsers(path: path, synchronous: "FULL")
            try db.createTable(indexOnAge: false)
            let failures = FailureBox()
            try record(name, side, operations: threads * perThread, unit: "saves") {
                runThreads(threads) { thread in
                    do {
                        let connection = try SQLiteUsers(path: path, synchronous: "FULL")
                        let start = (thread * perThread) % max(1, users.count - perThread)
                        try connection.insertEach(users[start..<(start + perThread)], firstID: Int64(thread * perThread + 1))
                        connection.close()
                    } catch { failures.add(error) }
                }
                try failures.check()
            }
            db.close()
        }
    }

    /// Four processes saving one object at a time into one store while four others look up
    /// objects in it; each reader checks at the end that it sees every save (Formats/wal.md §9).
    private func processesPhase(_ side: Side) throws {
        let writers = 4
        let readers = 4
        let perWriter = writersPerThread
        let total = writers * perWriter
        let name = "\(writers) writer + \(readers) reader processes, \(total) durable saves"
        let scratch = Scratch("processes")
        defer { scratch.remove() }
        let path = scratch.file(side == .ours ? "users.store" : "users.sqlite")
        if side == .ours {
            try BinaryUsers(path: path, model: model, durability: .full).close()
        } else {
            let db = try SQLiteUsers(path: path, synchronous: "FULL")
            try db.createTable(indexOnAge: false)
            db.close()
        }
        func arguments(_ role: String, first: Int, count: Int) -> [String] {
            ["--child-role", role, "--child-side", side == .ours ? "ours" : "sqlite", "--child-path", path, "--child-first", "\(first)", "--child-count", "\(count)"]
        }
        let reading = try (0..<readers).map { _ in try Processes.spawn(arguments("reader", first: 1, count: total)) }
        try record(name, side, operations: total, unit: "saves") {
            let writing = try (0..<writers).map { try Processes.spawn(arguments("writer", first: $0 * perWriter + 1, count: perWriter)) }
            for writer in writing { _ = try Processes.finish(writer) }
        }
        _ = FileManager.default.createFile(atPath: path + ".stop", contents: Data())
        var lookups = 0
        for reader in reading {
            let words = try Processes.finish(reader).split(whereSeparator: \.isWhitespace)
            guard words.count == 4, words[0] == "SEEN", Int(words[1]) == total, let count = Int(words[3]) else {
                throw BenchError("a reader process did not see all \(total) saves: \(words.joined(separator: " "))")
            }
            lookups += count
        }
        note(name, "\(side.rawValue): every reader saw all \(total) saves; \(lookups) lookups by the readers during the phase")

        if side == .ours {
            // Only ours posts remote-change notifications (SQLite has none to compare with).
            let delayName = "remote-change notification delay, median of 200 saves in another process"
            let delays = try Processes.notificationDelays(path: scratch.file("notify.store"), count: 200)
            update(delayName, operations: 1, unit: "") { $0.record(side, seconds: delays[delays.count / 2], peak: 0) }
            note(delayName, String(format: "ours: p90 %.2f ms, max %.2f ms (1 ms polling of the shared counters)", delays[delays.count * 9 / 10] * 1e3, (delays.last ?? 0) * 1e3))
        }
    }

    private static func fileBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Opening after a crash that left a log tail of `tailBytes` to replay.
    private func recoveryPhase(_ side: Side) throws {
        let scratch = Scratch("recovery")
        defer { scratch.remove() }
        let name = "recovery: open + first lookup after a crash, \(tailBytes >> 20) MB log (replay)"
        let closeName = "recovery: the close after it (checkpoint of the replayed log)"
        // 1,000 inserts, then 1,000 updates spread over the store, after the recovery's close.
        let fewChangedKeys = (0..<min(1_000, objects)).map { Int64(1 + $0 * (objects / min(1_000, objects))) }
        let fewInsertsName = "checkpoint of \(fewChangedKeys.count) inserts (reopened store)"
        let fewUpdatesName = "checkpoint of \(fewChangedKeys.count) updates spread over the store (reopened store)"
        let crashed = Scratch("crashed")
        defer { crashed.remove() }
        let batch = max(100, min(10_000, objects / 10))
        switch side {
        case .ours:
            let path = scratch.file("users.store")
            let loader = try BinaryUsers(path: path, model: model, durability: .full)
            try loader.insert(users[...])
            try loader.close()
            let store = try BinaryUsers(path: path, model: model, durability: .full, backgroundCheckpoints: false, checkpointThreshold: 1 << 40)
            var start = 1
            var version: Int64 = 1
            while walSize(path + "-wal") < tailBytes {
                let keys = Array(Int64(start)..<Int64(min(start + batch, objects + 1)))
                var rows: [StoreRow] = []
                for key in keys { rows.append(store.row(key, users[Int(key - 1)], version: version)) }
                _ = try store.store.save(StoreChangeSet(updated: rows))
                start += batch
                if start > objects { start = 1; version += 1 }
            }
            let tail = walSize(path + "-wal")
            for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: path + suffix, toPath: crashed.file("users.store" + suffix)) }
            try store.close()
            var opened: BinaryStore?
            try record(name, side, operations: 1, unit: "") {
                let store = try BinaryStore(path: crashed.file("users.store"), model: model, metadata: StoreMetadata())
                _ = try store.row(for: BinaryUsers.objectID(1))
                opened = store
            }
            try record(closeName, side, operations: 1, unit: "") { try opened?.close() }
            note(name, "ours: \(tail >> 20) MB log replayed")

            // A few changes to a large store: the checkpoint's cost follows the pages they fall in.
            let again = try BinaryUsers(path: crashed.file("users.store"), model: model, durability: .full, backgroundCheckpoints: false, checkpointThreshold: 1 << 40)
            let dataFile = crashed.file("users.store")
            try again.insert(users[0..<fewChangedKeys.count])
            var before = Self.fileBytes(dataFile)
            try record(fewInsertsName, side, operations: 1, unit: "") { try again.store.checkpoint() }
            note(fewInsertsName, "ours: the data file grew \((Self.fileBytes(dataFile) - before) >> 10) KiB")
            var updated: [StoreRow] = []
            for key in fewChangedKeys {
                guard var row = try again.store.row(for: BinaryUsers.objectID(key)) else { continue }
                row.slots[again.layout.score] = .double(Double(key) / 7)
                updated.append(row)
            }
            _ = try again.store.save(StoreChangeSet(updated: updated))
            before = Self.fileBytes(dataFile)
            try record(fewUpdatesName, side, operations: 1, unit: "") { try again.store.checkpoint() }
            note(fewUpdatesName, "ours: the data file grew \((Self.fileBytes(dataFile) - before) >> 10) KiB")
            try again.close()
        case .sqlite:
            let path = scratch.file("users.sqlite")
            let db = try SQLiteUsers(path: path, synchronous: "FULL", autocheckpoint: false)
            try db.createTable(indexOnAge: false)
            try db.insert(users[...], firstID: 1)
            try db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            var start = 1
            var rounds = 0
            // Bounded: if the WAL stops growing (SQLite reuses it), the run still ends.
            while db.walSize < tailBytes, rounds < 50 * max(1, objects / batch) {
                rounds += 1
                let ids = Array(Int64(start)..<Int64(min(start + batch, objects + 1)))
                try db.updateScores(ids[...])
                start += batch
                if start > objects { start = 1 }
            }
            let tail = db.walSize
            for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: path + suffix, toPath: crashed.file("users.sqlite" + suffix)) }
            db.close()
            var opened: SQLiteUsers.Opened?
            try record(name, side, operations: 1, unit: "") {
                let connection = try SQLiteUsers.Opened(path: crashed.file("users.sqlite"))
                _ = try connection.lookup(id: 1)
                opened = connection
            }
            record(closeName, side, operations: 1, unit: "") { opened?.close() }
            note(name, "SQLite: \(tail >> 20) MB WAL replayed")

            let again = try SQLiteUsers(path: crashed.file("users.sqlite"), synchronous: "FULL", autocheckpoint: false)
            try again.insert(users[0..<fewChangedKeys.count], firstID: Int64(objects + 1))
            try record(fewInsertsName, side, operations: 1, unit: "") { try again.exec("PRAGMA wal_checkpoint(TRUNCATE)") }
            try again.updateScores(fewChangedKeys[...], divisor: 7)
            try record(fewUpdatesName, side, operations: 1, unit: "") { try again.exec("PRAGMA wal_checkpoint(TRUNCATE)") }
            again.close()
        }
    }

    /// Through managed objects: import in saves of 10,000 with `reset()`, then fetch all and read
    /// one attribute. SQLite's side is its raw bulk insert and a raw full scan: the issue's target
    /// compares the object graph with SQLite's raw rows per second.
    private func managedPhase(_ side: Side) throws {
        let scratch = Scratch("managed")
        defer { scratch.remove() }
        let insertName = "managed objects: insert in saves of 10,000 + reset()"
        let fetchName = "managed objects: fetch all, read one attribute"
        switch side {
        case .ours:
            let managed = try ManagedUsers(path: scratch.file("users.store"), model: model)
            try record(insertName, side, operations: objects, unit: "objects") { try managed.insert(users, batch: 10_000) }
            try record(fetchName, side, operations: objects, unit: "objects") { _ = try managed.fetchAllReadingName() }
            try managed.close()
        case .sqlite:
            let db = try SQLiteUsers(path: scratch.file("users.sqlite"), synchronous: "FULL")
            try db.createTable(indexOnAge: false)
            try record(insertName, side, operations: objects, unit: "objects") { try db.insert(users[...], firstID: 1) }
            try record(fetchName, side, operations: objects, unit: "objects") { _ = try db.scanNames() }
            note(insertName, "SQLite: raw rows in one transaction")
            note(fetchName, "SQLite: raw SELECT of every row")
            db.close()
        }
    }

    /// The XML store (Formats/xml-store.md) through the store protocol: all objects in one save
    /// (the whole file written beside, synced, renamed), then opening the file again, which reads
    /// and decodes all of it. SQLite's side is its raw bulk insert and a raw full scan.
    private func xmlPhase(_ side: Side) throws {
        // The issue's XML workload is 100,000 objects: a whole-file text store at 1M would be a
        // 390 MB document rewritten per save, which measures nothing the 100k run does not.
        let count = min(objects, Self.xmlObjects)
        let scratch = Scratch("xml")
        defer { scratch.remove() }
        let saveName = "XML store: save \(count) objects (one save)"
        let loadName = "XML store: open, loading \(count) objects"
        switch side {
        case .ours:
            let path = scratch.file("users.xml")
            let store = try XMLUsers(path: path, model: model)
            try record(saveName, side, operations: count, unit: "objects") { try store.insert(users[..<count]) }
            try store.close()
            update("XML store: file size", operations: 0, unit: "") { $0.bytes[side.rawValue] = scratch.size(prefix: "users.xml") }
            try record(loadName, side, operations: count, unit: "objects") { _ = try XMLUsers.openAndCount(path: path, model: model) }
        case .sqlite:
            let path = scratch.file("users.sqlite")
            let db = try SQLiteUsers(path: path, synchronous: "FULL")
            try db.createTable(indexOnAge: false)
            try record(saveName, side, operations: count, unit: "objects") { try db.insert(users[..<count], firstID: 1) }
            try db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            update("XML store: file size", operations: 0, unit: "") { $0.bytes[side.rawValue] = scratch.size(prefix: "users.sqlite") }
            try record(loadName, side, operations: count, unit: "objects") { _ = try db.scanNames() }
            note(saveName, "SQLite: raw rows in one transaction")
            note(loadName, "SQLite: raw SELECT of every row")
            db.close()
        }
    }

    /// Schema migration (issue 15): the users stored with model version 1, then opened with
    /// version 2, which renames `name` to `fullName` (renaming identifier) and adds `verified`
    /// (Boolean, default NO): the coordinator infers the mapping and migrates the store in place.
    /// The models are loaded from a package written to the scratch folder, as an app ships them.
    /// SQLite's side is `ALTER TABLE … ADD COLUMN` and `RENAME COLUMN` on the same rows.
    private func migrationPhase(_ side: Side) throws {
        let scratch = Scratch("migration")
        defer { scratch.remove() }
        let insertName = "bulk insert, one save (migration phase)"
        let migrateName = "inferred migration: add an attribute, rename another"
        switch side {
        case .ours:
            let package = try UserModel.writeVersionedPackage(in: scratch.file("Users.xcdatamodeld"))
            let path = scratch.file("users.store")
            // The metadata a coordinator records, so that the next open sees version 1's hashes.
            var metadata = StoreMetadata()
            metadata[NSStoreTypeKey] = NSBinaryStoreType
            metadata[NSStoreUUIDKey] = UUID().uuidString
            metadata[NSStoreModelVersionHashesKey] = package.v1.entityVersionHashesByName
            let store = try BinaryUsers(path: path, model: package.v1, durability: .full, metadata: metadata)
            try record(insertName, side, operations: objects, unit: "rows") { try store.insert(users[...]) }
            try store.close()
            PeakMemory.trim()
            let live = PeakMemory.resident()
            try record(migrateName, side, operations: objects, unit: "objects") {
                let coordinator = NSPersistentStoreCoordinator(managedObjectModel: package.current)
                let options = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
                try coordinator.remove(try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: URL(fileURLWithPath: path), options: options))
            }
            if results.first(where: { $0.name == migrateName })?.notes.isEmpty ?? true {
                note(migrateName, "ours: the whole open (checkpoint, migrate into a staging file, install, reopen) and close; resident before it \(live >> 20) MB (the benchmark's input rows)")
            }
        case .sqlite:
            let db = try SQLiteUsers(path: scratch.file("users.sqlite"), synchronous: "FULL")
            try db.createTable(indexOnAge: false)
            try record(insertName, side, operations: objects, unit: "rows") { try db.insert(users[...], firstID: 1) }
            try record(migrateName, side, operations: objects, unit: "objects") {
                try db.exec("BEGIN; ALTER TABLE user ADD COLUMN verified INTEGER NOT NULL DEFAULT 0; ALTER TABLE user RENAME COLUMN name TO fullName; COMMIT")
            }
            note(migrateName, "SQLite: ALTER TABLE ADD COLUMN + RENAME COLUMN (schema only, no row rewritten)")
            db.close()
        }
    }

    /// Issue 16's fetched-results controller target: 10,000 single-object updates against
    /// 100,000 fetched objects, each its own change event, counted as the delegate receives them;
    /// once changing an attribute the results are not sorted by (updates in place), once the sort
    /// key (moves). Ours only: SQLite has no such layer.
    private func fetchedResultsPhase(_ side: Side) throws {
        guard side == .ours else { return }
        let count = min(objects, 100_000)
        let updates = min(10_000, count)
        let scratch = Scratch("frc")
        defer { scratch.remove() }
        let managed = try ManagedUsers(path: scratch.file("users.store"), model: model)
        try managed.insert(Array(users[..<count]), batch: 10_000)
        for moving in [false, true] {
            let name = "fetched-results controller: \(updates) single-object \(moving ? "moves" : "updates") against \(count) objects"
            var delivered = 0
            delivered = try managed.fetchedResultsUpdates(updates, moving: moving) { body in
                try record(name, side, operations: updates, unit: "changes") { try body() }
            }
            if delivered != updates { note(name, "delivered \(delivered) changes for \(updates) updates") }
        }
        try managed.close()
    }

    private func walSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}

/// Errors from worker threads, rethrown on the main thread.
final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func add(_ error: Error) { lock.withLock { errors.append(error) } }
    func check() throws { if let first = lock.withLock({ errors.first }) { throw first } }
}

/// Runs `body` on `count` threads at once and waits for all of them.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}
