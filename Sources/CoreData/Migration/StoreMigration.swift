import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataFileSystem
import CoreDataModel
import CoreDataXMLFormat
import Foundation

/// The file work of a migration: staging files beside the store, and installing one in its
/// place (`Formats/migration.md`).
package enum StoreMigration {
    /// The suffix of the n-th staging store beside a store (0: a replacement copy); §2.
    static func stagingSuffix(_ step: Int) -> String { ".migrating-\(step)" }

    /// Removes a store file and its side files (`-wal`, `-shm`, an XML store's pending copy).
    static func removeFiles(of path: String, in fileSystem: any StoreFileSystem) throws {
        for file in [path, path + "-wal", path + "-shm", path + XMLStoreLayout.pendingFileSuffix] where fileSystem.fileExists(file) {
            do {
                try fileSystem.remove(file)
            } catch {
                throw coreDataError(NSMigrationError, "cannot remove \(file): \(error)")
            }
        }
        do {
            try BinaryStore.removeExternalData(store: path, fileSystem: fileSystem)
        } catch {
            throw coreDataError(NSMigrationError, "cannot remove the external data of \(path): \(error)")
        }
    }

    /// Puts the complete, closed store at `staging` in place of the store at `path` (§3 step 4).
    ///
    /// Crash-safe: the staged file is synced first; the old store's log (which must hold no
    /// frames: it was checkpointed) is removed and the folder synced; then one rename swaps the
    /// data file and the folder is synced again. A crash leaves the old store or the new one.
    /// A staged binary store's log holds only its header after a clean close and is dropped
    /// unless `keepingStagedLog` (a copied store may have frames in it).
    static func install(_ staging: String, at path: String, keepingStagedLog: Bool, in fs: any StoreFileSystem) throws {
        do throws(StoreIOError) {
            let file = try fs.open(staging, create: false, readOnly: false)
            defer { file.close() }
            try file.sync()
            if fs.fileExists(path + "-wal") {
                let log = try fs.open(path + "-wal", create: false, readOnly: true)
                let size = try log.size()
                log.close()
                guard size <= UInt64(LogLayout.firstFrameOffset) else {
                    throw StoreIOError(operation: "install", path: path + "-wal", code: 0, reason: "the store's log still holds \(size) bytes of saves; it was not checkpointed")
                }
            }
            if fs.fileExists(staging + "-wal") {
                if keepingStagedLog {
                    let log = try fs.open(staging + "-wal", create: false, readOnly: false)
                    try log.sync()
                    log.close()
                } else {
                    try fs.remove(staging + "-wal")
                }
            }
            if fs.fileExists(path + "-wal") { try fs.remove(path + "-wal") }
            if fs.fileExists(path + XMLStoreLayout.pendingFileSuffix) { try fs.remove(path + XMLStoreLayout.pendingFileSuffix) }
            try fs.syncDirectory(containing: path)
            // The staged store's external files join the store's before its data file names them.
            try BinaryStore.moveExternalData(fromStore: staging, toStore: path, fileSystem: fs)
            try fs.rename(staging, to: path)
            if keepingStagedLog, fs.fileExists(staging + "-wal") { try fs.rename(staging + "-wal", to: path + "-wal") }
            // The staged store's shared counters are hints of a closed store (Formats/wal.md §9).
            if fs.fileExists(staging + "-shm") { try fs.remove(staging + "-shm") }
            try fs.syncDirectory(containing: path)
        } catch {
            throw coreDataError(NSMigrationError, "cannot install the migrated store at \(path): \(error)")
        }
    }

    /// Every version of the model package `model` was loaded from, in version order, then the
    /// packages among the main bundle's resources; empty when the model came from elsewhere.
    /// Where mapping model files for `model`'s versions are looked for: the folder of the
    /// model's `.xcdatamodeld` (Xcode projects keep `.xcmappingmodel` files beside it) and the
    /// main bundle's resources (where Apple looks for `.cdm` files).
    package static func mappingFolders(of model: NSManagedObjectModel) -> [URL] {
        var folders: [URL] = []
        if let package = model.versionPackageURL { folders.append(package.deletingLastPathComponent()) }
        if let resources = Bundle.main.resourceURL { folders.append(resources) }
        return folders
    }

    package static func knownVersions(of model: NSManagedObjectModel) -> [(name: String, model: NSManagedObjectModel)] {
        var packages: [URL] = []
        if let url = model.versionPackageURL { packages.append(url) }
        if let resources = Bundle.main.resourceURL, let names = try? FileManager.default.contentsOfDirectory(atPath: resources.path) {
            for name in names.sorted() where name.hasSuffix(".xcdatamodeld") || name.hasSuffix(".momd") {
                let url = resources.appendingPathComponent(name)
                if !packages.contains(where: { $0.standardizedFileURL == url.standardizedFileURL }) { packages.append(url) }
            }
        }
        var versions: [(name: String, model: NSManagedObjectModel)] = []
        for url in packages {
            guard let package = try? XcodeModelPackage(contentsOf: url) else { continue }
            for name in package.versionNames {
                if let version = try? package.loadModel(version: name) {
                    try? version.freeze()
                    versions.append((name, version))
                }
            }
        }
        return versions
    }
}
