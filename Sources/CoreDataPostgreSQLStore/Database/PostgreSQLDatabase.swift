import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// The store's connection pool (postgres-nio's `PostgresClient`) and the SQL it runs.
///
/// Every connection's `search_path` is the store's schema, so the layout's bare table names
/// (`ZPERSON`) resolve there (`Formats/postgresql-store.md` §1).
///
/// Threading: safe from any thread; statements run on pooled connections, a transaction on one.
final class PostgreSQLDatabase: @unchecked Sendable {
    let configuration: PostgreSQLStoreConfiguration
    let bridge = BlockingBridge()
    private let client: PostgresClient
    private let runTask: Task<Void, Never>
    /// postgres-nio's log: errors only, as the store reports its own failures as errors.
    private static let logger: Logger = {
        var logger = Logger(label: "CoreDataPostgreSQL")
        logger.logLevel = .error
        return logger
    }()

    init(configuration: PostgreSQLStoreConfiguration) throws(PostgreSQLStoreError) {
        self.configuration = configuration
        var settings: PostgresClient.Configuration
        if let socket = configuration.unixSocketPath {
            settings = .init(unixSocketPath: socket, username: configuration.username, password: configuration.password, database: configuration.database)
        } else {
            let tls: PostgresClient.Configuration.TLS
            switch configuration.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(.makeClientConfiguration())
            case .require: tls = .require(.makeClientConfiguration())
            }
            settings = .init(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: tls)
        }
        settings.options.maximumConnections = max(1, configuration.maximumConnections)
        settings.options.connectTimeout = .milliseconds(Int64(max(0.1, configuration.connectTimeout) * 1000))
        settings.options.additionalStartupParameters = [("search_path", configuration.schema), ("application_name", "CoreData")]
        let client = PostgresClient(configuration: settings, backgroundLogger: Self.logger)
        self.client = client
        runTask = bridge.start { await client.run() }
    }

    /// Waits for the server to answer, at most the connect timeout (and a second): the pool
    /// itself keeps retrying a server that does not answer for a minute.
    func checkReachable() throws {
        try bridge.run(timeout: configuration.connectTimeout + 1) { _ = try await self.query("SELECT 1") }
    }

    /// Listens on `channel` on one pooled connection until the task is cancelled, calling
    /// `onChange` for each notification; signals `ready` once the server registered the listener.
    /// A lost connection is listened on again after a second.
    func listen(channel: String, ready: DispatchSemaphore, _ onChange: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        bridge.start { [client] in
            var signalled = false
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await connection.listen(on: channel) { notifications in
                            if !signalled {
                                signalled = true
                                ready.signal()
                            }
                            for try await _ in notifications { onChange() }
                        }
                    }
                } catch {
                    if Task.isCancelled { break }
                    try? await Task.sleep(nanoseconds: 1_000_000_000)
                }
            }
            if !signalled { ready.signal() }
        }
    }

    /// Stops the pool; later statements fail.
    func shutDown() {
        runTask.cancel()
    }

    /// `sql` with its `?` parameters numbered `$1`, `$2`, … in order, as PostgreSQL writes them.
    /// Generated SQL holds no string literals, so every `?` is a parameter.
    static func numbered(_ sql: String) -> String {
        guard sql.contains("?") else { return sql }
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var next = 1
        for character in sql {
            if character == "?" {
                result += "$\(next)"
                next += 1
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// Runs one statement outside a transaction and returns its rows.
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> [PostgresRow] {
        let sequence = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: Self.logger)
        var rows: [PostgresRow] = []
        for try await row in sequence { rows.append(row) }
        return rows
    }

    /// Runs `body` in one transaction on one connection: committed when it returns, rolled back
    /// when it throws.
    func transaction<T: Sendable>(_ body: @Sendable (PostgreSQLTransaction) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            let transaction = PostgreSQLTransaction(connection: connection, logger: Self.logger)
            try await transaction.run("BEGIN")
            do {
                let result = try await body(transaction)
                try await transaction.run("COMMIT")
                return result
            } catch {
                // A failed connection rolls back by itself; the original error is the one to report.
                _ = try? await transaction.run("ROLLBACK")
                throw error
            }
        }
    }
}

/// Statements of one transaction, on its connection.
struct PostgreSQLTransaction: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    /// Runs one statement and returns its rows.
    @discardableResult
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> [PostgresRow] {
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).get().rows
    }

    /// Runs one statement and returns how many rows it changed (its command tag's count).
    @discardableResult
    func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> Int {
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).get().metadata.rows ?? 0
    }
}
