import CoreData
import CoreDataBinaryStore
import CoreDataStorage

/// Opens binary stores for the commands: read-only for the commands that only read (a shared
/// lock, no write of any kind, no recovery in place), writable only for `checkpoint` and
/// `compact`. Never waits for another process's lock.
enum StoreAccess {
    /// Opens the binary store at `path` after checking it is one.
    ///
    /// - Parameters:
    ///   - model: the model to open it with; without one an empty model does, as the engine
    ///     needs a model only to create a store.
    ///   - writable: take the exclusive lock and allow checkpoints.
    ///   - salvaging: (read-only) open despite a synced log frame damaged in place, with the
    ///     saves before it.
    static func open(_ path: String, command: String, model: NSManagedObjectModel? = nil, writable: Bool = false, salvaging: Bool = false) throws(CLIError) -> BinaryStore {
        try StoreKind.requireBinary(path: path, command: command)
        var options = BinaryStoreOptions()
        options.readOnly = !writable
        options.salvagesDamagedLog = salvaging && !writable
        options.waitForLock = false
        options.backgroundCheckpoints = false
        do {
            return try BinaryStore(path: path, model: model ?? emptyModel, metadata: StoreMetadata(), options: options)
        } catch {
            throw CLIError.store(error, path: path)
        }
    }

    /// Closes a store, reporting a failure of the final checkpoint of a writable one.
    static func close(_ store: BinaryStore) throws(CLIError) {
        do { try store.close() } catch { throw CLIError.store(error, path: store.path) }
    }

    /// Runs `body` while holding a shared lock on the store file, as a read-only open would,
    /// without decoding anything: `verify` must read a store that does not open.
    static func withSharedLock<T>(_ path: String, command: String, _ body: () throws -> T) throws -> T {
        try StoreKind.requireBinary(path: path, command: command)
        let file: any StoreFile
        do { file = try POSIXFileSystem().open(path, create: false, readOnly: true) } catch {
            throw CLIError(.unreadable, "\(path) cannot be read: \(error.reason)")
        }
        defer { file.close() }
        let locked: Bool
        do { locked = try file.lock(exclusive: false, wait: false) } catch {
            throw CLIError(.unreadable, "\(path) cannot be locked: \(error.reason)")
        }
        guard locked else { throw CLIError.locked(path) }
        return try body()
    }

    /// Damage anywhere in the store, as `verify` finds it, as one failure naming the first
    /// damaged location: `dump` runs it first so it never prints records of a damaged store.
    ///
    /// `except` names a location already reported (the log frame a salvaging open stopped at).
    static func requireIntact(_ path: String, except known: String? = nil) throws(CLIError) {
        var report = BinaryStore.verify(path: path)
        report.issues.removeAll { $0.location == known }
        guard let first = report.issues.first else { return }
        let more = report.issues.count > 1 ? " (and \(report.issues.count - 1) more damaged locations; run coredata verify)" : " (run coredata verify)"
        throw CLIError(.damaged, "\(path) is damaged: \(first.location): \(first.problem)\(more)")
    }

    private static let emptyModel: NSManagedObjectModel = {
        let model = NSManagedObjectModel()
        try? model.freeze()
        return model
    }()
}
