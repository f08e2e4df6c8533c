#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CoreDataStorage
import CoreDataTestSupport
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation
import XCTest

/// The XML store's fault suite (issue 19): `EIO` and `ENOSPC`, once and from then on, at every
/// file operation of the standard workload (creates, writes, syncs, renames, folder
/// syncs), not two hand-picked ones. The step that meets the fault must throw; whatever the
/// handle does next, the file on disk, now and after a power loss, must hold every save that
/// returned (and at most the one that failed, whole), and the next open leaves no save's file
/// beside the store.
final class XMLFaultSuiteTests: XCTestCase {
    private static let faults: [(code: Int32, persistent: Bool)] = [(EIO, false), (ENOSPC, false), (EIO, true), (ENOSPC, true)]

    func testEIOAndENOSPCAtEveryOperation() throws {
        let workload = XMLWorkloadRunner.workload
        let clean = FaultInjectingFileSystem()
        let baseline = XMLWorkloadRunner.run(workload, on: clean)
        XCTAssertNil(baseline.failure.map { "step \($0.step): \($0.error)" })
        let stepOf = CrashWorkload.stepOfOperation(endingAt: baseline.operationsAfterStep)
        let trace = clean.operations
        let kinds = Set(trace.map { $0.split(separator: " ").dropFirst().first.map(String.init) ?? "" })
        for kind in ["create", "write", "sync", "rename"] {
            XCTAssertTrue(kinds.contains(kind), "the workload never does a \(kind): \(kinds.sorted())")
        }
        XCTAssertTrue(trace.contains { $0.contains("folder") }, "the workload never syncs the folder")
        let failures = ScenarioFailures()
        var scenarios = 0
        for operation in 1...stepOf.count {
            for fault in Self.faults {
                let plan = FaultPlan.fail(code: fault.code, at: operation, persistent: fault.persistent)
                let fileSystem = FaultInjectingFileSystem(plan: plan)
                let outcome = XMLWorkloadRunner.run(workload, on: fileSystem)
                let context = "\(plan) (\(trace[operation - 1]), in step \(workload.steps[stepOf[operation - 1]].label))"
                guard let failed = outcome.failure else {
                    failures.record("\(context): the error never reached a caller")
                    continue
                }
                guard failed.step == stepOf[operation - 1] else {
                    failures.record("\(context): step \(workload.steps[failed.step].label) threw instead: \(failed.error)")
                    continue
                }
                if "\(failed.error)".isEmpty { failures.record("\(context): an error without a message") }
                let returned = workload.changes(before: failed.step)
                let acceptable = workload.steps[failed.step].changesContents ? [returned, returned + 1] : [returned]
                fileSystem.setPlan(.none)
                let garbage = CrashSeeds.seeds(for: operation, count: 3).map { seed in
                    ("after power loss, garbage sectors (seed \(seed))", fileSystem.powerLoss(.garbageSectors(seed: seed)))
                }
                for (name, image) in [("the disk as it is", fileSystem.currentImage), ("after power loss", fileSystem.powerLoss(.dropUnsynced))] + garbage {
                    scenarios += 1
                    if let problem = XMLWorkloadRunner.recover(image, workload: workload, acceptable: acceptable, closeAndReopen: false) {
                        failures.record("\(context), \(name): \(problem)")
                    }
                }
            }
        }
        print("XML fault suite: \(scenarios) scenarios (\(stepOf.count) ops × \(Self.faults.count) faults (EIO, ENOSPC; once, persistent) × 5 disk images: as it is, unsynced dropped, garbage sectors × 3 seeds)")
        ScenarioTally.report("XML fault", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 1_630, "the suite shrank")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }
}
