import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Crashes while several threads save at once: saves that share one group commit, and a
/// checkpoint and a compaction racing the saves. Threads interleave differently on every run, so
/// instead of crashing a new run at operation `n` (which would be another interleaving), one run
/// keeps the disk image a power loss would leave before each of its operations, under five
/// policies, and every image is opened as the next process would.
///
/// Each of three threads makes six saves in order: save `j` inserts item `j` of its thread and
/// updates item `j - 1`. A store after a crash must hold, for every thread, a prefix of its
/// saves, each whole: at least the saves that had returned before the crash (full durability),
/// at most those that had started. It must verify intact and read the same after close and
/// reopen. A failing image is written to a folder the message names.
final class ConcurrentCrashTests: XCTestCase {
    private static let threads = 3
    private static let savesPerThread = 6
    private static let runs = 4

    func testCrashesWhileThreadsShareGroupCommitsAndACheckpointRaces() throws {
        let failures = ScenarioFailures()
        var scenarios = 0
        var groupCommits = 0
        var racedSaves = 0
        for run in 0..<Self.runs {
            let (fileSystem, records, trace) = try Self.runOnce(run: run)
            let saves = Self.threads * Self.savesPerThread
            XCTAssertEqual(records.count, saves, "run \(run): a save failed")
            groupCommits += Self.groupWrites(trace)
            racedSaves += Self.savesRacedByMaintenance(records, trace: trace)
            for capture in fileSystem.capturedImages {
                scenarios += 1
                let context = "run \(run), power loss before op \(capture.operation) (\(capture.operation <= trace.count ? trace[capture.operation - 1] : "after the last")), \(capture.policy)"
                if let failure = Self.check(capture, records: records) {
                    failures.record("\(context): \(failure); image in \(Self.keep(capture.image, name: "run\(run)-op\(capture.operation)"))")
                }
            }
        }
        ScenarioTally.report("binary crash (concurrent saves)", scenarios)
        print("concurrent crash suite: \(scenarios) scenarios (\(Self.runs) runs of \(Self.threads) saving threads × \(Self.savesPerThread) saves, a checkpoint and compaction thread; every operation × 5 power-loss policies); \(groupCommits) group commits for \(Self.runs * Self.threads * Self.savesPerThread) saves; \(racedSaves) saves overlapped a checkpoint's or compaction's write")
        XCTAssertLessThan(groupCommits * 10, Self.runs * Self.threads * Self.savesPerThread * 9, "saves that start together must share group commits; more than 90% of them wrote alone")
        XCTAssertGreaterThan(racedSaves, 0, "no checkpoint or compaction ever wrote while a save was in flight")
        XCTAssertGreaterThanOrEqual(scenarios, 1_000, "the suite shrank")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }

    // MARK: The workload

    struct SaveRecord {
        var thread: Int
        var save: Int
        /// Operations before the save was called; its own operations come after.
        var start: Int
        /// Operations when it had returned; its own operations come before.
        var end: Int
    }

    /// A barrier the saving threads meet at before each save. A thread that stops early leaves,
    /// so the others do not wait for it.
    final class RoundBarrier: @unchecked Sendable {
        private let condition = NSCondition()
        private var parties: Int
        private var arrived = 0
        private var generation = 0

        init(parties: Int) { self.parties = parties }

        func arrive() {
            condition.lock()
            defer { condition.unlock() }
            arrived += 1
            if arrived >= parties {
                arrived = 0
                generation += 1
                condition.broadcast()
                return
            }
            let mine = generation
            while generation == mine { condition.wait() }
        }

        func leave() {
            condition.lock()
            defer { condition.unlock() }
            parties -= 1
            if parties > 0, arrived >= parties {
                arrived = 0
                generation += 1
                condition.broadcast()
            }
        }
    }

    /// Collects what the threads report.
    final class Records: @unchecked Sendable {
        private let lock = NSLock()
        private var saves: [SaveRecord] = []
        private var errors: [String] = []

        func add(_ record: SaveRecord) { lock.withLock { saves.append(record) } }
        func fail(_ message: String) { lock.withLock { errors.append(message) } }
        var all: [SaveRecord] { lock.withLock { saves } }
        var failures: [String] { lock.withLock { errors } }
    }

    static func key(_ thread: Int, _ save: Int) -> Int64 { Int64(1_000 * (thread + 1) + save) }

    static func changes(thread: Int, save: Int) -> StoreChangeSet {
        var inserted = [CrashTestModel.item(key(thread, save), owner: nil)]
        if save == 3 { inserted.append(CrashTestModel.note(key(thread, save), size: 6_000)) }
        var updated: [StoreRow] = []
        if save > 1 {
            var row = CrashTestModel.item(key(thread, save - 1), owner: nil, variant: Int64(save))
            row.version = 1
            updated.append(row)
        }
        return StoreChangeSet(inserted: inserted, updated: updated, deleted: [])
    }

    /// The contents when each thread's first `prefix[thread]` saves are in.
    static func expected(_ prefix: [Int]) -> StoreSnapshot {
        var snapshot = StoreSnapshot()
        for (thread, count) in prefix.enumerated() where count > 0 {
            for save in 1...count {
                var item = StoreSnapshot.normalized(CrashTestModel.item(key(thread, save), owner: nil, variant: save < count ? Int64(save + 1) : 0))
                item.version = save < count ? 2 : 1
                snapshot.rows[item.objectID] = item
                if save == 3 {
                    var note = StoreSnapshot.normalized(CrashTestModel.note(key(thread, save), size: 6_000))
                    note.version = 1
                    snapshot.rows[note.objectID] = note
                }
            }
        }
        return snapshot
    }

