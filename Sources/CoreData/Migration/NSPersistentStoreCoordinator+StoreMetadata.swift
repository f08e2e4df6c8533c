import CoreDataBinaryStore
import CoreDataFileSystem
import CoreDataModel
import CoreDataSQLiteStore
import CoreDataStorage
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation

extension NSPersistentStoreCoordinator {
    /// The metadata of the store at `url`, read without a model and without changing the file:
    /// `NSStoreUUIDKey`, `NSStoreTypeKey`, `NSStoreModelVersionHashes` and the app's own entries.
    ///
    /// The usual "does this store need migration?" check is
    /// `model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)`.
    ///
    /// - Throws: `NSFileReadNoSuchFileError` (260) when no file is there; the store's open errors
    ///   (`NSPersistentStoreInvalidFileError` for a damaged file); `NSPersistentStoreInvalidTypeError`
    ///   for a type without files (in-memory) or a custom store class.
    /// Threading: safe from any thread. Complexity: a binary store reads its header pages and
    /// replays its log; an XML store parses the whole file.
    public class func metadataForPersistentStore(ofType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        if let provider = StoreTypeRegistry.provider(for: storeType) { return try provider.metadata(url, options ?? [:]) }
        let fileSystem = PrivateStoreOption.fileSystem(options)
        guard fileSystem.fileExists(url.path) else {
            throw coreDataError(NSFileReadNoSuchFileError, "no store file at \(url.path)", [NSFilePathErrorKey: url.path])
        }
        switch storeType {
        case NSAppleSQLiteStoreType:
            return try mapStoreError { () throws(StoreError) -> [String: Any] in try AppleSQLiteStore.metadata(atPath: url.path).values }
        case NSSQLiteStoreType where StoreTypeRegistry.holdsAppleSQLiteStore(url):
            return try mapStoreError { () throws(StoreError) -> [String: Any] in try AppleSQLiteStore.metadata(atPath: url.path).values }
        case NSBinaryStoreType, NSSQLiteStoreType:
            return try mapStoreError { () throws(StoreError) -> [String: Any] in
                var settings = BinaryStoreOptions()
                settings.fileSystem = fileSystem
                settings.readOnly = true
                let store = try BinaryStore(path: url.path, model: emptyModel, metadata: StoreMetadata(), options: settings)
                defer { try? store.close() }
                return try store.metadata().values
            }
        case NSXMLStoreType:
            return XMLStoreSchema.storeMetadata(of: try readXMLDocument(at: url, in: fileSystem).info).values
        default:
            throw coreDataError(NSPersistentStoreInvalidTypeError, "cannot read the metadata of a store of type '\(storeType)' without adding it")
        }
    }

    /// Apple's `StoreType`-spelled ``metadataForPersistentStore(ofType:at:options:)``.
    public class func metadataForPersistentStore(type storeType: NSPersistentStore.StoreType, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        try metadataForPersistentStore(ofType: storeType.rawValue, at: url, options: options)
    }

