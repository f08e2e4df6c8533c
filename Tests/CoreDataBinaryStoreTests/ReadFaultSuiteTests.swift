#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Read errors: `EIO` on every `pread` of the standard workload (opens, log replay at reopen,
/// fetches and reads between saves, a save's own reads, checkpoints and compaction), once and
/// from then on. A read that fails must fail its call with an error that names the file and the
/// cause; it must not be taken for damage or for the end of a file, must not change what the
/// store holds, and whatever the handle still reads must be what the disk holds: the next open
/// of the disk as it is finds exactly what the handle showed, and after a power loss every
/// returned save is there.
final class ReadFaultSuiteTests: XCTestCase {
    func testEIOAtEveryRead() throws {
        let workload = CrashWorkload.standard
        let clean = FaultInjectingFileSystem()
        let baseline = WorkloadRunner.run(workload, on: clean)
        XCTAssertNil(baseline.failure.map { "\($0.error)" })
        let stepOf = WorkloadRunner.stepOfRead(baseline)
        let trace = clean.readOperations
        XCTAssertGreaterThan(stepOf.count, 100, "the workload reads too little to test")
        let failures = ScenarioFailures()
        var scenarios = 0
        var absorbed = 0
        var usable = 0
        for read in 1...stepOf.count {
            for persistent in [false, true] {
                let plan = FaultPlan.failRead(code: EIO, at: read, persistent: persistent)
                let fileSystem = FaultInjectingFileSystem(plan: plan)
                let outcome = WorkloadRunner.run(workload, on: fileSystem, keepHandle: true)
                let context = "\(plan) (\(trace[read - 1]), in step \(workload.steps[stepOf[read - 1]].label))"
                guard let failed = outcome.failure else {
                    // No step failed: the store read again and got it right (the workload's own
                    // checks passed). Allowed only where the store retries on purpose: the probe
                    // of the root slots a shared read makes after its reads (any failure there
                    // redoes the whole read, wal.md §9), and reads of a step whose result the
                    // workload compares whole. Anything else would be an EIO swallowed as
                    // damage or as the end of a file.
                    let line = trace[read - 1]
                    let step = workload.steps[stepOf[read - 1]]
                    let rootProbe = line.hasSuffix("read \(WorkloadRunner.path) @\(BinaryStoreLayout.rootSlotOffsets[0]) +640")
                        || line.hasSuffix("read \(WorkloadRunner.path)-compact @\(BinaryStoreLayout.rootSlotOffsets[0]) +640")
                    var compared = false
                    if case .check = step.action { compared = true }
                    if !rootProbe && !compared { failures.record("\(context): the error reached no caller") }
                    absorbed += 1
                    continue
                }
                if failed.step < stepOf[read - 1] {
                    failures.record("\(context): step \(workload.steps[failed.step].label) failed before the read: \(failed.error)")
                    continue
                }
                if let problem = FaultSuiteTests.unclear(failed.error, code: EIO) {
                    failures.record("\(context): \(problem)")
                    continue
                }
                let returned = workload.changes(before: failed.step)
                let acceptable = workload.steps[failed.step].changesContents ? [returned, returned + 1] : [returned]
                // What the handle still shows must be what the disk holds.
                var shown = acceptable
                // A close that failed has released its handle all the same.
                if let handle = outcome.handle, !workload.steps[failed.step].action.opensOrCloses {
                    do {
                        let snapshot = try StoreSnapshot.read(handle)
                        guard let index = acceptable.first(where: { workload.snapshots[$0] == snapshot }) else {
                            failures.record("\(context): after the error the handle reads \(snapshot), none of \(acceptable)")
                            continue
                        }
                        shown = [index]
                        usable += 1
                    } catch {
                        if let problem = FaultSuiteTests.unclear(error, code: EIO) { failures.record("\(context), then a read of every row: \(problem)") }
                    }
                }
                for (name, image, expected) in [("the disk as it is", fileSystem.currentImage, shown), ("after power loss", fileSystem.powerLoss(.dropUnsynced), acceptable)] {
                    scenarios += 1
                    let result = RecoveryCheck.reopen(image, workload: workload, acceptable: expected, closeAndReopen: false)
                    if let failure = result.failure { failures.record("\(context), \(name): \(failure)") }
                }
            }
        }
        ScenarioTally.report("binary read fault", scenarios)
        print("read fault suite: \(scenarios) scenarios (\(stepOf.count) reads × EIO once and persistent × 2 disk images), \(absorbed) faults absorbed, \(usable) handles still reading after the error")
        XCTAssertGreaterThanOrEqual(scenarios, 400, "the suite shrank")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }
}
