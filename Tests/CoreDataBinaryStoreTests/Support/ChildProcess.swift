#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A child of the process-kill suites: this test binary run again on one test, which finds its
/// work in the environment (in an ordinary run that test finds none and does nothing).
///
/// The child announces each phase of its work on standard output (``announce(_:)``) and appends
/// a line to a report file after each save returns (``Report``). Its standard output and error
/// go to a file, not a pipe, so the parent reads them without a reader thread and a failing
/// suite keeps them beside the store.
final class ChildProcess {
    /// The prefix of an announced phase in the child's output.
    private static let phasePrefix = "child: "

    let outputPath: String
    private let process = Process()
    private let output: FileHandle

    /// Starts the test binary on `test` (`Target.Class/testMethod`) with `environment` over this
    /// process's own, its standard output and error written to `outputPath` (emptied first).
    ///
    /// Throws where the test binary cannot be found through `/proc/self/exe` (suites skip there
    /// first, see ``isAvailable``) or the process does not start.
    init(test: String, environment: [String: String], outputPath: String) throws {
        self.outputPath = outputPath
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        guard let output = FileHandle(forWritingAtPath: outputPath) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: outputPath])
        }
        self.output = output
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [test]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            try? output.close()
            throw error
        }
    }

    /// Whether a child can be started: the test binary finds itself through `/proc/self/exe`.
    static var isAvailable: Bool { FileManager.default.fileExists(atPath: "/proc/self/exe") }

    var isRunning: Bool { process.isRunning }

    /// Whether the child ended by a signal (the suites' `SIGKILL`), not by exiting.
    var wasKilled: Bool { process.terminationReason == .uncaughtSignal }

    var terminationStatus: Int32 { process.terminationStatus }

    /// `SIGKILL`: the child gets no chance to finish anything it started.
    func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
    }

    /// Waits until the child has ended, then closes its output file.
    func waitUntilExit() {
        process.waitUntilExit()
        try? output.close()
    }

    /// Everything the child printed so far.
    var printed: String { Self.contents(of: outputPath) }

    /// Whether the child has announced `phase` so far.
    func hasAnnounced(_ phase: String) -> Bool {
        printed.split(separator: "\n").contains { Self.phase(of: $0) == phase }
    }

    /// The phase the child announced last, or `start-up` before its first announcement.
    var lastPhase: String {
        printed.split(separator: "\n").lazy.reversed().compactMap(Self.phase(of:)).first ?? "start-up"
    }

    /// The phase a line of output announces: its first word after the prefix, up to a space or
    /// comma (`save 12` is `save`, `opened, …` is `opened`); `nil` for other lines.
    private static func phase(of line: Substring) -> String? {
        guard line.hasPrefix(phasePrefix) else { return nil }
        return String(line.dropFirst(phasePrefix.count).prefix { $0 != " " && $0 != "," })
    }

    /// The lines of a child's report file so far; none while it does not exist.
    static func reportLines(_ path: String) -> [Substring] {
        contents(of: path).split(separator: "\n")
    }

    private static func contents(of path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    // MARK: - The child's side

    /// In the child: announces `phase` on standard output, unbuffered, so the parent knows where
    /// its kill lands.
    static func announce(_ phase: String) {
        FileHandle.standardOutput.write(Data("\(phasePrefix)\(phase)\n".utf8))
    }

    /// In the child: the report file, which the parent reads after the kill.
    final class Report {
        private let descriptor: Int32

        /// Opens `path` to append to, creating it; `nil` where it cannot be opened.
        init?(path: String) {
            descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { return nil }
        }

        deinit { _ = Glibc.close(descriptor) }

        /// Appends `line` and a newline with one write(2): a kill lands before or after it, never
        /// inside. Returns whether the whole line was written.
        func append(_ line: String) -> Bool {
            let bytes = Array("\(line)\n".utf8)
            return bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
        }
    }
}
