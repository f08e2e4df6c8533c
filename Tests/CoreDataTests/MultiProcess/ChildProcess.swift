import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process of the test binary: the binary runs itself with a filter that names
/// `MultiProcessChild/testRunAsChildProcess` and the role in the environment. The child reports
/// by printing lines (`ACK label` after a save returned); the parent reads them as they come, so
/// it can kill a writer in the middle of its work and know what was acknowledged.
final class ChildProcess: @unchecked Sendable {
    let role: String
    private let process = Process()
    private let pipe = Pipe()
    private let lock = NSLock()
    private var buffer = Data()

    init(role: String, environment: [String: String]) throws {
        self.role = role
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["CoreDataTests.MultiProcessChild/testRunAsChildProcess"]
        var merged = ProcessInfo.processInfo.environment
        merged["COREDATA_CHILD_ROLE"] = role
        merged.merge(environment) { _, new in new }
        process.environment = merged
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock { self.buffer.append(data) }
        }
        try process.run()
    }

    /// Every complete line printed so far.
    var lines: [String] {
        let text = lock.withLock { String(decoding: buffer, as: UTF8.self) }
        var lines = text.components(separatedBy: "\n")
        lines.removeLast()
        return lines
    }

    /// The lines that start with `tag` and a space, without them.
    func reports(_ tag: String) -> [String] {
        lines.compactMap { $0.hasPrefix(tag + " ") ? String($0.dropFirst(tag.count + 1)) : nil }
    }

    /// Waits until `condition` holds for the output or `timeout` seconds pass.
    @discardableResult
    func wait(until condition: (ChildProcess) -> Bool, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(self) { return true }
            if !process.isRunning { return condition(self) }
            usleep(2_000)
        }
        return condition(self)
    }

    /// Waits for the child to exit (killing it after `timeout` seconds) and returns its status.
    @discardableResult
    func finish(timeout: Double = 240) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning { kill() }
        process.waitUntilExit()
        pipe.fileHandleForReading.readabilityHandler = nil
        let rest = pipe.fileHandleForReading.readDataToEndOfFile()
        lock.withLock { buffer.append(rest) }
        return process.terminationStatus
    }

    /// SIGKILL: no exit handler runs, no lock is released but by the kernel.
    func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
    }

    var output: String { lines.joined(separator: "\n") }
}