    /// One run: the threads save while another checkpoints and compacts, then the store closes.
    static func runOnce(run: Int) throws -> (FaultInjectingFileSystem, [SaveRecord], [String]) {
        let fileSystem = FaultInjectingFileSystem()
        // A flush long enough for the other threads' saves to queue behind it.
        fileSystem.setSyncDelay(microseconds: 2_000)
        fileSystem.captureImages { operation in
            let seeds = CrashSeeds.seeds(for: operation &* 131 &+ run, count: 3)
            return [.processCrash, .dropUnsynced, .tearLastWrite(seed: seeds[0]), .randomSubset(seed: seeds[1]), .garbageSectors(seed: seeds[2])]
        }
        let store = try WorkloadRunner.open(fileSystem)
        let records = Records()
        let group = DispatchGroup()
        func start(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            // Threads of their own: the global queue may run only one task per core.
            Thread {
                body()
                group.leave()
            }.start()
        }
        // The savers start each round together, so their saves meet in the commit queue.
        let round = RoundBarrier(parties: threads)
        for thread in 0..<threads {
            start {
                for save in 1...savesPerThread {
                    round.arrive()
                    let before = fileSystem.operationCount
                    do {
                        _ = try store.save(changes(thread: thread, save: save))
                        records.add(SaveRecord(thread: thread, save: save, start: before, end: fileSystem.operationCount))
                    } catch {
                        records.fail("thread \(thread) save \(save): \(error)")
                        round.leave()
                        return
                    }
                }
            }
        }
        start {
            for round in 0..<4 {
                usleep(useconds_t(300 + 200 * round))
                do {
                    if round == 2 { try store.compact() } else { try store.checkpoint() }
                } catch {
                    records.fail("maintenance round \(round): \(error)")
                }
            }
        }
        group.wait()
        try store.close()
        XCTAssertEqual(records.failures, [], "run \(run)")
        return (fileSystem, records.all, fileSystem.operations)
    }

    /// Group writes of the log: every write of frames (the header at offset 0 and the 40-byte
    /// sync markers aside) carries one group commit, whatever number of saves it holds.
    static func groupWrites(_ trace: [String]) -> Int {
        trace.filter { line in
            let fields = line.split(separator: " ")
            return fields.count == 5 && fields[1] == "write" && fields[2] == "\(WorkloadRunner.path)-wal"
                && fields[3] != "@0" && fields[4] != "+\(LogLayout.frameHeaderSize + LogLayout.frameTrailerSize)"
        }.count
    }

    /// Saves during which the data file was written (a checkpoint or compaction ran alongside).
    static func savesRacedByMaintenance(_ records: [SaveRecord], trace: [String]) -> Int {
        let dataWrites = trace.compactMap { line -> Int? in
            let fields = line.split(separator: " ")
            guard fields.count >= 3, fields[1] == "write", fields[2] == "\(WorkloadRunner.path)" || fields[2] == "\(WorkloadRunner.path)-compact" else { return nil }
            return Int(fields[0])
        }
        return records.filter { record in dataWrites.contains { $0 > record.start && $0 <= record.end } }.count
    }

    // MARK: Checking an image

    /// Why the store in `capture` is wrong, or `nil`.
    static func check(_ capture: FaultInjectingFileSystem.CapturedImage, records: [SaveRecord]) -> String? {
        let before = capture.operation - 1
        var returned = [Int](repeating: 0, count: threads)
        var started = [Int](repeating: 0, count: threads)
        for record in records {
            if record.end <= before { returned[record.thread] = max(returned[record.thread], record.save) }
            if record.start < before { started[record.thread] = max(started[record.thread], record.save) }
        }
        let fileSystem = FaultInjectingFileSystem(image: capture.image)
        do {
            let store = try WorkloadRunner.open(fileSystem)
            let snapshot = try StoreSnapshot.read(store)
            let prefix = (0..<threads).map { thread in
                (1...savesPerThread).filter { snapshot.rows[CrashTestModel.id("Item", key(thread, $0))] != nil }.count
            }
            for thread in 0..<threads where !(returned[thread]...max(returned[thread], started[thread])).contains(prefix[thread]) {
                return "thread \(thread) has \(prefix[thread]) saves in the store; \(returned[thread]) had returned, \(started[thread]) had started"
            }
            let wanted = expected(prefix)
            if snapshot != wanted { return "not whole saves: \(snapshot.difference(from: wanted))" }
            let verification = try store.verify()
            if !verification.isIntact { return "verify found: \(verification)" }
            try store.close()
            let again = try WorkloadRunner.open(fileSystem)
            let second = try StoreSnapshot.read(again)
            if second != snapshot { return "after close and reopen: \(second.difference(from: snapshot))" }
            try again.close()
        } catch {
            return "\(error)"
        }
        return nil
    }

    /// Writes a failing image where it can be opened again; returns the folder.
    static func keep(_ image: DiskImage, name: String) -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("concurrent-crash-\(name)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (path, bytes) in image.files {
            let file = folder.appendingPathComponent(String(path.split(separator: "/").last ?? "file"))
            try? Data(bytes).write(to: file)
        }
        return folder.path
    }
}
