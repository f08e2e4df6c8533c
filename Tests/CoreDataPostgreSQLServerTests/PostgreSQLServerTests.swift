import CoreDataTestSupport
import Foundation
import PostgresNIO
import XCTest

/// The throwaway server the PostgreSQL store's tests run against (`.ci/postgres.sh`,
/// ``PostgreSQLTestServer``), checked with postgres-nio alone: a broken server shows here, apart
/// from the store's own failures. With no server these tests fail with the reason.
final class PostgreSQLServerTests: XCTestCase {
    func testServerIsPostgreSQL15OrLater() async throws {
        let url = try PostgreSQLTestServer.require()
        let version = try await withClient(url) { client in
            var version: Int?
            let rows = try await client.query("SELECT current_setting('server_version_num')::integer")
            for try await value in rows.decode(Int.self) { version = value }
            return version
        }
        // 15 is Debian 12's; the store relies on nothing older servers lack beyond it.
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(version), 150_000)
    }

    func testRowsRoundTripThroughATableInAFreshSchema() async throws {
        let url = try PostgreSQLTestServer.requireFreshSchemaURL()
        let schema = try XCTUnwrap(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
        XCTAssertTrue(schema.hasPrefix("t_"), schema)
        let rows = try await withClient(url) { client in
            try await client.query("CREATE SCHEMA \(unescaped: schema)")
            try await client.query("CREATE TABLE \(unescaped: schema).books (id integer PRIMARY KEY, title text NOT NULL, pages integer)")
            for (id, title, pages) in [(1, "Literate Programming", 368), (2, "Notes on the Analytical Engine", 66), (3, "Ünïcödé", 10)] {
                try await client.query("INSERT INTO \(unescaped: schema).books (id, title, pages) VALUES (\(id), \(title), \(pages))")
            }
            var read: [String] = []
            let result = try await client.query("SELECT id, title, pages FROM \(unescaped: schema).books WHERE pages > \(50) ORDER BY pages DESC")
            for try await (id, title, pages) in result.decode((Int, String, Int).self) { read.append("\(id) \(title) \(pages)") }
            try await client.query("DROP SCHEMA \(unescaped: schema) CASCADE")
            return read
        }
        XCTAssertEqual(rows, ["1 Literate Programming 368", "2 Notes on the Analytical Engine 66"])
    }

    func testEveryFreshSchemaURLNamesAnotherSchemaOnTheSameServer() throws {
        let server = try PostgreSQLTestServer.require()
        let first = try PostgreSQLTestServer.requireFreshSchemaURL()
        let second = try PostgreSQLTestServer.requireFreshSchemaURL()
        XCTAssertNotEqual(first, second)
        for url in [first, second] {
            XCTAssertEqual(url.host, server.host)
            XCTAssertEqual(url.port, server.port)
            XCTAssertEqual(url.path, server.path)
            XCTAssertNotNil(url.query?.range(of: #"^schema=t_[0-9a-f]{16}$"#, options: .regularExpression), url.absoluteString)
        }
    }

    /// Runs `body` with a client of the server at `url` (user, host, port and database from it;
    /// no password: the test server trusts local connections), running the client meanwhile.
    private func withClient<Result: Sendable>(_ url: URL, _ body: @Sendable (PostgresClient) async throws -> Result) async throws -> Result {
        guard let host = url.host, let user = url.user else {
            throw PostgreSQLTestServer.Unavailable(reason: "the server's URL has no host or user: \(url)")
        }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        let configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password, database: database.isEmpty ? nil : database, tls: .disable)
        let client = PostgresClient(configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
