import ArgumentParser
import Foundation

/// `coredata-bench`: every workload of BENCHMARKS.md on the binary store and on SQLite, side by side.
@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata-bench",
        abstract: "Benchmarks the binary store against SQLite (WAL, C API) in one run.",
        discussion: """
        Example:
          swift run -c release coredata-bench --objects 1000000 --repetitions 3
        Figures are medians over the repetitions; the ratio column is SQLite's median time divided by
        ours (above 1: we are faster). Sides alternate which goes first in each repetition.
        """
    )

    @Option(help: "Objects in the data set.")
    var objects = 1_000_000

    @Option(help: "Repetitions of every workload on each side.")
    var repetitions = 3

    @Option(help: "Comma-separated phases to run: \(Runner.phases.joined(separator: ",")).")
    var only: String?

    @Flag(help: "Print JSON instead of the table.")
    var json = false

    @Option(help: "A PostgreSQL server (postgres://user@host:port/database): run only the PostgreSQL workloads there, our store beside raw postgres-nio.")
    var postgres: String?

    // A child process of the processes phase (Processes.runChild).
    @Option(help: .hidden) var childRole: String?
    @Option(help: .hidden) var childSide = "ours"
    @Option(help: .hidden) var childPath = ""
    @Option(help: .hidden) var childFirst = 1
    @Option(help: .hidden) var childCount = 0

    mutating func run() throws {
        if let childRole {
            try Processes.runChild(role: childRole, side: childSide, path: childPath, first: childFirst, count: childCount)
            return
        }
        if let postgres {
            guard let url = URL(string: postgres) else { throw ValidationError("--postgres is not a URL") }
            let bench = PostgreSQLBench(url: url, objects: objects, users: Users.make(count: objects))
            let rows = try Self.wait { try await bench.run() }
            print(PostgreSQLBench.table(rows, objects: objects))
            return
        }
        let only = self.only.map { Set($0.split(separator: ",").map(String.init)) }
        let runner = Runner(objects: objects, repetitions: repetitions, only: only)
        let results = try runner.run()
        let report = BenchmarkReport(
            date: ISO8601DateFormatter().string(from: Date()),
            machine: Self.machine(),
            command: CommandLine.arguments.joined(separator: " "),
            objects: objects, repetitions: repetitions, results: results
        )
        print(json ? Report.json(report) : Report.table(report))
    }

    /// Runs async work from the synchronous command and waits for it.
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        nonisolated(unsafe) var result: Result<T, any Error>?
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { result = .success(try await body()) } catch { result = .failure(error) }
            done.signal()
        }
        done.wait()
        guard let result else { throw CancellationError() }
        return try result.get()
    }

    static func machine() -> String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let memory = ProcessInfo.processInfo.physicalMemory >> 30
        var cpu = "unknown CPU"
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let name = line.split(separator: ":", maxSplits: 1).last {
            cpu = name.trimmingCharacters(in: .whitespaces)
        }
        return "\(cores) cores (\(cpu)), \(memory) GiB"
    }
}
