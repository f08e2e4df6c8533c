import CoreDataBinaryFormat
import CoreDataFileSystem
import CoreDataModel
import CoreDataPageCodec
import CoreDataStorage
import Crypto
import Foundation

/// External binary data (Formats/binary-store.md §15): large values of attributes that allow
/// external storage live in files of `NAME-external/`, named by their SHA-256 digest.
///
/// The files are immutable. A save writes and syncs its files, and syncs the folder, before its
/// log frames are queued, so a durable frame never names a file that is not durable; a crash in
/// between leaves only files nothing names. Files are removed only by compaction, and only when
/// no other handle has the store open, so every reader of any state (a snapshot, an older log
/// position of another process) finds the files its records name.
extension BinaryStore {
    /// The store's external-data folder.
    public var externalDataFolder: String { ExternalDataLayout.folder(ofStore: path) }

    /// Per entity name, the attributes whose values may be stored externally (binary data and
    /// transformable attributes with `allowsExternalBinaryDataStorage`).
    static func externalAttributes(of model: NSManagedObjectModel) -> [String: Set<String>] {
        var found: [String: Set<String>] = [:]
        for (name, entity) in model.entitiesByName {
            let names = entity.attributesByName.values.filter {
                $0.allowsExternalBinaryDataStorage && ($0.attributeType == .binaryDataAttributeType || $0.attributeType == .transformableAttributeType)
            }.compactMap(\.name)
            if !names.isEmpty { found[name] = Set(names) }
        }
        return found
    }

    /// Writes the file of every value of `changes` that goes outside its record (§15.2) and
    /// returns the references, by object and slot. Caller holds `commitLock` and, when sharing,
    /// the log's write lock, so no compaction removes a file between here and the commit.
    ///
    /// Complexity: one SHA-256 and XXH3 pass over each large value; a file is written only when
    /// no file has its digest yet (a save that keeps a value writes nothing for it).
    /// - Throws: ``StoreError/io(detail:)`` when a file or the folder cannot be written or
    ///   synced. Nothing is queued then; files already written are unreferenced and compaction
    ///   removes them.
    func writeExternalValues(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: [Int: ExternalDataReference]] {
        guard !externalAttributes.isEmpty, header.formatVersion >= ExternalDataLayout.firstFormatVersion else { return [:] }
        var references: [StoreObjectID: [Int: ExternalDataReference]] = [:]
        var lastPath: String?
        do {
            for row in changes.inserted + changes.updated {
                guard let names = externalAttributes[row.objectID.entityName] else { continue }
                for (slot, name) in row.layout.names.enumerated() where names.contains(name) {
                    guard slot < row.slots.count, case .data(let value)? = row.slots[slot], value.count >= ExternalDataLayout.threshold else { continue }
                    if lastPath == nil { try makeExternalDataFolder() }
                    let reference = Self.externalReference(to: value)
                    let file = ExternalDataLayout.path(of: reference, store: path)
                    if !fileSystem.fileExists(file) { try writeExternalFile(value, at: file) }
                    references[row.objectID, default: [:]][slot] = reference
                    lastPath = file
                }
            }
            // One folder sync for the save's new names.
            if let lastPath { try fileSystem.syncDirectory(containing: lastPath) }
        } catch {
            // Poisoned as after any failed write or sync (the handle's contract): after a failed
            // sync the kernel may have dropped the file's or folder's pages and reports the next
            // sync clean, so a later save could name a file, or rely on a folder entry, that
            // would not survive a power loss.
            let failure = StoreError.io(detail: "the save's external data could not be written, so nothing was saved: \(error)")
            group.lock()
            if poisoned == nil { poisoned = failure }
            group.unlock()
            throw failure
        }
        return references
    }

    /// The reference a value gets when it is stored externally (§15.1): its length, XXH3-64
    /// checksum and SHA-256 digest, which names its file.
    ///
    /// Complexity: one pass of each hash over the value.
    public static func externalReference(to value: Data) -> ExternalDataReference {
        let checksum = value.withUnsafeBytes { PageChecksum.xxh3($0) }
        return ExternalDataReference(length: UInt64(value.count), checksum: checksum, digest: Array(SHA256.hash(data: value)))
    }

