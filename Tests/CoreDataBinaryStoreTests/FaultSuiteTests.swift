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

/// The fault suite: `EIO` and `ENOSPC` at every operation of the standard workload (saves,
/// checkpoints, compaction, opens) and of recovery, once and from then on. The error must reach
/// the caller naming the cause, the handle must be poisoned (later calls throw and write
/// nothing), and the next open on a healthy disk must verify and hold every returned save.
/// The one exception is `NAME-shm` (wal.md §9): it holds no saved data (the snapshot lock, and
/// the mark of a handle without shared memory), so a fault there fails the open, checkpoint or
/// compaction that needed it and leaves the handle, if any, usable.
final class FaultSuiteTests: XCTestCase {
    private static let faults: [(code: Int32, persistent: Bool)] = [(EIO, false), (ENOSPC, false), (EIO, true), (ENOSPC, true)]

    func testEIOAndENOSPCAtEveryOperation() throws {
        let (scenarios, summary) = faultEveryOperation(of: CrashWorkload.standard)
        ScenarioTally.report("binary fault", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 1_400, "the suite shrank")
        print("fault suite: \(summary)")
    }

    /// The external-data workload (Formats/binary-store.md §15): a fault while a value's file is
    /// written, synced, renamed into `NAME-external/` or its directory synced, as at every other
    /// operation, reaches the save that needed it, poisons the handle and loses no returned save.
    func testEIOAndENOSPCAtEveryOperationWithExternalData() throws {
        let (scenarios, summary) = faultEveryOperation(of: CrashWorkload.externalData)
        ScenarioTally.report("binary fault (external data)", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 500, "the suite shrank")
        print("fault suite (external data): \(summary)")
    }

    /// Each fault of ``faults`` at each operation of `workload`; the failures are asserted here,
    /// the scenario count and a summary line returned.
    private func faultEveryOperation(of workload: CrashWorkload, file: StaticString = #filePath, line: UInt = #line) -> (scenarios: Int, summary: String) {
        let clean = FaultInjectingFileSystem()
        let baseline = WorkloadRunner.run(workload, on: clean)
        XCTAssertNil(baseline.failure.map { "\($0.error)" }, file: file, line: line)
        let stepOf = WorkloadRunner.stepOfOperation(baseline)
        let trace = clean.operations
        let failures = ScenarioFailures()
        var scenarios = 0
        var probes = 0
        for operation in 1...stepOf.count {
            for fault in Self.faults {
                let plan = FaultPlan.fail(code: fault.code, at: operation, persistent: fault.persistent)
                let fileSystem = FaultInjectingFileSystem(plan: plan)
                let outcome = WorkloadRunner.run(workload, on: fileSystem, probe: true)
                let context = "\(plan) (\(trace[operation - 1]), in step \(workload.steps[stepOf[operation - 1]].label))"
                guard let failed = outcome.failure else {
                    failures.record("\(context): the error never reached a caller")
                    continue
                }
                if failed.step != stepOf[operation - 1] {
                    failures.record("\(context): step \(workload.steps[failed.step].label) threw instead: \(failed.error)")
                    continue
                }
                if let problem = Self.unclear(failed.error, code: fault.code) { failures.record("\(context): \(problem)") }
                let poisons = !trace[operation - 1].hasSuffix("-shm")
                for later in outcome.laterSteps where poisons {
                    probes += 1
                    guard let error = later.error else {
                        failures.record("\(context): the handle is not poisoned: \(workload.steps[later.step].label) returned")
                        continue
                    }
                    if let problem = Self.unclear(error, code: fault.code) { failures.record("\(context), then \(workload.steps[later.step].label): \(problem)") }
                }
                if workload.steps[failed.step].action.opensOrCloses || !poisons {
                    // No handle is left (a failed open) or it is closed already (a failed close).
                } else if let closeError = outcome.closeError {
                    if let problem = Self.unclear(closeError, code: fault.code) { failures.record("\(context), then close: \(problem)") }
                } else {
                    failures.record("\(context): closing the poisoned handle reported nothing")
                }
                if poisons, outcome.operationsAfterFailure > 0 {
                    failures.record("\(context): the poisoned handle did \(outcome.operationsAfterFailure) more operations")
                }
                // A handle left usable went on: the later steps' changes that returned count too.
                let returned = workload.changes(before: failed.step)
                    + outcome.laterSteps.filter { $0.error == nil && workload.steps[$0.step].changesContents }.count
                let acceptable = workload.steps[failed.step].changesContents ? [returned, returned + 1] : [returned]
                let garbage = CrashSeeds.seeds(for: operation, count: 3).map { seed in
                    ("after power loss, garbage sectors (seed \(seed))", fileSystem.powerLoss(.garbageSectors(seed: seed)))
                }
                for (name, image) in [("the disk as it is", fileSystem.currentImage), ("after power loss", fileSystem.powerLoss(.dropUnsynced))] + garbage {
                    scenarios += 1
                    let result = RecoveryCheck.reopen(image, workload: workload, acceptable: acceptable, closeAndReopen: false)
                    if let failure = result.failure { failures.record("\(context), \(name): \(failure)") }
                }
            }
        }
        XCTAssertTrue(failures.messages.isEmpty, failures.summary, file: file, line: line)
        return (scenarios, "\(scenarios) scenarios (\(stepOf.count) ops × \(Self.faults.count) faults (EIO, ENOSPC; once, persistent) × 5 disk images: as it is, unsynced dropped, garbage sectors × 3 seeds), \(probes) calls on poisoned handles")
    }

