import CoreDataSQL
import CoreDataStorage
import Foundation

/// Where a PostgreSQL store lives and how to reach it (`Formats/postgresql-store.md` §1), read from
/// the store's URL and options.
///
/// The URL is libpq's: `postgres://user[:password]@host[:port]/database?schema=name`, with
/// `postgresql://` as well; `host=/path` in the query names a Unix socket folder (the socket is
/// `/path/.s.PGSQL.<port>`). `sslmode` is `disable` (the default), `prefer` or `require`.
///
/// Credentials never appear in ``description`` or in an error: ``redactedURL`` leaves the
/// password out.
public struct PostgreSQLStoreConfiguration: Sendable, CustomStringConvertible {
    /// How the connections are encrypted.
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    /// A Unix socket's path, used instead of `host` and `port` when set.
    public var unixSocketPath: String?
    public var username: String
    public var password: String?
    public var database: String
    /// The PostgreSQL schema (namespace) holding the store's tables; created at first open.
    public var schema: String
    public var tls: TLSMode = .disable
    /// The most connections the store's pool opens.
    public var maximumConnections = 8
    /// How long opening a connection may take, in seconds.
    public var connectTimeout = 10.0
    /// Whether the store refuses saves.
    public var readOnly = false
    /// How many times a save that PostgreSQL aborted for a deadlock or a serialization failure
    /// is run again before its error is reported.
    public var saveRetries = 3

    /// The default schema: PostgreSQL's own.
    public static let defaultSchema = "public"

    /// Reads a store URL.
    ///
    /// - Throws: ``PostgreSQLStoreError`` naming what is wrong (scheme, user, database, schema,
    ///   port or `sslmode`), with the URL's password left out.
    public init(url: URL) throws(PostgreSQLStoreError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw PostgreSQLStoreError("a PostgreSQL store needs a postgres:// URL; got \(Self.redacted(url))")
        }
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        guard let user = components.user, !user.isEmpty else {
            throw PostgreSQLStoreError("the store URL \(Self.redacted(url)) names no user (postgres://user@host/database)")
        }
        username = user.removingPercentEncoding ?? user
        password = components.password.map { $0.removingPercentEncoding ?? $0 }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.isEmpty, !path.contains("/") else {
            throw PostgreSQLStoreError("the store URL \(Self.redacted(url)) names no database (postgres://user@host/database)")
        }
        database = path.removingPercentEncoding ?? path
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw PostgreSQLStoreError("the store URL \(Self.redacted(url)) has port \(port)") }
        self.port = port
        let socketFolder = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? (socketFolder == nil ? "localhost" : "")
        unixSocketPath = socketFolder.map { "\($0)/.s.PGSQL.\(port)" }
        let schema = query["schema"] ?? Self.defaultSchema
        guard Self.isIdentifier(schema) else {
            throw PostgreSQLStoreError("the schema '\(schema)' in \(Self.redacted(url)) is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*, at most 63 characters)")
        }
        self.schema = schema
        if let mode = query["sslmode"] {
            guard let tls = TLSMode(rawValue: mode) else {
                throw PostgreSQLStoreError("sslmode '\(mode)' in \(Self.redacted(url)) is none of disable, prefer, require")
            }
            self.tls = tls
        }
        redactedURL = Self.redacted(url)
    }

    /// The URL without its password, for messages.
    public let redactedURL: String

    public var description: String { redactedURL }

    /// Whether `name` is a schema name written into SQL without quotes: a store's tables are
    /// found through the connection's `search_path`.
    static func isIdentifier(_ name: String) -> Bool {
        name.utf8.count <= 63 && SQLSchema.isIdentifier(name)
    }

    /// `url` with its password replaced by `***`.
    public static func redacted(_ url: URL) -> String { url.passwordRedacted }
}

/// A PostgreSQL store URL or option that cannot be used, or a server that refused.
public struct PostgreSQLStoreError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
