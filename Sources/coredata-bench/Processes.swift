import Foundation

/// The processes phase: the bench binary runs itself as writer and reader processes on one store
/// (`--child-role`), so both sides pay for separate processes as a server's workers would.
enum Processes {
    /// Starts this binary as a child with `arguments`; its standard output goes to a pipe.
    static func spawn(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        return (process, pipe)
    }

    /// Waits for a child and returns what it printed; throws when it failed.
    static func finish(_ child: (Process, Pipe)) throws -> String {
        let output = String(decoding: child.1.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.0.waitUntilExit()
        guard child.0.terminationStatus == 0 else {
            throw BenchError("a child process exited with status \(child.0.terminationStatus): \(output)")
        }
        return output
    }

    /// What a child does: `writer` inserts users `first..<first + count` one save each;
    /// `reader` looks up 100 random users among the first `count` every millisecond until
    /// `path.stop` appears, then
    /// prints `SEEN <rows> LOOKUPS <lookups>`.
    static func runChild(role: String, side: String, path: String, first: Int, count: Int) throws {
        let model = UserModel.make(indexOnAge: false)
        switch (role, side) {
        case ("writer", "ours"):
            let store = try BinaryUsers(path: path, model: model, durability: .full)
            try store.insertEach(ArraySlice((first..<(first + count)).map(Users.make)))
            try store.close()
        case ("writer", _):
            let db = try SQLiteUsers(path: path, synchronous: "FULL")
            try db.insertEach(ArraySlice((first..<(first + count)).map(Users.make)), firstID: Int64(first))
            db.close()
        case ("notifier", _):
            // Saves `count` times, 5 ms apart, printing the monotonic clock after each returned.
            let store = try BinaryUsers(path: path, model: model, durability: .full)
            for index in 0..<count {
                try store.insertEach(ArraySlice([Users.make(first + index)]))
                print("T \(DispatchTime.now().uptimeNanoseconds)")
                usleep(5_000)
            }
            try store.close()
        case ("reader", _):
            var random = SeededRandom(seed: UInt64(ProcessInfo.processInfo.processIdentifier))
            var lookups = 0
            let ours = side == "ours" ? try BinaryUsers(path: path, model: model, durability: .full) : nil
            let sqlite = side == "ours" ? nil : try SQLiteUsers(path: path, synchronous: "FULL")
            while !FileManager.default.fileExists(atPath: path + ".stop") {
                let keys = (0..<100).map { _ in Int64.random(in: 1...Int64(max(1, count)), using: &random) }
                if let ours { _ = try ours.lookups(keys) } else { _ = try sqlite?.lookups(keys) }
                lookups += keys.count
                // Readers at a steady pace, as a service's would be: a reader that spins takes
                // the writers' cores, more so the faster its lookups are.
                usleep(1_000)
            }
            let seen = try ours?.count() ?? sqlite?.count() ?? -1
            try ours?.close()
            sqlite?.close()
            print("SEEN \(seen) LOOKUPS \(lookups)")
        default:
            throw BenchError("no child role \(role)")
        }
    }
}

extension Processes {
    /// The delay from a save returning in another process to this process's remote-change
    /// callback, for `count` saves: sorted, in seconds.
    static func notificationDelays(path: String, count: Int) throws -> [Double] {
        let model = UserModel.make(indexOnAge: false)
        let observer = try BinaryUsers(path: path, model: model, durability: .full)
        let times = TimeLog()
        observer.store.startObservingChanges { times.add(DispatchTime.now().uptimeNanoseconds) }
        let child = try spawn(["--child-role", "notifier", "--child-side", "ours", "--child-path", path, "--child-first", "1", "--child-count", "\(count)"])
        let saves = try finish(child).split(separator: "\n").compactMap { line -> UInt64? in
            line.hasPrefix("T ") ? UInt64(line.dropFirst(2)) : nil
        }
        usleep(20_000)
        observer.store.stopObservingChanges()
        try observer.close()
        let notified = times.values.sorted()
        var delays: [Double] = []
        for saved in saves {
            guard let first = notified.first(where: { $0 >= saved }) else {
                throw BenchError("no remote-change callback after a save of the notifier process")
            }
            delays.append(Double(first - saved) / 1e9)
        }
        return delays.sorted()
    }
}

/// Monotonic times collected from any thread.
final class TimeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [UInt64] = []
    func add(_ time: UInt64) { lock.withLock { times.append(time) } }
    var values: [UInt64] { lock.withLock { times } }
}

/// A failure of the benchmark itself (a child that failed, a result that is wrong).
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
