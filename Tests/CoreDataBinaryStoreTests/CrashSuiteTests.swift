import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// The crash suite: the standard workload crashes at every operation it does, the disk is left as
/// each power-loss policy leaves it, and the next process must open a store that verifies and
/// holds exactly the saves that returned, plus at most the save in flight, whole.
final class CrashSuiteTests: XCTestCase {
    /// Every operation × every policy, with full durability: every returned save is there.
    func testEveryCrashPointWithFullDurability() throws {
        let (scenarios, failures, operations, policyCount) = crashEveryOperation(of: CrashWorkload.standard)
        print("crash suite (full durability): \(scenarios) scenarios (\(operations) ops × \(policyCount) power-loss policies: process crash, drop unsynced, zero-fill extensions, tear last write × 4 seeds, random subset × 6 seeds, garbage sectors × 10 seeds; seeds from CrashSeeds.seeds(for: op))")
        ScenarioTally.report("binary crash (full durability)", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 1_610, "the suite shrank")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }

    /// The external-data workload (Formats/binary-store.md §15) crashed at every operation, its
    /// file and folder writes included: after each, every returned save's values read back byte
    /// for byte, and `verify` (which reads every file a record names) finds nothing missing or
    /// damaged; files no record names are allowed (compaction removes them).
    func testEveryCrashPointWithExternalData() throws {
        let (scenarios, failures, operations, policyCount) = crashEveryOperation(of: CrashWorkload.externalData)
        print("crash suite (external data): \(scenarios) scenarios (\(operations) ops × \(policyCount) power-loss policies)")
        ScenarioTally.report("binary crash (external data)", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 1_500, "the suite shrank")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }

    /// Checkpoints that list unchanged index pages again, crashed at every operation: a crash
    /// before the new root leaves the old index in charge, after it the new one, whose listed
    /// pages of earlier checkpoints are intact. Fewer seeds per operation than the standard
    /// workload: each reopen checks 8,000 objects.
    func testEveryCrashPointWithReusedIndexPages() throws {
        let (scenarios, failures, operations, policyCount) = crashEveryOperation(of: CrashWorkload.indexPages, seedCount: 2)
        print("crash suite (reused index pages): \(scenarios) scenarios (\(operations) ops × \(policyCount) power-loss policies)")
        ScenarioTally.report("binary crash (reused index pages)", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 150, "the suite shrank")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }

    /// Persisted secondary indexes (Formats/binary-store.md §7.2) crashed at every operation:
    /// after each, the fetch through the index finds exactly the titled notes and `verify`
    /// finds every index entry backed by its record.
    func testEveryCrashPointWithPersistedSecondaryIndexes() throws {
        let (scenarios, failures, operations, policyCount) = crashEveryOperation(of: CrashWorkload.secondaryIndexes, seedCount: 4)
        print("crash suite (persisted secondary indexes): \(scenarios) scenarios (\(operations) ops × \(policyCount) power-loss policies)")
        ScenarioTally.report("binary crash (persisted secondary indexes)", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 150, "the suite shrank")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }

    /// Crashes `workload` at each of its operations under every power-loss policy (with
    /// `seedCount` seeds for the seeded ones) and reopens each disk image against the oracle.
    private func crashEveryOperation(of workload: CrashWorkload, seedCount: Int = 10) -> (scenarios: Int, failures: ScenarioFailures, operations: Int, policies: Int) {
        let clean = FaultInjectingFileSystem()
        let baseline = WorkloadRunner.run(workload, on: clean)
        XCTAssertNil(baseline.failure.map { "\($0.error)" })
        let stepOf = WorkloadRunner.stepOfOperation(baseline)
        let trace = clean.operations
        let failures = ScenarioFailures()
        var scenarios = 0
        var policyCount = 0
        for crash in 1...stepOf.count {
            let fileSystem = FaultInjectingFileSystem(plan: .crash(at: crash))
            let outcome = WorkloadRunner.run(workload, on: fileSystem)
            let context = "crash at op \(crash) (\(trace[crash - 1]), in step \(stepOf[crash - 1]) \(workload.steps[stepOf[crash - 1]].label))"
            guard let failed = outcome.failure else {
                failures.record("\(context): no step threw")
                continue
            }
            if failed.step != stepOf[crash - 1] {
                failures.record("\(context): step \(failed.step) threw instead: \(failed.error)")
                continue
            }
            let returned = workload.changes(before: failed.step)
            let acceptable = workload.steps[failed.step].changesContents ? [returned, returned + 1] : [returned]
            let seeds = CrashSeeds.seeds(for: crash, count: seedCount)
            let policies: [PowerLossPolicy] = [.processCrash, .dropUnsynced, .zeroFillExtensions]
                + seeds.prefix(4).map { .tearLastWrite(seed: $0) } + seeds.prefix(6).map { .randomSubset(seed: $0) } + seeds.map { .garbageSectors(seed: $0) }
            policyCount = policies.count
            for policy in policies {
                scenarios += 1
                let result = RecoveryCheck.reopen(fileSystem.powerLoss(policy), workload: workload, acceptable: acceptable)
                if let failure = result.failure { failures.record("\(context), \(policy): \(failure)") }
            }
        }
        return (scenarios, failures, stepOf.count, policyCount)
    }

    /// With relaxed durability a power loss may lose the last saves, but the store is never
    /// corrupt, holds a whole prefix of the saves, and keeps everything before the last
    /// checkpoint; a process crash alone loses nothing that returned.
    func testEveryCrashPointWithRelaxedDurability() throws {
        let workload = CrashWorkload.standard
        let clean = FaultInjectingFileSystem()
        let baseline = WorkloadRunner.run(workload, on: clean, durability: .normal)
        XCTAssertNil(baseline.failure.map { "\($0.error)" })
        let stepOf = WorkloadRunner.stepOfOperation(baseline)
        let trace = clean.operations
        let failures = ScenarioFailures()
        var scenarios = 0
        var lost = 0
        for crash in 1...stepOf.count {
            let fileSystem = FaultInjectingFileSystem(plan: .crash(at: crash))
            let outcome = WorkloadRunner.run(workload, on: fileSystem, durability: .normal)
            let context = "relaxed, crash at op \(crash) (\(trace[crash - 1]), in step \(workload.steps[stepOf[crash - 1]].label))"
            guard let failed = outcome.failure, failed.step == stepOf[crash - 1] else {
                failures.record("\(context): the step did not throw (\(outcome.failure.map { "step \($0.step): \($0.error)" } ?? "none threw"))")
                continue
            }
            let returned = workload.changes(before: failed.step)
            let upper = workload.steps[failed.step].changesContents ? returned + 1 : returned
            let lastSync = workload.steps[..<failed.step].lastIndex(where: \.syncsEverything)
            let durable = lastSync.map { workload.changes(before: $0) } ?? 0
            let checks: [(PowerLossPolicy, [Int])] = [
                (.processCrash, Array(returned...upper)),
                (.dropUnsynced, Array(durable...upper)),
                (.tearLastWrite(seed: UInt64(crash)), Array(durable...upper)),
                (.randomSubset(seed: UInt64(crash)), Array(durable...upper)),
            ] + CrashSeeds.seeds(for: crash, count: 6).map { (.garbageSectors(seed: $0), Array(durable...upper)) }
                + CrashSeeds.seeds(for: crash, count: 6).dropFirst().map { (.randomSubset(seed: $0), Array(durable...upper)) }
            for (policy, acceptable) in checks {
                scenarios += 1
                let result = RecoveryCheck.reopen(fileSystem.powerLoss(policy), workload: workload, acceptable: acceptable.reversed(), durability: .normal, closeAndReopen: false)
                if let failure = result.failure { failures.record("\(context), \(policy): \(failure)") }
                if let matched = result.matched, matched < returned { lost += 1 }
            }
        }
        print("crash suite (relaxed durability): \(scenarios) scenarios (\(stepOf.count) ops × \(scenarios / max(1, stepOf.count)) power-loss policies), \(lost) lost returned saves, as relaxed durability allows")
        ScenarioTally.report("binary crash (relaxed durability)", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 630, "the suite shrank")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }
}
