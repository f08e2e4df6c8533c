import CoreData
import CoreDataPostgreSQLStore
import Foundation

/// Option key: how connections are encrypted, `"disable"` (the default), `"prefer"` or
/// `"require"`; the URL's `sslmode` says the same.
public let NSPostgreSQLTLSOption = "NSPostgreSQLTLSOption"
/// Option key: the most connections the store's pool opens (an `Int`, default 8).
public let NSPostgreSQLPoolSizeOption = "NSPostgreSQLPoolSizeOption"
/// Option key: how long opening a connection may take, in seconds (a `Double`, default 10).
public let NSPostgreSQLConnectTimeoutOption = "NSPostgreSQLConnectTimeoutOption"
/// Option key: the password, when the URL carries none (a `String`); never printed.
public let NSPostgreSQLPasswordOption = "NSPostgreSQLPasswordOption"

/// Reads a PostgreSQL store's URL and options.
enum PostgreSQLStoreOptions {
    static func configuration(_ url: URL?, _ options: [AnyHashable: Any]) throws -> PostgreSQLStoreConfiguration {
        guard let url else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreInvalidTypeError, userInfo: [
                NSLocalizedDescriptionKey: "a PostgreSQL store needs a URL: postgres://user@host:5432/database?schema=app",
            ])
        }
        var configuration: PostgreSQLStoreConfiguration
        do { configuration = try PostgreSQLStoreConfiguration(url: url) } catch {
            throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreInvalidTypeError, userInfo: [NSLocalizedDescriptionKey: error.description])
        }
        if let mode = options[NSPostgreSQLTLSOption] as? String {
            guard let tls = PostgreSQLStoreConfiguration.TLSMode(rawValue: mode) else {
                throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreInvalidTypeError, userInfo: [
                    NSLocalizedDescriptionKey: "\(NSPostgreSQLTLSOption) must be disable, prefer or require, not \(mode)",
                ])
            }
            configuration.tls = tls
        }
        if let size = options[NSPostgreSQLPoolSizeOption] as? Int { configuration.maximumConnections = max(1, size) }
        if let timeout = options[NSPostgreSQLConnectTimeoutOption] as? Double { configuration.connectTimeout = max(0.1, timeout) }
        if let timeout = options[NSPostgreSQLConnectTimeoutOption] as? Int { configuration.connectTimeout = max(0.1, Double(timeout)) }
        if let password = options[NSPostgreSQLPasswordOption] as? String { configuration.password = password }
        configuration.readOnly = (options[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        return configuration
    }

    /// The store URL of a migration's staging schema for step `step`: the store's schema name,
    /// cut to leave room, and `_migrating_<step>` (`Formats/postgresql-store.md` §10).
    static func stagingURL(_ url: URL, step: Int) throws -> URL {
        let configuration = try Self.configuration(url, [:])
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        let schema = String(configuration.schema.prefix(40)) + "_migrating_\(step)"
        var items = (components.queryItems ?? []).filter { $0.name != "schema" }
        items.append(URLQueryItem(name: "schema", value: schema))
        components.queryItems = items
        return components.url ?? url
    }
}