    /// Makes the folder, durably, when it is missing.
    private func makeExternalDataFolder() throws(StoreIOError) {
        guard !fileSystem.fileExists(externalDataFolder) else { return }
        try fileSystem.createDirectory(externalDataFolder, permissionsOf: path)
        try fileSystem.syncDirectory(containing: externalDataFolder)
    }

    /// Writes `value` under a temporary name, syncs it, and renames it to `path`: a file with a
    /// value's name is always whole.
    private func writeExternalFile(_ value: Data, at path: String) throws(StoreIOError) {
        let temporary = path + ExternalDataLayout.temporarySuffix
        if fileSystem.fileExists(temporary) { try fileSystem.remove(temporary) }
        let file = try fileSystem.openOwnFile(temporary, creation: .exclusive, readOnly: false, permissionsOf: self.path)
        defer { file.close() }
        try file.write([UInt8](value), at: 0)
        try file.sync()
        try fileSystem.rename(temporary, to: path)
    }

    /// Reads and checks the file `reference` names; what the record decoders call for tag 13.
    func loadExternalValue(_ reference: ExternalDataReference) throws(BinaryFormatError) -> Data {
        try Self.loadExternalValue(reference, store: path, fileSystem: fileSystem)
    }

    /// The loader the record decoders of the store at `path` use.
    static func externalLoader(store path: String, fileSystem: any StoreFileSystem) -> ExternalDataLoader {
        { (reference: ExternalDataReference) throws(BinaryFormatError) -> Data in
            try loadExternalValue(reference, store: path, fileSystem: fileSystem)
        }
    }

    /// Reads the file `reference` names in the external-data folder of the store at `store`.
    ///
    /// - Throws: ``BinaryFormatError`` naming the file when it is missing, cannot be read, or
    ///   does not hold the value (length or checksum).
    static func loadExternalValue(_ reference: ExternalDataReference, store: String, fileSystem: any StoreFileSystem) throws(BinaryFormatError) -> Data {
        let location = ExternalDataLayout.path(of: reference, store: store)
        guard reference.length < UInt64(Int.max) else { throw BinaryFormatError(location, "the external data length \(reference.length) is out of range") }
        let file: any StoreFile
        do { file = try fileSystem.open(location, create: false, readOnly: true) } catch {
            throw BinaryFormatError(location, "the external data file is missing (\(error.reason))")
        }
        defer { file.close() }
        let bytes: [UInt8]
        do {
            // One byte more than the value: a longer file is damage too.
            bytes = try file.read(at: 0, count: Int(reference.length) + 1)
        } catch {
            throw BinaryFormatError(location, "the external data file cannot be read: \(error)")
        }
        guard bytes.withUnsafeBytes({ reference.matches($0) }) else {
            throw BinaryFormatError(location, "the external data file is damaged: \(bytes.count > Int(reference.length) ? "longer than" : bytes.count < Int(reference.length) ? "shorter than" : "its checksum does not match") the \(reference.length) bytes its record names")
        }
        return Data(bytes)
    }

    /// The names of the files in the external-data folder of the store at `store` (value files
    /// and temporary ones), by name.
    static func externalFiles(store: String, fileSystem: any StoreFileSystem) -> [String] {
        let prefix = ExternalDataLayout.folder(ofStore: store) + "/"
        return fileSystem.paths(startingWith: prefix).map { String($0.dropFirst(prefix.count)) }.filter { !$0.isEmpty && !$0.contains("/") }
    }

    /// Removes every file of the folder that no live record names (§15.3), after compaction
    /// installed a file holding only live records. Caller holds `commitLock` and knows no other
    /// handle has the store open.
    func removeUnreferencedExternalFiles(keeping referenced: Set<String>) throws(StoreError) {
        let names = Self.externalFiles(store: path, fileSystem: fileSystem)
        var removed: String?
        do {
            for name in names where !referenced.contains(name) {
                let file = externalDataFolder + "/" + name
                try fileSystem.remove(file)
                removed = file
            }
            if let removed { try fileSystem.syncDirectory(containing: removed) }
        } catch {
            throw .io(detail: "compaction finished, but unreferenced external data files could not be removed (the next compaction removes them): \(error)")
        }
    }

