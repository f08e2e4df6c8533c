import CoreDataBinaryFormat
import CoreDataFileSystem
import CoreDataStorage

extension BinaryStore {
    /// Deletes the store at `path` and every file beside it (`-wal`, `-shm`, the `-external`
    /// folder of external binary data, and what a compaction or creation a crash cut short
    /// left), as `destroyPersistentStore` does.
    ///
    /// It takes the log's write lock first, as a save does (Formats/wal.md §9), so no save,
    /// checkpoint or compaction of another process is cut in half, and it refuses a store that a
    /// handle still has open (every open handle holds a lock on the data file): deleting the
    /// files under it would let that handle go on saving into files no one can open again.
    ///
    /// - Throws: ``StoreError/io(detail:)`` with a lock conflict when the store is open or its
    ///   write lock is held past ``BinaryStoreOptions/lockTimeout``, or when a file cannot be removed.
    public static func destroy(path: String, options: BinaryStoreOptions = BinaryStoreOptions()) throws(StoreError) {
        let fs = options.fileSystem
        let beside = ["-wal", "-shm", "-compact", "-creating"].map { path + $0 }
        guard ([path, ExternalDataLayout.folder(ofStore: path)] + beside).contains(where: { fs.fileExists($0) }) else { return }
        let log = try lockedFile(path + "-wal", options: options, permissionsOf: path)
        defer {
            log.unlock()
            log.close()
        }
        var dataFile: (any StoreFile)?
        defer {
            dataFile?.unlock()
            dataFile?.close()
        }
        do {
            if fs.fileExists(path) {
                let file = try fs.open(path, create: false, readOnly: true)
                dataFile = file
                guard try file.lock(exclusive: true, wait: false) else {
                    throw StoreError.io(detail: "the store at \(path) \(lockConflictPhrase) (a handle has it open; close it before destroying the store)")
                }
            }
            // The data file first: without it, what is left is never taken for a store.
            for file in [path] + beside where fs.fileExists(file) { try fs.remove(file) }
            try removeExternalData(store: path, fileSystem: fs)
            try fs.syncDirectory(containing: path)
        } catch let error as StoreError {
            throw error
        } catch let error as StoreIOError {
            throw ioError(error)
        } catch {
            throw .io(detail: "\(error)")
        }
    }
}
