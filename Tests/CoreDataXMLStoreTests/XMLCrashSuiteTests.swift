import CoreDataStorage
import CoreDataTestSupport
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation
import XCTest

/// The binary store's crash suite run on the XML store (Formats/xml-store.md §11): the standard
/// workload crashes at every file operation it does, the disk is left as each power-loss policy
/// leaves it, and the next open must find exactly the saves that returned, plus at most the one
/// in flight, whole, and no leftover `.new` file after it.
final class XMLCrashSuiteTests: XCTestCase {
    func testEveryCrashPointUnderEveryPowerLossPolicy() throws {
        let workload = XMLWorkloadRunner.workload
        let clean = FaultInjectingFileSystem()
        let baseline = XMLWorkloadRunner.run(workload, on: clean)
        XCTAssertNil(baseline.failure.map { "step \($0.step): \($0.error)" })
        let stepOf = CrashWorkload.stepOfOperation(endingAt: baseline.operationsAfterStep)
        let trace = clean.operations
        XCTAssertGreaterThan(stepOf.count, 50, "the workload does too few file operations to test anything")
        let failures = ScenarioFailures()
        var scenarios = 0
        for crash in 1...stepOf.count {
            let fileSystem = FaultInjectingFileSystem(plan: .crash(at: crash))
            let outcome = XMLWorkloadRunner.run(workload, on: fileSystem)
            let context = "crash at op \(crash) (\(trace[crash - 1]), in step \(stepOf[crash - 1]) \(workload.steps[stepOf[crash - 1]].label))"
            guard let failed = outcome.failure, failed.step == stepOf[crash - 1] else {
                failures.record("\(context): step \(stepOf[crash - 1]) did not throw (\(outcome.failure.map { "step \($0.step): \($0.error)" } ?? "none threw"))")
                continue
            }
            let returned = workload.changes(before: failed.step)
            let acceptable = workload.steps[failed.step].changesContents ? [returned, returned + 1] : [returned]
            let seeds = CrashSeeds.seeds(for: crash, count: 10)
            let policies: [PowerLossPolicy] = [.processCrash, .dropUnsynced, .zeroFillExtensions]
                + seeds.prefix(4).map { .tearLastWrite(seed: $0) } + seeds.prefix(6).map { .randomSubset(seed: $0) } + seeds.map { .garbageSectors(seed: $0) }
            for policy in policies {
                scenarios += 1
                if let failure = XMLWorkloadRunner.recover(fileSystem.powerLoss(policy), workload: workload, acceptable: acceptable, closeAndReopen: true) {
                    failures.record("\(context), \(policy): \(failure)")
                }
            }
        }
        print("XML crash suite: \(scenarios) scenarios (\(stepOf.count) ops × 23 power-loss policies: process crash, drop unsynced, zero-fill extensions, tear last write × 4 seeds, random subset × 6 seeds, garbage sectors × 10 seeds)")
        ScenarioTally.report("XML crash", scenarios)
        XCTAssertGreaterThanOrEqual(scenarios, 1_880, "the suite shrank")
        XCTAssertTrue(failures.messages.isEmpty, failures.summary)
    }

    /// A failed write (`ENOSPC`, `EIO`) fails the save and leaves the store and file as they were;
    /// a failed sync poisons the handle.
    func testFailedWritesAndSyncs() throws {
        for (code, poisons) in [(ENOSPC, false), (EIO, true)] {
            let fileSystem = FaultInjectingFileSystem()
            let store = try XMLWorkloadRunner.open(fileSystem)
            let first = CrashTestModel.owner(1, "Ann", items: [])
            _ = try store.save(StoreChangeSet(inserted: [first]))
            let before = fileSystem.contents(of: XMLWorkloadRunner.path)
            // The next save: remove? (no leftover) create, write, sync, rename, folder sync.
            let start = fileSystem.operationCount
            fileSystem.setPlan(.fail(code: code, at: start + (poisons ? 3 : 2), persistent: false))
            XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [CrashTestModel.owner(2, "Bob", items: [])])))
            XCTAssertEqual(fileSystem.contents(of: XMLWorkloadRunner.path), before, "errno \(code): the store file changed")
            if poisons {
                XCTAssertThrowsError(try store.row(for: first.objectID), "a failed sync must poison the handle")
            } else {
                XCTAssertEqual(try store.row(for: first.objectID)?["name"], StoreValue.string("Ann"))
                XCTAssertNil(try store.row(for: CrashTestModel.id("Owner", 2)))
                XCTAssertEqual(fileSystem.paths(startingWith: XMLWorkloadRunner.path + XMLStoreLayout.pendingFileSuffix), [], "errno \(code)")
            }
            let reopened = try StoreSnapshot.read(try XMLWorkloadRunner.open(FaultInjectingFileSystem(image: fileSystem.currentImage)))
            XCTAssertEqual(reopened.rows.count, 1, "errno \(code)")
        }
    }
}