    /// Copies the external data files `names` (all of them when `nil`) of the store at `source`
    /// into the folder of the store at `destination`, each written under a temporary name, synced
    /// and renamed, then the folder synced: what a copy of the store file (`replacePersistentStore`,
    /// a migration's export) must have in place before the copy is installed. Files the
    /// destination has already are kept: equal names hold equal bytes.
    ///
    /// - Throws: ``StoreIOError`` when a file cannot be read, written or synced.
    public static func copyExternalData(
        fromStore source: String, toStore destination: String, names: Set<String>? = nil, fileSystem: any StoreFileSystem
    ) throws(StoreIOError) {
        let sourceFolder = ExternalDataLayout.folder(ofStore: source)
        let folder = ExternalDataLayout.folder(ofStore: destination)
        let wanted = (names.map(Array.init) ?? externalFiles(store: source, fileSystem: fileSystem)).filter(ExternalDataLayout.isValueFileName).sorted()
        guard !wanted.isEmpty else { return }
        if !fileSystem.fileExists(folder) {
            try fileSystem.createDirectory(folder, permissionsOf: destination)
            try fileSystem.syncDirectory(containing: folder)
        }
        for name in wanted where !fileSystem.fileExists(folder + "/" + name) {
            let input = try fileSystem.open(sourceFolder + "/" + name, create: false, readOnly: true)
            defer { input.close() }
            let bytes = try input.read(at: 0, count: Int(try input.size()))
            let temporary = folder + "/" + name + ExternalDataLayout.temporarySuffix
            if fileSystem.fileExists(temporary) { try fileSystem.remove(temporary) }
            let output = try fileSystem.openOwnFile(temporary, creation: .exclusive, readOnly: false, permissionsOf: destination)
            defer { output.close() }
            try output.write(bytes, at: 0)
            try output.sync()
            try fileSystem.rename(temporary, to: folder + "/" + name)
        }
        try fileSystem.syncDirectory(containing: folder + "/" + wanted[0])
    }

    /// Moves the external data files of the store at `source` into the folder of the store at
    /// `destination` and removes the source's folder: installing a staged store in place of
    /// another (a migration). Renames only, in one file system; the destination's folder is
    /// synced before the source's folder goes.
    ///
    /// - Throws: ``StoreIOError`` when a file cannot be moved.
    public static func moveExternalData(fromStore source: String, toStore destination: String, fileSystem: any StoreFileSystem) throws(StoreIOError) {
        let sourceFolder = ExternalDataLayout.folder(ofStore: source)
        guard fileSystem.fileExists(sourceFolder) else { return }
        let folder = ExternalDataLayout.folder(ofStore: destination)
        let names = externalFiles(store: source, fileSystem: fileSystem).filter(ExternalDataLayout.isValueFileName)
        if !names.isEmpty {
            if !fileSystem.fileExists(folder) {
                try fileSystem.createDirectory(folder, permissionsOf: destination)
                try fileSystem.syncDirectory(containing: folder)
            }
            for name in names {
                if fileSystem.fileExists(folder + "/" + name) {
                    try fileSystem.remove(sourceFolder + "/" + name)
                } else {
                    try fileSystem.rename(sourceFolder + "/" + name, to: folder + "/" + name)
                }
            }
            try fileSystem.syncDirectory(containing: folder + "/" + names[0])
        }
        try removeExternalData(store: source, fileSystem: fileSystem)
    }

    /// Removes the external-data folder of the store at `path` and every file in it.
    ///
    /// - Throws: ``StoreIOError`` when a file or the folder cannot be removed.
    public static func removeExternalData(store path: String, fileSystem: any StoreFileSystem) throws(StoreIOError) {
        let folder = ExternalDataLayout.folder(ofStore: path)
        guard fileSystem.fileExists(folder) else { return }
        for name in externalFiles(store: path, fileSystem: fileSystem) { try fileSystem.remove(folder + "/" + name) }
        try fileSystem.removeDirectory(folder)
    }
}
