@_spi(StoreEngines) import CoreData
import CoreDataPostgreSQLStore
import CoreDataStorage
import Foundation

/// Registers ``NSPostgreSQLStoreType``'s engine with Core Data. The coordinator finds this class
/// by name the first time it meets the type, so an app only links this product; nothing calls it.
final class PostgreSQLStoreEngines: StoreEngineRegistering {
    static func registerStoreEngines() {
        NSPersistentStoreCoordinator.registerStoreEngine(
            StoreEngineProvider(
                open: { model, url, options, metadata in
                    let configuration = try PostgreSQLStoreOptions.configuration(url, options)
                    return try mapped { () throws(StoreError) in try PostgreSQLStore(configuration: configuration, model: model, metadata: metadata) }
                },
                metadata: { url, options in
                    let configuration = try PostgreSQLStoreOptions.configuration(url, options)
                    return try mapped { () throws(StoreError) in try PostgreSQLStore.metadata(configuration: configuration).values }
                },
                destroy: { url, options in
                    let configuration = try PostgreSQLStoreOptions.configuration(url, options)
                    try mapped { () throws(StoreError) in try PostgreSQLStore.destroy(configuration: configuration) }
                },
                staging: StoreEngineProvider.Staging(
                    url: { url, step in try PostgreSQLStoreOptions.stagingURL(url, step: step) },
                    install: { staging, url, options in
                        let from = try PostgreSQLStoreOptions.configuration(staging, options)
                        let to = try PostgreSQLStoreOptions.configuration(url, options)
                        try mapped { () throws(StoreError) in try PostgreSQLStore.install(staging: from, at: to) }
                    })),
            forStoreType: NSPostgreSQLStoreType)
    }

    /// Runs a store call, turning its ``StoreError`` into the `NSError` Core Data reports.
    private static func mapped<T>(_ body: () throws(StoreError) -> T) throws -> T {
        do { return try body() } catch {
            throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreOpenError, userInfo: [NSLocalizedDescriptionKey: error.description])
        }
    }
}
