import CoreData
import Foundation
import XCTest

/// Core Data's concurrency debug check: in debug builds, touching a context or one of its
/// objects off the context's queue stops the process with a message naming the context and the
/// thread. A trap cannot be caught in-process, so each scenario runs in a child process: the
/// test binary again, running only ``testChildScenario()`` with the scenario in its environment.
final class ConcurrencyDebugTests: XCTestCase {
    /// The environment variable that puts the test binary in child mode, and names the scenario.
    static let scenarioKey = "COREDATA_TEST_CHILD_SCENARIO"

    // MARK: Parent side

    func testTouchingAContextOffItsQueueTrapsNamingTheContextAndTheThread() throws {
        try requireDebugBuild()
        let child = try runChild(scenario: "contextOffQueue")
        XCTAssertTrue(child.trapped, "the child should stop with a trap; it exited with \(child.status)\n\(child.stderr)")
        XCTAssertTrue(child.stderr.contains("CoreData concurrency violation"), child.stderr)
        XCTAssertTrue(child.stderr.contains("context 'ImportContext' (private queue)"), child.stderr)
        XCTAssertTrue(child.stderr.contains("was used on thread OffQueueWorker"), child.stderr)
        XCTAssertFalse(child.stdout.contains("CHILD: no trap"))
    }

    func testTouchingAManagedObjectOffItsQueueTrapsNamingTheObject() throws {
        try requireDebugBuild()
        let child = try runChild(scenario: "objectOffQueue")
        XCTAssertTrue(child.trapped, "the child should stop with a trap; it exited with \(child.status)\n\(child.stderr)")
        XCTAssertTrue(child.stderr.contains("CoreData concurrency violation: object x-coredata://"), child.stderr)
        XCTAssertTrue(child.stderr.contains("/Author/p1 of context 'ViewContext' (main queue)"), child.stderr)
        XCTAssertTrue(child.stderr.contains("was used on thread OffQueueWorker"), child.stderr)
    }

    func testTheCheckIsOffWithTheEnvironmentSwitch() throws {
        let child = try runChild(scenario: "contextOffQueue", environment: ["COREDATA_CONCURRENCY_DEBUG": "0"])
        XCTAssertFalse(child.trapped, child.stderr)
        XCTAssertEqual(child.status, 0, child.stderr)
        XCTAssertFalse(child.stderr.contains("concurrency violation"), child.stderr)
        XCTAssertTrue(child.stdout.contains("CHILD: no trap"), child.stdout)
    }

    func testUsingTheQueueDoesNotTrap() throws {
        let child = try runChild(scenario: "onQueue")
        XCTAssertEqual(child.status, 0, child.stderr)
        XCTAssertTrue(child.stdout.contains("CHILD: no trap"), child.stdout)
    }

    // MARK: Child side

    /// Runs one scenario when the binary was started as a child; skipped otherwise.
    func testChildScenario() throws {
        guard let scenario = ProcessInfo.processInfo.environment[Self.scenarioKey] else {
            throw XCTSkip("runs only in the child processes of the other ConcurrencyDebugTests")
        }
        let container = try StoreKind.inMemory.makeContainer()
        switch scenario {
        case "contextOffQueue":
            let context = container.newBackgroundContext()
            context.name = "ImportContext"
            onWorkerThread { _ = try? context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")) }
        case "objectOffQueue":
            let context = container.viewContext
            context.name = "ViewContext"
            let author = context.make("Author", ["name": "Ada"])
            try context.save()
            nonisolated(unsafe) let object = author
            onWorkerThread { _ = object.value(forKey: "name") }
        case "onQueue":
            let context = container.newBackgroundContext()
            context.name = "ImportContext"
            onWorkerThread {
                context.performAndWait {
                    context.make("Author", ["name": "Ada"])
                    _ = try? context.save()
                }
            }
        default:
            XCTFail("unknown scenario \(scenario)")
        }
        print("CHILD: no trap")
    }

    /// Runs `body` on a new thread named `OffQueueWorker` and waits for it.
    private func onWorkerThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let worker = Thread {
            // On Linux a thread's name takes effect when the thread itself sets it; the system
            // name is set as well, which is what other threads' diagnostics would see.
            Thread.current.name = "OffQueueWorker"
            #if os(Linux)
            if let comm = FileHandle(forWritingAtPath: "/proc/thread-self/comm") {
                comm.write(Data("OffQueueWorker".utf8))
                comm.closeFile()
            }
            #endif
            body()
            done.signal()
        }
        worker.start()
        done.wait()
    }

    // MARK: Running a child

    private struct ChildResult {
        var status: Int32
        var trapped: Bool
        var stdout: String
        var stderr: String
    }

    private func requireDebugBuild() throws {
        #if !DEBUG
        throw XCTSkip("the concurrency debug check is on by default in debug builds only")
        #endif
    }

    /// Runs this test binary again with only ``testChildScenario()`` selected.
    private func runChild(scenario: String, environment extra: [String: String] = [:]) throws -> ChildResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["CoreDataTests.ConcurrencyDebugTests/testChildScenario"]
        var environment = ProcessInfo.processInfo.environment
        environment["COREDATA_CONCURRENCY_DEBUG"] = nil
        environment[Self.scenarioKey] = scenario
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both pipes while the child runs, so that a full pipe cannot stall it.
        let collected = ReadBuffer()
        let group = DispatchGroup()
        for (handle, isError) in [(output.fileHandleForReading, false), (errors.fileHandleForReading, true)] {
            DispatchQueue.global().async(group: group) {
                collected.append(handle.readDataToEndOfFile(), isError: isError)
            }
        }
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            process.terminate()
            XCTFail("the child process for \(scenario) did not finish in time")
        }
        process.waitUntilExit()
        group.wait()
        return ChildResult(
            status: process.terminationStatus, trapped: process.terminationReason == .uncaughtSignal,
            stdout: collected.text(isError: false), stderr: collected.text(isError: true))
    }
}

/// Output of a child process, filled from two reader threads.
private final class ReadBuffer: @unchecked Sendable {
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()

    func append(_ data: Data, isError: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if isError { err.append(data) } else { out.append(data) }
    }

    func text(isError: Bool) -> String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: isError ? err : out, as: UTF8.self)
    }
}
