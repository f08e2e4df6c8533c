import CoreDataFileSystem
import CoreDataModel
import CoreDataStorage
import CoreDataXMLFormat
import Foundation

/// The XML store (`NSXMLStoreType`, `Formats/xml-store.md`): Apple's XML layout, read whole when
/// the store opens and rewritten whole, atomically, by every change.
///
/// The objects live in a ``RowTable`` (the same rules as the in-memory store). A save locks
/// `NAME`, checks that no other process saved since this handle read it, applies the change to a
/// copy, writes the copy to a new file beside `NAME`, syncs it, renames it over `NAME` and syncs
/// the folder (`§11`); only then does the copy become the store's state, so a failed or
/// interrupted save leaves both the file and the store as they were. Primary keys are numbered
/// store-wide because they are the file's `id="z…"` numbers (`§5`).
///
/// Threading: every method is safe from any thread. Writers (saves, metadata, batch changes)
/// run one at a time; fetches read a snapshot and never wait for a writer's I/O.
/// Complexity: opening and every save are O(size of the store); a fetch O(rows of the entities).
/// Errors: a damaged file opens with ``StoreError/corrupt(detail:)`` naming the file, line and
/// problem; I/O failures are ``StoreError/io(detail:)``. A failed sync, rename or folder sync
/// poisons the handle: every later call throws that error.
public final class XMLStore: PersistentStoreEngine, StoreHistoryRecording, StoreSnapshotting, @unchecked Sendable {
    private struct State {
        var table: RowTable
        var metadata: StoreMetadata
        var isClosed = false
        var poisoned: StoreError?
    }

    /// Each save writes the whole document beside the store and renames it into place.
    public var savesWholeStore: Bool { true }

    /// The store's file.
    public let path: String
    /// Whether changes are recorded as persistent history. The file has no place for it: the
    /// history lives as long as this handle.
    public let recordsHistory: Bool
    private let options: XMLStoreOptions
    private let schema: XMLStoreSchema
    private let lock = NSLock()
    private let writerLock = NSLock()
    private var state: State
    /// The file this handle read at open or wrote at its last save: a save over any other file
    /// would replace another process's save (§11). Guarded by `writerLock`.
    private var fileIdentity: FileIdentity?

