#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The PostgreSQL server the tests of the PostgreSQL store run against.
///
/// `COREDATA_POSTGRES_URL` names it when set (`.ci/test.sh` starts one with `.ci/postgres.sh` and
/// sets it). Otherwise the first use starts a throwaway server for this test process with
/// `.ci/postgres.sh start` (found beside this file), and the process stops it when it exits: an
/// `atexit` handler, and the script's watcher of this process should it crash first. With
/// `COREDATA_REQUIRE_POSTGRES=1` set and no URL, no server is started: CI must run on the one
/// it started itself.
///
/// Tests that need the server fail, never skip, when there is none: ``requireFreshSchemaURL()``
/// throws the reason, and XCTest reports a thrown error as the test's failure.
///
/// Thread safety: any thread; the server is looked for once per process, the first caller waits
/// for it (a cluster starts in 1–3 s; the first start on a machine without PostgreSQL installs it).
package enum PostgreSQLTestServer {
    /// Why there is no server: the error the `require` calls throw.
    package struct Unavailable: Error, CustomStringConvertible {
        /// What went wrong, with what the script printed.
        package var reason: String
        package var description: String { "no PostgreSQL server for the tests: \(reason)" }

        package init(reason: String) { self.reason = reason }
    }

    /// The server's URL (`postgres://user@host:port/database`), or nil when none can be had
    /// (``unavailableReason`` says why).
    package static var url: URL? { server.url }

    /// Why ``url`` is nil; nil when there is a server.
    package static var unavailableReason: String? { server.reason }

    /// The server's URL with a schema of its own (`?schema=t_<16 hex digits>`), so that tests do
    /// not see each other's tables; the store creates the schema when it first opens. Nil when
    /// there is no server.
    package static func freshSchemaURL() -> URL? {
        guard let url else { return nil }
        return withSchema(url, "t_" + randomHex())
    }

    /// The server's URL, or the reason there is none, thrown as ``Unavailable``.
    package static func require() throws -> URL {
        guard let url else { throw Unavailable(reason: unavailableReason ?? "unknown") }
        return url
    }

    /// ``freshSchemaURL()``, or the reason there is no server, thrown as ``Unavailable``.
    package static func requireFreshSchemaURL() throws -> URL {
        withSchema(try require(), "t_" + randomHex())
    }

    // MARK: - Finding or starting the server

    private struct Server: Sendable {
        var url: URL?
        var reason: String?
        /// Set when this process started the server: the script and its state folder, to stop it.
        var owned: (script: String, stateDirectory: String)?
    }

    /// Looked for once: Swift runs a static's initializer exactly once, and other threads wait.
    private static let server: Server = find()

    private static func find() -> Server {
        let environment = ProcessInfo.processInfo.environment
        if let given = environment["COREDATA_POSTGRES_URL"], !given.isEmpty {
            guard let url = URL(string: given), let scheme = url.scheme, scheme.hasPrefix("postgres") else {
                return Server(reason: "COREDATA_POSTGRES_URL is not a postgres:// URL: \(given)")
            }
            return Server(url: url)
        }
        if environment["COREDATA_REQUIRE_POSTGRES"] == "1" {
            return Server(reason: "COREDATA_REQUIRE_POSTGRES=1 but COREDATA_POSTGRES_URL is not set (.ci/test.sh sets both)")
        }
        return start()
    }

    /// `#filePath` is `<package>/Tests/CoreDataTestSupport/PostgreSQLTestServer.swift`.
    private static func scriptPath(file: String = #filePath) -> String {
        URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".ci").appendingPathComponent("postgres.sh").path
    }

    private static func start() -> Server {
        let script = scriptPath()
        guard FileManager.default.fileExists(atPath: script) else {
            return Server(reason: "COREDATA_POSTGRES_URL is not set and \(script) is missing to start a server")
        }
        // A state folder of this process's own: its server is nobody else's to reuse or stop.
        let stateDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("coredata-postgres-test-\(getpid())-\(randomHex())").path
        let output = stateDirectory + "/start.log"
        do {
            try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: output, contents: nil) else {
                return Server(reason: "cannot create \(output)")
            }
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            defer { try? log.close() }
            let stdout = Pipe()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["bash", script, "start"]
            var processEnvironment = ProcessInfo.processInfo.environment
            processEnvironment["COREDATA_POSTGRES_STATE"] = stateDirectory
            processEnvironment["COREDATA_POSTGRES_OWNER_PID"] = String(getpid())
            processEnvironment["COREDATA_POSTGRES_STATE_PRIVATE"] = "1"
            process.environment = processEnvironment
            process.standardOutput = stdout
            // A file, not a pipe: setup may print more than a pipe holds while stdout is read.
            process.standardError = log
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let printed = stdout.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let messages = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if !messages.isEmpty { FileHandle.standardError.write(Data(messages.utf8)) }
            let text = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard process.terminationStatus == 0, let url = URL(string: text), url.scheme == "postgres" else {
                try? FileManager.default.removeItem(atPath: stateDirectory)
                let tail = messages.split(separator: "\n").suffix(8).joined(separator: "\n")
                return Server(reason: "COREDATA_POSTGRES_URL is not set and `bash .ci/postgres.sh start` failed (status \(process.terminationStatus)): \(tail)")
            }
            atexit { PostgreSQLTestServer.stopOwnedServer() }
            return Server(url: url, owned: (script, stateDirectory))
        } catch {
            try? FileManager.default.removeItem(atPath: stateDirectory)
            return Server(reason: "COREDATA_POSTGRES_URL is not set and `bash .ci/postgres.sh start` could not run: \(error)")
        }
    }

    /// Runs at exit: stops the server this process started and removes its state folder.
    /// posix_spawn rather than Foundation's Process, which needs a run loop this late.
    private static func stopOwnedServer() {
        guard let owned = server.owned else { return }
        let arguments = [
            "bash", "-c", "COREDATA_POSTGRES_STATE=\"$1\" bash \"$0\" stop >/dev/null 2>&1; rm -rf \"$1\"",
            owned.script, owned.stateDirectory,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["COREDATA_POSTGRES_OWNER_PID"] = nil
        environment["COREDATA_POSTGRES_STATE_PRIVATE"] = nil
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        guard posix_spawnp(&pid, "bash", nil, nil, argv, envp) == 0 else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    }

    // MARK: - URLs

    private static func withSchema(_ url: URL, _ schema: String) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "schema" } + [URLQueryItem(name: "schema", value: schema)]
        return components.url ?? url
    }

    private static func randomHex() -> String {
        let value = UInt64.random(in: .min ... .max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
