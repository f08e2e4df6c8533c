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

/// A real process saving to a real store on disk, killed with `SIGKILL` at random moments: after
/// each kill the store opens, verifies, holds every save the child reported as returned, and no
/// part of any other save.
///
/// The kill timings come from a seed printed at the start; `COREDATA_KILL_SEED=S` replays them.
/// The child is this test binary run again on ``testChildSavesUntilKilled()`` with the store's
/// path in the environment (``ChildProcess``); in an ordinary run that test does nothing.
final class ProcessKillTests: XCTestCase {
    static let storeVariable = "COREDATA_CRASH_CHILD_STORE"
    static let reportVariable = "COREDATA_CRASH_CHILD_REPORT"
    static let childTest = "CoreDataBinaryStoreTests.ProcessKillTests/testChildSavesUntilKilled"
    static let kills = 120

    /// The child: opens the store (recovering what the last child left), then saves until killed
    /// (or for 30 seconds, should its parent be gone), appending each save's number to the report
    /// file after `save` returns. It compacts every 8 saves, and a 4 KiB checkpoint threshold
    /// makes background checkpoints run among the saves. Each phase is announced on standard
    /// output (unbuffered), so the parent knows where its kills land.
    func testChildSavesUntilKilled() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment[Self.storeVariable], let reportPath = environment[Self.reportVariable] else { return }
        let announce = ChildProcess.announce
        var options = BinaryStoreOptions()
        options.checkpointThreshold = 4 << 10
        announce("opening")
        let store = try BinaryStore(path: path, model: CrashTestModel.model, metadata: StoreMetadata(["NSStoreUUID": WorkloadRunner.storeUUID]), options: options)
        announce("opened, \(store.openReport)")
        let start = try StoreSnapshot.read(store)
        guard var n = KillWorkload.lastSave(in: start) else { return XCTFail("the store holds no save counter: \(start)") }
        guard let report = ChildProcess.Report(path: reportPath) else { return XCTFail("cannot open \(reportPath)") }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            n += 1
            announce("save \(n)")
            _ = try store.save(KillWorkload.changes(forSave: n))
            guard report.append("\(n)") else { return XCTFail("cannot report") }
            if n % 8 == 0 {
                announce("compact")
                try store.compact()
            }
        }
    }

    func testSIGKILLAtRandomMomentsLosesNoReturnedSave() throws {
        try XCTSkipUnless(ChildProcess.isAvailable, "the child is this binary, found through /proc/self/exe")
        let seed = KillSeed.make(suite: "process kill suite")
        var generator = SeededGenerator(seed: seed)
        let folder = NSTemporaryDirectory() + "kill-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer {
            if testRun?.failureCount == 0 {
                try? FileManager.default.removeItem(atPath: folder)
            } else {
                print("process kill suite: the store is kept at \(folder)")
            }
        }
        let path = folder + "/store"
        let reportPath = folder + "/report"
        let outputPath = folder + "/child.log"
        let environment = [Self.storeVariable: path, Self.reportVariable: reportPath]
        let started = Date()
        var saves: Int64 = 0
        var keptInFlight = 0
        var phases: [String: Int] = [:]
        for round in 1...Self.kills {
            let reportedBefore = Self.reported(reportPath).count
            let child = try ChildProcess(test: Self.childTest, environment: environment, outputPath: outputPath)
            let limit = Date().addingTimeInterval(20)
            if round % 6 == 0 {
                // Kill during open and recovery.
                while !child.hasAnnounced("opening"), child.isRunning, Date() < limit { usleep(200) }
                usleep(UInt32.random(in: 0..<4_000, using: &generator))
            } else {
                // Kill among saves, compactions and background checkpoints.
                while Self.reported(reportPath).count == reportedBefore, child.isRunning, Date() < limit { usleep(200) }
                usleep(UInt32.random(in: 0..<25_000, using: &generator))
            }
            let wasRunning = child.isRunning
            child.kill()
            child.waitUntilExit()
            let context = "round \(round) (seed \(seed))"
            guard wasRunning, child.wasKilled else {
                return XCTFail("\(context): the child stopped by itself (status \(child.terminationStatus)):\n\(child.printed.suffix(3_000))")
            }
            phases[child.lastPhase, default: 0] += 1

            // What the child reported as returned must be there, whole; nothing else may be.
            let reported = Self.reported(reportPath)
            // A kill between a save's return and its report leaves a gap, never a repeat.
            XCTAssertTrue(zip(reported, reported.dropFirst()).allSatisfy { $0 < $1 }, "\(context): the report repeats a save: \(reported.suffix(10))")
            let lastReported = reported.last ?? 0
            var options = BinaryStoreOptions()
            options.readOnly = true
            let store = try BinaryStore(path: path, model: CrashTestModel.model, metadata: StoreMetadata(), options: options)
            let snapshot = try StoreSnapshot.read(store)
            guard let last = KillWorkload.lastSave(in: snapshot) else { return XCTFail("\(context): no save counter in \(snapshot)") }
            XCTAssertTrue(last == lastReported || last == lastReported + 1, "\(context): the store holds save \(last), the child reported \(lastReported)")
            if last == lastReported + 1 { keptInFlight += 1 }
            let expected = KillWorkload.snapshot(after: last)
            XCTAssertEqual(snapshot, expected, "\(context): \(snapshot.difference(from: expected))")
            let verification = try store.verify()
            XCTAssertTrue(verification.isIntact, "\(context): \(verification)")
            try store.close()
            saves = last
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        // A last writable open recovers and checkpoints what the last child left.
        let store = try BinaryStore(path: path, model: CrashTestModel.model, metadata: StoreMetadata(), options: BinaryStoreOptions())
        XCTAssertEqual(try StoreSnapshot.read(store), KillWorkload.snapshot(after: saves))
        XCTAssertTrue(try store.verify().isIntact)
        try store.close()
        let landed = phases.sorted { $0.key < $1.key }.map { "\($0.value) in \($0.key)" }.joined(separator: ", ")
        ScenarioTally.report("process kills", Self.kills)
        print("process kill suite: \(Self.kills) SIGKILLs of a child saving to a real store (\(landed)), \(saves) saves; \(keptInFlight) kills kept the save in flight (its frames had reached the kernel); \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// The save numbers in the report file, in order.
    private static func reported(_ path: String) -> [Int64] {
        ChildProcess.reportLines(path).compactMap { Int64($0) }
    }
}
