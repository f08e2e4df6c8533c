#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Two real processes share one store (Formats/wal.md §9), each saving, checkpointing and
/// compacting it, and each round kills one of them with `SIGKILL` inside a checkpoint or a
/// compaction, then the other at a random moment. After each round the store opens, verifies,
/// and holds every save either process reported as returned (plus at most the one each had in
/// flight), with its values (issue 19, "real processes").
///
/// The kill timings come from a seed printed at the start; `COREDATA_KILL_SEED=S` replays them.
/// The children are this test binary run again on ``testChildSharesAndMaintains()``
/// (``ChildProcess``).
final class SharedProcessKillTests: XCTestCase {
    static let storeVariable = "COREDATA_SHARED_CHILD_STORE"
    static let reportVariable = "COREDATA_SHARED_CHILD_REPORT"
    static let nameVariable = "COREDATA_SHARED_CHILD_NAME"
    static let childTest = "CoreDataBinaryStoreTests.SharedProcessKillTests/testChildSharesAndMaintains"
    static let rounds = 30

    /// The child: opens the store shared, then until killed inserts one note per save (its key
    /// reserved through the store, so two processes never collide), appends `n key` to its
    /// report after each save returns, checkpoints every 3 saves and compacts every 7. It goes on
    /// from the highest save number of its notes in the store, not in its report: a save killed
    /// before its report line is in the store and is not made twice.
    func testChildSharesAndMaintains() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment[Self.storeVariable], let reportPath = environment[Self.reportVariable],
              let name = environment[Self.nameVariable] else { return }
        let announce = ChildProcess.announce
        var options = BinaryStoreOptions()
        options.checkpointThreshold = 4 << 10
        announce("opening")
        let store = try BinaryStore(path: path, model: CrashTestModel.model, metadata: StoreMetadata(["NSStoreUUID": WorkloadRunner.storeUUID]), options: options)
        let noteEntity = try XCTUnwrap(CrashTestModel.model.entitiesByName["Note"])
        guard case .rows(let existing) = try store.execute(StoreFetchRequest(entity: noteEntity)) else { return XCTFail("a fetch of notes returned no rows") }
        var n = existing.filter { Self.child(of: $0) == name }.compactMap(Self.save(of:)).max() ?? 0
        guard let report = ChildProcess.Report(path: reportPath) else { return XCTFail("cannot open \(reportPath)") }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            n += 1
            announce("save \(n)")
            let key = try store.newPrimaryKeys(entityName: "Note", count: 1)[0]
            _ = try store.save(StoreChangeSet(inserted: [Self.note(key, child: name, save: n)]))
            guard report.append("\(n) \(key)") else { return XCTFail("cannot report") }
            if n % 3 == 0 {
                announce("checkpoint")
                try store.checkpoint()
            }
            if n % 7 == 0 {
                announce("compact")
                try store.compact()
            }
        }
    }

    func testSIGKILLDuringCheckpointsAndCompactionsOfTwoProcesses() throws {
        try XCTSkipUnless(ChildProcess.isAvailable, "the children are this binary, found through /proc/self/exe")
        let seed = KillSeed.make(suite: "shared process kill suite")
        var generator = SeededGenerator(seed: seed)
        let folder = NSTemporaryDirectory() + "shared-kill-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer {
            if testRun?.failureCount == 0 {
                try? FileManager.default.removeItem(atPath: folder)
            } else {
                print("shared process kill suite: the store is kept at \(folder)")
            }
        }
        let path = folder + "/store"
        let names = ["a", "b"]
        let started = Date()
        var phases: [String: Int] = [:]
        var kills = 0
        var inFlight = 0
        for round in 1...Self.rounds {
            let context = "round \(round) (seed \(seed))"
            let children = try names.map { name in
                try ChildProcess(test: Self.childTest, environment: [
                    Self.storeVariable: path, Self.reportVariable: folder + "/\(name).report", Self.nameVariable: name,
                ], outputPath: folder + "/\(name).log")
            }
            // The first kill waits for its child to start a checkpoint (odd rounds) or a
            // compaction (even rounds), then lands a few milliseconds into it.
            let target = Int.random(in: 0...1, using: &generator)
            let phase = round % 2 == 1 ? "checkpoint" : "compact"
            let limit = Date().addingTimeInterval(20)
            while children[target].lastPhase != phase, children[target].isRunning, Date() < limit { usleep(100) }
            usleep(UInt32.random(in: 0..<3_000, using: &generator))
            let landed = children[target].lastPhase
            children[target].kill()
            usleep(UInt32.random(in: 0..<20_000, using: &generator))
            children[1 - target].kill()
            for child in children { child.waitUntilExit() }
            for (index, child) in children.enumerated() where !child.wasKilled {
                return XCTFail("\(context): child \(names[index]) stopped by itself (status \(child.terminationStatus)):\n\(child.printed.suffix(3_000))")
            }
            kills += 2
            phases[landed, default: 0] += 1

            var options = BinaryStoreOptions()
            options.readOnly = true
            let store = try BinaryStore(path: path, model: CrashTestModel.model, metadata: StoreMetadata(), options: options)
            let notes: [StoreRow]
            guard case .rows(let rows) = try store.execute(StoreFetchRequest(entity: try XCTUnwrap(CrashTestModel.model.entitiesByName["Note"]))) else {
                return XCTFail("\(context): a fetch of notes returned no rows")
            }
            notes = rows
            let byKey = Dictionary(notes.map { ($0.objectID.primaryKey, $0) }, uniquingKeysWith: { first, _ in first })
            XCTAssertEqual(byKey.count, notes.count, "\(context): a key was used twice")
            for name in names {
                let reported = Self.reported(folder + "/\(name).report")
                for (save, key) in reported {
                    guard let row = byKey[key] else { return XCTFail("\(context): child \(name)'s save \(save) (note \(key)) returned but is not in the store") }
                    XCTAssertEqual(Self.save(of: row), save, "\(context): note \(key) is not child \(name)'s save \(save)")
                }
                // Every note is whole, and each save number is stored once. A kill between a
                // save's return and its report line leaves it unreported: at most one per kill.
                let own = notes.filter { Self.child(of: $0) == name }
                for row in own {
                    let save = try XCTUnwrap(Self.save(of: row), "\(context): \(row)")
                    let expected = StoreSnapshot.normalized(Self.note(row.objectID.primaryKey, child: name, save: save))
                    XCTAssertEqual(StoreSnapshot.normalized(row).values, expected.values, "\(context): child \(name)'s save \(save)")
                }
                let numbers = own.compactMap(Self.save(of:))
                XCTAssertEqual(Set(numbers).count, numbers.count, "\(context): child \(name) stored a save number twice")
                let unreported = own.count - reported.count
                XCTAssertTrue(unreported >= 0 && unreported <= round, "\(context): child \(name) reported \(reported.count) saves, the store holds \(own.count) of its notes")
                inFlight = max(inFlight, unreported)
            }
            let verification = try store.verify()
            XCTAssertTrue(verification.isIntact, "\(context): \(verification)")
            try store.close()
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        let store = try BinaryStore(path: path, model: CrashTestModel.model, metadata: StoreMetadata(), options: BinaryStoreOptions())
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()
        let landings = phases.sorted { $0.key < $1.key }.map { "\($0.value) in \($0.key)" }.joined(separator: ", ")
        ScenarioTally.report("shared process kills", kills)
        print("shared process kill suite: \(kills) SIGKILLs of two processes sharing a store (first kills: \(landings)); \(inFlight) saves of one child were durable but unreported when killed; \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    static func note(_ key: Int64, child: String, save: Int64) -> StoreRow {
        StoreRow(objectID: CrashTestModel.id("Note", key), version: 1, values: [
            "title": .string("\(child)-\(save)"),
            "body": .data(Data((0..<Int(save % 300)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(key)) })),
            "written": .date(Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(save))),
        ])
    }

    /// The save number in a note's title.
    private static func save(of row: StoreRow) -> Int64? {
        guard case .string(let title)? = row.values["title"], let dash = title.firstIndex(of: "-") else { return nil }
        return Int64(title[title.index(after: dash)...])
    }

    private static func child(of row: StoreRow) -> String? {
        guard case .string(let title)? = row.values["title"] else { return nil }
        return title.split(separator: "-").first.map(String.init)
    }

    /// The `(save, key)` lines of a child's report, in order.
    private static func reported(_ path: String) -> [(save: Int64, key: Int64)] {
        ChildProcess.reportLines(path).compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let save = Int64(parts[0]), let key = Int64(parts[1]) else { return nil }
            return (save, key)
        }
    }
}