    /// Recovery's own writes (dropping pages of an unfinished checkpoint, a stale `NAME-compact`,
    /// a missing or cut log, a store that was never created) fail or crash at each operation;
    /// the next healthy open still finds what the first would have.
    func testFaultsAndCrashesDuringRecovery() throws {
        let workload = CrashWorkload.standard
        let baseline = WorkloadRunner.run(workload, on: FaultInjectingFileSystem())
        let total = WorkloadRunner.stepOfOperation(baseline).count
        // The crash images whose open writes something, each once.
        var seen = Set<UInt64>()
        var candidates: [(image: DiskImage, expected: [Int], trace: [String], context: String)] = []
        for crash in 1...total {
            let fileSystem = FaultInjectingFileSystem(plan: .crash(at: crash))
            _ = WorkloadRunner.run(workload, on: fileSystem)
            for policy in [PowerLossPolicy.processCrash, .dropUnsynced, .tearLastWrite(seed: UInt64(crash)), .zeroFillExtensions] {
                let image = fileSystem.powerLoss(policy)
                guard seen.insert(image.fingerprint).inserted else { continue }
                let probe = FaultInjectingFileSystem(image: image)
                guard let store = try? WorkloadRunner.open(probe), let snapshot = try? StoreSnapshot.read(store), probe.operationCount > 0 else { continue }
                candidates.append((image, workload.snapshots.indices.filter { workload.snapshots[$0] == snapshot }, probe.operations, "crash at op \(crash), \(policy)"))
            }
        }
        let failures = ScenarioFailures()
        var scenarios = 0
        var operationsTried = 0
        for candidate in candidates {
            operationsTried += candidate.trace.count
            for operation in 1...candidate.trace.count {
                let plans = Self.faults.map { FaultPlan.fail(code: $0.code, at: operation, persistent: $0.persistent) } + [.crash(at: operation)]
                for plan in plans {
                    let fileSystem = FaultInjectingFileSystem(image: candidate.image, plan: plan)
                    let context = "\(candidate.context), then \(plan) of the open (\(candidate.trace[operation - 1]))"
                    do {
                        _ = try WorkloadRunner.open(fileSystem)
                        failures.record("\(context): open returned")
                    } catch {
                        if case .fail(let code, _, _) = plan, let problem = Self.unclear(error, code: code) { failures.record("\(context): \(problem)") }
                    }
                    var images = [("the disk as it is", fileSystem.currentImage), ("after power loss", fileSystem.powerLoss(.dropUnsynced))]
                    if case .crash = plan { images.append(("torn", fileSystem.powerLoss(.tearLastWrite(seed: UInt64(operation))))) }
                    for (name, image) in images {
                        scenarios += 1
                        let result = RecoveryCheck.reopen(image, workload: workload, acceptable: candidate.expected, closeAndReopen: false)
                        if let failure = result.failure { failures.record("\(context), \(name): \(failure)") }
                    }
                }
            }
        }
        XCTAssertGreaterThan(candidates.count, 0)
        let kinds = Set(candidates.flatMap { $0.trace.map { $0.split(separator: " ").dropFirst().prefix(2).joined(separator: " ") } }).sorted()
        ScenarioTally.report("binary fault during recovery", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 1_170, "the suite shrank")
        print("fault suite (recovery): \(scenarios) scenarios (\(candidates.count) crash images whose open writes, \(operationsTried) open operations × \(Self.faults.count + 1) faults (EIO, ENOSPC once and persistent; crash) × 2–3 disk images); recovery's operations: \(kinds.joined(separator: ", "))")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }

    /// Why `error` does not clearly say an injected `code` failure happened, or `nil`.
    static func unclear(_ error: any Error, code: Int32) -> String? {
        guard case StoreError.io(let detail)? = error as? StoreError else { return "expected an I/O error, got \(error)" }
        let reason = String(cString: strerror(code))
        guard detail.contains(reason), detail.contains("injected"), detail.contains("/crash") else {
            return "the error does not name the file and the cause (\(reason)): \(detail)"
        }
        return nil
    }
}