    /// Replaces the metadata of the store at `url` without adding it; the store's own keys
    /// (`NSStoreUUIDKey`, `NSStoreTypeKey`, the version hashes) are kept when `metadata` leaves
    /// them out.
    ///
    /// - Throws: as ``metadataForPersistentStore(ofType:at:options:)``, and the store's write errors.
    public class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreOfType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil) throws {
        if StoreTypeRegistry.provider(for: storeType) != nil {
            throw coreDataError(
                NSPersistentStoreInvalidTypeError,
                "a \(storeType) store's metadata is set through a coordinator that added it (setMetadata(_:for:), then save)")
        }
        let fileSystem = PrivateStoreOption.fileSystem(options)
        guard fileSystem.fileExists(url.path) else {
            throw coreDataError(NSFileReadNoSuchFileError, "no store file at \(url.path)", [NSFilePathErrorKey: url.path])
        }
        func merged(_ current: StoreMetadata) -> StoreMetadata {
            var result = StoreMetadata()
            for key in [NSStoreUUIDKey, NSStoreTypeKey, NSStoreModelVersionHashesKey] { result[key] = current[key] }
            for (key, value) in metadata ?? [:] { result[key] = value }
            return result
        }
        switch storeType {
        case NSBinaryStoreType, NSSQLiteStoreType:
            try mapStoreError { () throws(StoreError) in
                var settings = BinaryStoreOptions()
                settings.fileSystem = fileSystem
                let store = try BinaryStore(path: url.path, model: emptyModel, metadata: StoreMetadata(), options: settings)
                defer { try? store.close() }
                try store.setMetadata(merged(try store.metadata()))
            }
        case NSXMLStoreType:
            let described = XMLStoreDescribedModel.describe(try readXMLDocument(at: url, in: fileSystem))
            if let problem = described.problems.first {
                throw coreDataError(NSPersistentStoreInvalidFileError, "\(url.path): \(problem)")
            }
            try? described.model.freeze()
            try mapStoreError { () throws(StoreError) in
                var settings = XMLStoreOptions()
                settings.fileSystem = fileSystem
                let store = try XMLStore(path: url.path, model: described.model, metadata: StoreMetadata(), options: settings)
                defer { try? store.close() }
                try store.setMetadata(merged(try store.metadata()))
            }
        default:
            throw coreDataError(NSPersistentStoreInvalidTypeError, "cannot set the metadata of a store of type '\(storeType)' without adding it")
        }
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL` (Apple's
    /// `replacePersistentStore`): the destination's files are replaced by one atomic rename, the
    /// folder synced; the source stays. A missing destination is created.
    ///
    /// - Throws: `NSPersistentStoreOperationError` when either store is added to a coordinator
    ///   (remove it first) or a file operation fails.
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [AnyHashable: Any]? = nil, ofType storeType: String
    ) throws {
        guard storeType != NSInMemoryStoreType else { return }
        for url in [destinationURL, sourceURL] where persistentStore(for: url) != nil {
            throw coreDataError(NSPersistentStoreOperationError, "cannot replace a store while the store at \(url.path) is added to the coordinator")
        }
        let fileSystem = POSIXFileSystem()
        let staging = destinationURL.path + StoreMigration.stagingSuffix(0)
        try StoreMigration.removeFiles(of: staging, in: fileSystem)
        do {
            try FileManager.default.copyItem(atPath: sourceURL.path, toPath: staging)
            if FileManager.default.fileExists(atPath: sourceURL.path + "-wal") {
                try FileManager.default.copyItem(atPath: sourceURL.path + "-wal", toPath: staging + "-wal")
            }
            // Before the copy is installed: its records may name them (Formats/binary-store.md §15.4).
            try BinaryStore.copyExternalData(fromStore: sourceURL.path, toStore: destinationURL.path, fileSystem: fileSystem)
        } catch {
            try? StoreMigration.removeFiles(of: staging, in: fileSystem)
            throw coreDataError(NSPersistentStoreOperationError, "cannot copy the store at \(sourceURL.path): \(error)")
        }
        try StoreMigration.install(staging, at: destinationURL.path, keepingStagedLog: true, in: fileSystem)
    }

    /// Apple's `StoreType`-spelled ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)``.
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [AnyHashable: Any]? = nil, type storeType: NSPersistentStore.StoreType
    ) throws {
        try replacePersistentStore(
            at: destinationURL, destinationOptions: destinationOptions, withPersistentStoreFrom: sourceURL, sourceOptions: sourceOptions,
            ofType: storeType.rawValue)
    }

    private static var emptyModel: NSManagedObjectModel {
        let model = NSManagedObjectModel()
        try? model.freeze()
        return model
    }

    private static func readXMLDocument(at url: URL, in fileSystem: any StoreFileSystem) throws -> XMLStoreDocument {
        let reader = XMLStoreReader()
        do {
            let file = try fileSystem.open(url.path, create: false, readOnly: true)
            defer { file.close() }
            let size = try file.size()
            var offset: UInt64 = 0
            while offset < size {
                let chunk = try file.read(at: offset, count: Int(min(UInt64(XMLStoreLayout.readChunkSize), size - offset)))
                if chunk.isEmpty { break }
                try reader.feed(chunk)
                offset += UInt64(chunk.count)
            }
            return try reader.finish()
        } catch let error as XMLStoreError {
            throw coreDataError(NSPersistentStoreInvalidFileError, "\(url.path): \(error)")
        } catch {
            throw coreDataError(NSPersistentStoreOpenError, "cannot read the store at \(url.path): \(error)")
        }
    }
}