    /// Opens the store at `path`, or creates it with `metadata` (writing the empty file at once)
    /// when there is none and the store is not read-only.
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` for a file that is not a valid XML store for
    ///   `model`; ``StoreError/io(detail:)`` when the file cannot be read or created, or the
    ///   model's names clash in an XML store (`§8`).
    public init(path: String, model: NSManagedObjectModel, metadata: StoreMetadata, options: XMLStoreOptions = XMLStoreOptions()) throws(StoreError) {
        self.path = path
        self.options = options
        do {
            schema = try XMLStoreSchema(model: model)
        } catch {
            throw .io(detail: "\(path): \(error)")
        }
        recordsHistory = options.recordsHistory
        var table = RowTable(entities: model.entitiesByName, keyScope: .storeWide, recordsHistory: options.recordsHistory)
        let fileSystem = options.fileSystem
        if !fileSystem.fileExists(path) {
            guard !options.readOnly else { throw .io(detail: "there is no XML store at \(path) to open read-only") }
            state = State(table: table, metadata: metadata)
            if try write(table, metadata, creating: true) {
                // Files of a creation a crash cut short (which held no lock) are left over too.
                try removeLeftoversIfIdle()
                return
            }
            // Another process created the store first (§11): open the one it made.
        }
        let (document, loaded, identity) = try Self.load(path: path, fileSystem: fileSystem, schema: schema)
        do {
            try table.load(loaded)
        } catch {
            throw .corrupt(detail: "\(path): \(error)")
        }
        table.advanceKeys(pastOrTo: document.info.nextObjectID)
        let stored: StoreMetadata
        do {
            stored = try schema.metadata(from: document.info)
        } catch {
            throw .corrupt(detail: "\(path) \(error)")
        }
        state = State(table: table, metadata: stored)
        fileIdentity = identity
        if !options.readOnly { try removeLeftoversIfIdle() }
    }

    // MARK: Several processes (Formats/xml-store.md §11)

    /// `NAME` opened and locked exclusively, the lock held on the file the name names: a save of
    /// another process that renamed its file into place meanwhile makes it lock again. Waits up
    /// to ``XMLStoreOptions/lockTimeout``, or not at all with `waiting` false (then `nil` when
    /// another process holds it).
    private func lockedStoreFile(waiting: Bool = true) throws(StoreError) -> (any StoreFile)? {
        let fileSystem = options.fileSystem
        for _ in 0..<XMLStoreLayout.lockAttempts {
            let file: any StoreFile
            do { file = try fileSystem.open(path, create: false, readOnly: true) } catch { throw .io(detail: "\(error)") }
            let locked: Bool
            var pending: LockAttempt?
            do { locked = try Self.lockWaiting.lockExclusively(file, timeout: waiting ? options.lockTimeout : 0, pending: &pending, closingOnTimeout: true) } catch {
                file.close()
                throw .io(detail: "\(error)")
            }
            guard locked else {
                // A wait still blocked in the kernel closes the file when it ends.
                if pending == nil { file.close() }
                if !waiting { return nil }
                throw .io(detail: "the XML store at \(path) is locked by another process (a save there held it for more than \(options.lockTimeout) s)")
            }
            // No file under the name (destroyed meanwhile) is a replacement too: the next open fails.
            if let held = file.identity(), fileSystem.identity(of: path) != held {
                file.unlock()
                file.close()
                continue
            }
            return file
        }
        throw .io(detail: "the XML store at \(path) was replaced while it was being locked, again and again")
    }

    /// How a save waits for the lock (§11): as the binary store waits for its log's.
    private static let lockWaiting = LockWaiting(
        pollingTime: XMLStoreLayout.lockPollingTime, firstPause: XMLStoreLayout.lockRetryPauses.first, longestPause: XMLStoreLayout.lockRetryPauses.longest)

    /// Files beside the store that saves a crash cut short left (§11). Caller holds the lock.
    private static func removeLeftovers(of path: String, fileSystem: any StoreFileSystem) throws(StoreError) {
        for leftover in fileSystem.paths(startingWith: path + XMLStoreLayout.pendingFileSuffix)
        where leftover == path + XMLStoreLayout.pendingFileSuffix || leftover.hasPrefix(path + XMLStoreLayout.pendingFilePrefix) {
            do { try fileSystem.remove(leftover) } catch { throw .io(detail: "\(error)") }
        }
    }

    /// Removes leftovers at open when no other process is saving right now; a save removes them
    /// anyway, under its lock.
    private func removeLeftoversIfIdle() throws(StoreError) {
        guard let file = try lockedStoreFile(waiting: false) else { return }
        defer {
            file.unlock()
            file.close()
        }
        try Self.removeLeftovers(of: path, fileSystem: options.fileSystem)
    }

    /// Deletes the store at `path` under its lock, so no other process's save is cut in half
    /// (`destroyPersistentStore`). Nothing to do when there is no store.
    ///
    /// - Throws: ``StoreError/io(detail:)`` when another process holds the lock past the timeout
    ///   or a file cannot be removed.
    public static func destroy(path: String, options: XMLStoreOptions = XMLStoreOptions()) throws(StoreError) {
        let fileSystem = options.fileSystem
        guard fileSystem.fileExists(path) else {
            try removeLeftovers(of: path, fileSystem: fileSystem)
            return
        }
        let file: any StoreFile
        do { file = try fileSystem.open(path, create: false, readOnly: true) } catch { throw .io(detail: "\(error)") }
        var pending: LockAttempt?
        let locked: Bool
        do { locked = try lockWaiting.lockExclusively(file, timeout: options.lockTimeout, pending: &pending, closingOnTimeout: true) } catch {
            file.close()
            throw .io(detail: "\(error)")
        }
        guard locked else {
            if pending == nil { file.close() }
            throw .io(detail: "the XML store at \(path) is locked by another process (a save there held it for more than \(options.lockTimeout) s)")
        }
        defer {
            file.unlock()
            file.close()
        }
        try removeLeftovers(of: path, fileSystem: fileSystem)
        do {
            try fileSystem.remove(path)
            try fileSystem.syncDirectory(containing: path)
        } catch {
            throw .io(detail: "\(error)")
        }
    }

    /// Reads and decodes the file in chunks of ``XMLStoreLayout/readChunkSize``; returns the
    /// identity of the file read, too.
    private static func load(path: String, fileSystem: any StoreFileSystem, schema: XMLStoreSchema) throws(StoreError) -> (XMLStoreDocument, [StoreRow], FileIdentity?) {
        let reader = XMLStoreReader()
        let identity: FileIdentity?
        do {
            let file = try fileSystem.open(path, create: false, readOnly: true)
            defer { file.close() }
            identity = file.identity()
            let size = try file.size()
            var offset: UInt64 = 0
            while offset < size {
                let chunk = try file.read(at: offset, count: XMLStoreLayout.readChunkSize)
                if chunk.isEmpty { break }
                do { try reader.feed(chunk) } catch { throw StoreError.corrupt(detail: "\(path) \(error)") }
                offset += UInt64(chunk.count)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .io(detail: "\(error)")
        }
        do {
            let document = try reader.finish()
            return (document, try schema.rows(from: document), identity)
        } catch {
            throw .corrupt(detail: "\(path) \(error)")
        }
    }

    private func withState<T>(_ body: (inout State) throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !state.isClosed else { throw .closed }
        if let poisoned = state.poisoned { throw poisoned }
        return try body(&state)
    }

    /// Runs one writer: `change` makes the new table and metadata from a snapshot, the file is
    /// written, and only then does the new state replace the old.
    private func change<T>(_ change: (inout RowTable, inout StoreMetadata) throws(StoreError) -> T) throws(StoreError) -> T {
        guard !options.readOnly else { throw .io(detail: "the XML store at \(path) is read-only") }
        writerLock.lock()
        defer { writerLock.unlock() }
        _ = try withState { _ in }
        guard let storeFile = try lockedStoreFile() else { throw .io(detail: "the XML store at \(path) could not be locked") }
        defer {
            storeFile.unlock()
            storeFile.close()
        }
        if let known = fileIdentity, let locked = storeFile.identity(), known != locked {
            throw .io(detail: "the XML store at \(path) was saved by another process after this one read it; nothing was written (reopen the store to see that save)")
        }
        try Self.removeLeftovers(of: path, fileSystem: options.fileSystem)
        var (table, metadata) = try withState { ($0.table, $0.metadata) }
        let result = try change(&table, &metadata)
        try write(table, metadata)
        try withState { state in
            // Keys handed out while the file was written must not be handed out again.
            table.advanceKeys(pastOrTo: state.table.nextKey() - 1)
            state.table = table
            state.metadata = metadata
        }
        return result
    }

    /// Writes the whole store beside the file, syncs, renames over and syncs the folder (§11).
    /// Caller holds the lock, or `creating`: then the file is given the store's name only if
    /// nothing has it.
    ///
    /// - Returns: `false` when `creating` found the store already made by another process.
    @discardableResult
    private func write(_ table: RowTable, _ metadata: StoreMetadata, creating: Bool = false) throws(StoreError) -> Bool {
        let fileSystem = options.fileSystem
        let digits = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let pending = path + XMLStoreLayout.pendingFilePrefix + String(repeating: "0", count: max(0, XMLStoreLayout.pendingFileRandomDigits - digits.count)) + digits
        let info: XMLStoreInfo
        do {
            info = try schema.info(metadata: metadata, nextObjectID: table.nextKey() - 1)
        } catch {
            throw .io(detail: "\(path): \(error)")
        }
        let file: any StoreFile
        do {
            file = try fileSystem.openOwnFile(pending, creation: .exclusive, readOnly: false, permissionsOf: creating ? nil : path)
        } catch {
            throw .io(detail: "\(error)")
        }
        do {
            var offset: UInt64 = 0
            var writer = XMLStoreWriter { bytes in
                try file.write(bytes, at: offset)
                offset += UInt64(bytes.count)
            }
            try writer.begin(info)
            for id in table.rows.keys.sorted(by: { $0.primaryKey < $1.primaryKey }) {
                guard let row = table.rows[id] else { continue }
                try writer.write(try schema.object(for: row))
            }
            try writer.finish()
        } catch {
            file.close()
            // The old file is untouched; free the space the partial copy took (best effort).
            try? fileSystem.remove(pending)
            throw .io(detail: "writing \(pending): \(error)")
        }
        let written = file.identity()
        do {
            try file.sync()
            file.close()
            if creating {
                // Lost to another process's creation: it published first (EEXIST), or it
                // published and then removed this file as a leftover.
                do { try fileSystem.publish(pending, as: path) } catch where fileSystem.fileExists(path) {
                    try? fileSystem.remove(pending)
                    return false
                }
            } else {
                try fileSystem.rename(pending, to: path)
            }
            try fileSystem.syncDirectory(containing: path)
        } catch {
            file.close()
            // The kernel may have dropped the unsynced pages: nothing this handle believes about
            // the file can be trusted any more.
            let failure = StoreError.io(detail: "\(error); the XML store at \(path) must be reopened")
            lock.withLock { state.poisoned = failure }
            throw failure
        }
        fileIdentity = written
        return true
    }

    // MARK: PersistentStoreEngine

    public func metadata() throws(StoreError) -> StoreMetadata {
        try withState { $0.metadata }
    }

    /// Replaces the metadata and writes the file at once.
    public func setMetadata(_ metadata: StoreMetadata) throws(StoreError) {
        try change { (_, stored) throws(StoreError) in stored = metadata }
    }

    public func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? {
        try withState { $0.table.rows[objectID] }
    }

    /// The rows of `objectIDs` under one lock.
    public func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        try withState { state in objectIDs.compactMap { state.table.rows[$0] } }
    }

    /// Keys come from one store-wide counter (§5); they are written with the next save.
    public func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] {
        try withState { $0.table.reserveKeys(entityName: entityName, count: count) }
    }

    public func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        let snapshot = try withState { $0.table }
        let matches = snapshot.matching(request)
        switch request.resultType {
        case .count: return .count(matches.count)
        case .objectIDs: return .objectIDs(matches.map(\.objectID))
        case .rows: return .rows(matches)
        }
    }

    public func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        if changes.isEmpty { return [:] }
        return try change { (table, _) throws(StoreError) in try table.apply(changes) }
    }

    public func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] {
        try change { (table, _) throws(StoreError) in try table.batchDelete(request) }
    }

    public func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] {
        try change { (table, _) throws(StoreError) in try table.batchUpdate(request, values: values) }
    }

    /// The loaded table as it is: a copy-on-write reference, O(1).
    public func snapshot() throws(StoreError) -> any StoreGenerationView {
        try withState { state in
            RowTableSnapshot(table: state.table, metadata: state.metadata, generation: "\(ObjectIdentifier(self).hashValue).\(state.table.generation)")
        }
    }

    public func history(_ query: StoreHistoryQuery) throws(StoreError) -> StoreHistoryPage {
        try withState { $0.table.history?.page(query) } ?? StoreHistoryPage(transactions: [], firstRetained: 1, lastNumber: 0)
    }

    /// Deletes in memory only: the file holds no history.
    public func deleteHistory(_ cutoff: StoreHistoryCutoff) throws(StoreError) -> Int {
        writerLock.lock()
        defer { writerLock.unlock() }
        return try withState { $0.table.deleteHistory(cutoff) }
    }

    /// Releases the store; every change is already on disk.
    public func close() throws(StoreError) {
        lock.lock()
        defer { lock.unlock() }
        guard !state.isClosed else { throw .closed }
        state.isClosed = true
        if let poisoned = state.poisoned { throw poisoned }
    }
}
