#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CoreDataFileSystem
import Foundation

/// An in-memory ``StoreFileSystem`` that models durability exactly and fails on command.
///
/// Each file has its **current** contents (what reads return), its **durable** contents (what
/// survives power loss) and the writes and truncates made since its last sync. `sync()` applies
/// those to the durable contents. Folder entries work the same way: creates, renames and removes
/// change the current folder at once and the durable one only at `syncDirectory`.
///
/// Operations (writes, syncs, truncates, renames, removes, folder syncs, creates) are counted;
/// a ``FaultPlan`` crashes the process at one of them or fails it with `EIO` or `ENOSPC`. After
/// a crash, ``powerLoss(_:)`` gives the disk image a ``PowerLossPolicy`` leaves, and a new file
/// system over that image is what the next process sees.
///
/// Advisory locks always succeed: one process uses the file system at a time.
///
/// Threading: every method takes one lock, so it is safe from any thread.
package final class FaultInjectingFileSystem: StoreFileSystem, @unchecked Sendable {
    /// One file's bytes, independent of the names it has.
    package final class Inode {
        var current: [UInt8]
        var durable: [UInt8]
        var unsynced: [Change] = []

        init(_ bytes: [UInt8]) {
            current = bytes
            durable = bytes
        }
    }

    package enum Change {
        case write(offset: Int, bytes: [UInt8])
        case truncate(size: Int)

        /// Copies with `memcpy`: the suites move megabytes through here in debug builds.
        func apply(to bytes: inout [UInt8]) {
            switch self {
            case .write(let offset, let data):
                let end = offset + data.count
                if bytes.count < end { bytes.append(contentsOf: [UInt8](repeating: 0, count: end - bytes.count)) }
                bytes.withUnsafeMutableBytes { target in
                    data.withUnsafeBytes { source in
                        UnsafeMutableRawBufferPointer(rebasing: target[offset..<end]).copyMemory(from: source)
                    }
                }
            case .truncate(let size):
                if size < bytes.count {
                    bytes.removeSubrange(size...)
                } else {
                    bytes.append(contentsOf: [UInt8](repeating: 0, count: size - bytes.count))
                }
            }
        }
    }

    package enum FolderChange {
        case create(String, Int)
        case rename(String, String, Int)
        case remove(String)

        var path: String {
            switch self {
            case .create(let path, _), .remove(let path): return path
            case .rename(_, let destination, _): return destination
            }
        }

        func apply(to names: inout [String: Int]) {
            switch self {
            case .create(let path, let inode): names[path] = inode
            case .rename(let source, let destination, let inode):
                names[source] = nil
                names[destination] = inode
            case .remove(let path): names[path] = nil
            }
        }
    }

    private let lock = NSLock()
    private var inodes: [Int: Inode] = [:]
    private var names: [String: Int] = [:]
    private var durableNames: [String: Int] = [:]
    private var unsyncedFolderChanges: [FolderChange] = []
    /// Folders made with `createDirectory`, now and as the disk holds them: a folder's name is
    /// durable once its parent is synced, and a power loss takes the files of a folder whose name
    /// was not with it.
    private var directories: Set<String> = []
    private var durableDirectories: Set<String> = []
    private var nextInode = 1
    private var plan: FaultPlan
    private var count = 0
    private var trace: [String] = []
    private var reads = 0
    private var capturePolicies: (@Sendable (Int) -> [PowerLossPolicy])?
    private var captured: [CapturedImage] = []
    private var syncDelay: UInt32 = 0
    private var readTrace: [String] = []
    private var crashedAt: Int?

    /// A file system holding `image`, all of it durable.
    package init(image: DiskImage = DiskImage(), plan: FaultPlan = .none) {
        self.plan = plan
        directories = image.directories
        durableDirectories = image.directories
        for (path, bytes) in image.files {
            let id = nextInode
            nextInode += 1
            inodes[id] = Inode(bytes)
            names[path] = id
        }
        durableNames = names
    }

    /// Operations so far.
    package var operationCount: Int { lock.withLock { count } }
    /// One line per operation so far: `3 write /x/store-wal @64 +412`.
    package var operations: [String] { lock.withLock { trace } }
    /// Reads so far (counted apart from the other operations).
    package var readCount: Int { lock.withLock { reads } }
    /// One line per read so far: `3 read /x/store-wal @64 +412`.
    package var readOperations: [String] { lock.withLock { readTrace } }
    /// The operation the process died in, if it did.
    package var crashOperation: Int? { lock.withLock { crashedAt } }

    /// A disk image as a power loss would leave it just before an operation started.
    package struct CapturedImage: Sendable {
        /// The operation that had not started yet (the image holds operations before it).
        package var operation: Int
        package var policy: PowerLossPolicy
        package var image: DiskImage
    }

    /// From now on, before each operation `n` starts, keeps the disk image each of
    /// `policies(n)` leaves. For workloads whose threads interleave differently on every run,
    /// where crashing at operation `n` of a new run would not crash the same interleaving: one
    /// run then yields a crash image at every operation.
    package func captureImages(_ policies: @escaping @Sendable (Int) -> [PowerLossPolicy]) {
        lock.withLock { capturePolicies = policies }
    }

    /// The images kept since ``captureImages(_:)``, in operation order.
    package var capturedImages: [CapturedImage] { lock.withLock { captured } }

    /// Makes every sync take `microseconds` longer (outside the file system's lock), as a disk's
    /// flush does, so threads that save meanwhile queue behind it and share the next group commit.
    package func setSyncDelay(microseconds: UInt32) { lock.withLock { syncDelay = microseconds } }

    /// Replaces the plan; operation numbers keep counting.
    package func setPlan(_ plan: FaultPlan) { lock.withLock { self.plan = plan } }

    /// The current contents of `path` (what a reader sees now).
    package func contents(of path: String) -> [UInt8]? {
        lock.withLock { names[path].flatMap { inodes[$0]?.current } }
    }

    /// Every file as the live system sees it now (a clean copy, as after a clean shutdown).
    package var currentImage: DiskImage { powerLoss(.processCrash) }

    // MARK: Faults

    private enum Fate {
        case proceed
        case crash(StoreIOError)
        case fail(StoreIOError, Int32)
    }

    /// Counts an operation and decides what happens to it. Caller holds `lock`.
    private func begin(_ operation: String, _ path: String, _ detail: String = "") throws(StoreIOError) -> Fate {
        try checkAlive(operation, path)
        if let capturePolicies {
            for policy in capturePolicies(count + 1) {
                captured.append(CapturedImage(operation: count + 1, policy: policy, image: powerLossLocked(policy)))
            }
        }
        count += 1
        trace.append("\(count) \(operation) \(path)\(detail.isEmpty ? "" : " \(detail)")")
        switch plan {
        case .none, .failRead:
            return .proceed
        case .crash(let at):
            guard count == at else { return .proceed }
            crashedAt = count
            return .crash(StoreIOError(operation: operation, path: path, code: EIO, reason: "the process crashed (injected at operation \(count))"))
        case .fail(let code, let at, let persistent):
            guard count == at || (persistent && count > at) else { return .proceed }
            let reason = String(cString: strerror(code))
            return .fail(StoreIOError(operation: operation, path: path, code: code, reason: "\(reason) (injected at operation \(count))"), code)
        }
    }

    /// Caller holds `lock`.
    private func checkAlive(_ operation: String, _ path: String) throws(StoreIOError) {
        if let crashedAt {
            throw StoreIOError(operation: operation, path: path, code: EIO, reason: "the process crashed at operation \(crashedAt)")
        }
    }

    // MARK: StoreFileSystem

    package func open(_ path: String, create: Bool, readOnly: Bool) throws(StoreIOError) -> any StoreFile {
        lock.lock()
        defer { lock.unlock() }
        try checkAlive("open", path)
        if let id = names[path] { return FaultInjectingFile(fileSystem: self, inode: id, path: path, readOnly: readOnly) }
        guard create, !readOnly else {
            throw StoreIOError(operation: "open", path: path, code: ENOENT, reason: String(cString: strerror(ENOENT)))
        }
        let fate = try begin("create", path)
        if case .fail(let error, _) = fate { throw error }
        let id = nextInode
        nextInode += 1
        inodes[id] = Inode([])
        names[path] = id
        unsyncedFolderChanges.append(.create(path, id))
        if case .crash(let error) = fate { throw error }
        return FaultInjectingFile(fileSystem: self, inode: id, path: path, readOnly: false)
    }

    package func fileExists(_ path: String) -> Bool {
        lock.withLock { names[path] != nil || directories.contains(path) }
    }

    package func createDirectory(_ path: String, permissionsOf reference: String?) throws(StoreIOError) {
        lock.lock()
        defer { lock.unlock() }
        if directories.contains(path) { return }
        let fate = try begin("create directory", path)
        if case .fail(let error, _) = fate { throw error }
        directories.insert(path)
        if case .crash(let error) = fate { throw error }
    }

    package func removeDirectory(_ path: String) throws(StoreIOError) {
        lock.lock()
        defer { lock.unlock() }
        guard directories.contains(path) else { return }
        if names.keys.contains(where: { Self.folder(of: $0) == path }) {
            throw StoreIOError(operation: "remove directory", path: path, code: ENOTEMPTY, reason: String(cString: strerror(ENOTEMPTY)))
        }
        let fate = try begin("remove directory", path)
        if case .fail(let error, _) = fate { throw error }
        directories.remove(path)
        if case .crash(let error) = fate { throw error }
    }

    package func paths(startingWith prefix: String) -> [String] {
        lock.withLock { names.keys.filter { $0.hasPrefix(prefix) } }
    }

    package func remove(_ path: String) throws(StoreIOError) {
        lock.lock()
        defer { lock.unlock() }
        let fate = try begin("remove", path)
        if case .fail(let error, _) = fate { throw error }
        if names[path] != nil {
            names[path] = nil
            unsyncedFolderChanges.append(.remove(path))
        }
        if case .crash(let error) = fate { throw error }
    }

    package func rename(_ source: String, to destination: String) throws(StoreIOError) {
        lock.lock()
        defer { lock.unlock() }
        let fate = try begin("rename", source, "to \(destination)")
        if case .fail(let error, _) = fate { throw error }
        guard let id = names[source] else {
            throw StoreIOError(operation: "rename to \(destination)", path: source, code: ENOENT, reason: String(cString: strerror(ENOENT)))
        }
        let change = FolderChange.rename(source, destination, id)
        change.apply(to: &names)
        unsyncedFolderChanges.append(change)
        if case .crash(let error) = fate { throw error }
    }

    package func syncDirectory(containing path: String) throws(StoreIOError) {
        lock.lock()
        defer { lock.unlock() }
        let folder = Self.folder(of: path)
        let fate = try begin("sync folder", folder)
        switch fate {
        case .crash(let error), .fail(let error, _): throw error
        case .proceed: break
        }
        for directory in directories where Self.folder(of: directory) == folder { durableDirectories.insert(directory) }
        for directory in durableDirectories where Self.folder(of: directory) == folder && !directories.contains(directory) {
            durableDirectories.remove(directory)
        }
        var kept: [FolderChange] = []
        for change in unsyncedFolderChanges {
            if Self.folder(of: change.path) == folder {
                change.apply(to: &durableNames)
            } else {
                kept.append(change)
            }
        }
        unsyncedFolderChanges = kept
    }

    package static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }

    // MARK: Files

    package func read(_ id: Int, path: String, at offset: UInt64, count wanted: Int) throws(StoreIOError) -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        try checkAlive("read", path)
        reads += 1
        readTrace.append("\(reads) read \(path) @\(offset) +\(wanted)")
        if case .failRead(let code, let at, let persistent) = plan, reads == at || (persistent && reads > at) {
            throw StoreIOError(operation: "read", path: path, code: code, reason: "\(String(cString: strerror(code))) (injected at read \(reads))")
        }
        guard let bytes = inodes[id]?.current, offset < UInt64(bytes.count), wanted > 0 else { return [] }
        let start = Int(offset)
        return Array(bytes[start..<min(bytes.count, start + wanted)])
    }

    package func write(_ id: Int, path: String, _ bytes: [UInt8], at offset: UInt64) throws(StoreIOError) {
        lock.lock()
        defer { lock.unlock() }
        let fate = try begin("write", path, "@\(offset) +\(bytes.count)")
        guard let inode = inodes[id] else { return }
        var change = Change.write(offset: Int(offset), bytes: bytes)
        if case .fail(let error, let code) = fate {
            // A full disk takes the whole sectors it had room for; an I/O error takes nothing.
            let kept = code == ENOSPC ? Self.sectorPrefix(offset: Int(offset), count: bytes.count / 2) : 0
            if kept > 0 {
                change = .write(offset: Int(offset), bytes: Array(bytes[..<kept]))
                change.apply(to: &inode.current)
                inode.unsynced.append(change)
            }
            throw error
        }
        change.apply(to: &inode.current)
        inode.unsynced.append(change)
        if case .crash(let error) = fate { throw error }
    }

    /// How many bytes of a write at `offset` end on a sector boundary at or below `offset + count`.
    package static func sectorPrefix(offset: Int, count: Int) -> Int {
        let end = (offset + count) / 512 * 512
        return max(0, end - offset)
    }

    package func sync(_ id: Int, path: String) throws(StoreIOError) {
        // What was written before the call is what the sync must make durable; writes other
        // threads make during the delay may or may not be, so the model keeps them unsynced.
        let (delay, issued) = lock.withLock { (syncDelay, inodes[id]?.unsynced.count ?? 0) }
        if delay > 0 { usleep(delay) }
        lock.lock()
        defer { lock.unlock() }
        let fate = try begin("sync", path)
        guard let inode = inodes[id] else { return }
        switch fate {
        case .crash(let error):
            throw error
        case .fail(let error, _):
            // Writeback failed: the pages are marked clean, so the data stays readable but is
            // gone from the disk, and a later sync has nothing to say about it.
            inode.unsynced = []
            throw error
        case .proceed:
            let synced = delay > 0 ? min(issued, inode.unsynced.count) : inode.unsynced.count
            for change in inode.unsynced.prefix(synced) { change.apply(to: &inode.durable) }
            inode.unsynced.removeFirst(synced)
        }
    }

    package func size(_ id: Int, path: String) throws(StoreIOError) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        try checkAlive("stat", path)
        return UInt64(inodes[id]?.current.count ?? 0)
    }

    package func truncate(_ id: Int, path: String, to size: UInt64) throws(StoreIOError) {
        lock.lock()
        defer { lock.unlock() }
        let fate = try begin("truncate", path, "to \(size)")
        if case .fail(let error, _) = fate { throw error }
        guard let inode = inodes[id] else { return }
        let change = Change.truncate(size: Int(size))
        change.apply(to: &inode.current)
        inode.unsynced.append(change)
        if case .crash(let error) = fate { throw error }
    }

    // MARK: Power loss

    /// The disk as `policy` leaves it after the machine stops now.
    package func powerLoss(_ policy: PowerLossPolicy) -> DiskImage {
        lock.withLock { powerLossLocked(policy) }
    }

    /// Caller holds `lock`.
    private func powerLossLocked(_ policy: PowerLossPolicy) -> DiskImage {
        var generator = SeededGenerator(seed: 0)
        var folder = durableNames
        switch policy {
        case .processCrash:
            folder = names
        case .randomSubset(let seed), .garbageSectors(let seed):
            generator = SeededGenerator(seed: seed)
            let prefix = Int.random(in: 0...unsyncedFolderChanges.count, using: &generator)
            for change in unsyncedFolderChanges.prefix(prefix) { change.apply(to: &folder) }
        case .tearLastWrite(let seed):
            generator = SeededGenerator(seed: seed)
        case .dropUnsynced, .zeroFillExtensions:
            break
        }
        var image = DiskImage()
        image.directories = policy == .processCrash ? directories : durableDirectories
        let lostDirectories = directories.union(durableDirectories).subtracting(image.directories)
        for path in folder.keys.sorted() {
            guard let id = folder[path], let inode = inodes[id] else { continue }
            if lostDirectories.contains(Self.folder(of: path)) { continue }
            image.files[path] = Self.contents(of: inode, after: policy, using: &generator)
        }
        return image
    }

    private static func contents(of inode: Inode, after policy: PowerLossPolicy, using generator: inout SeededGenerator) -> [UInt8] {
        switch policy {
        case .processCrash:
            return inode.current
        case .dropUnsynced:
            return inode.durable
        case .zeroFillExtensions:
            var bytes = inode.durable
            Change.truncate(size: inode.current.count).apply(to: &bytes)
            return bytes
        case .tearLastWrite:
            var bytes = inode.durable
            let lastWrite = inode.unsynced.lastIndex { if case .write = $0 { return true } else { return false } }
            for (position, change) in inode.unsynced.enumerated() {
                guard position == lastWrite, case .write(let offset, let data) = change else {
                    change.apply(to: &bytes)
                    continue
                }
                let boundaries = Array(stride(from: (offset / 512 + 1) * 512, to: offset + data.count, by: 512))
                guard let cut = boundaries.randomElement(using: &generator) else { continue }
                Change.write(offset: offset, bytes: Array(data[..<(cut - offset)])).apply(to: &bytes)
            }
            return bytes
        case .randomSubset, .garbageSectors:
            let garbage: Bool
            if case .garbageSectors = policy { garbage = true } else { garbage = false }
            var bytes = inode.durable
            var pieces: [Change] = []
            for change in inode.unsynced {
                guard case .write(let offset, let data) = change else {
                    pieces.append(change)
                    continue
                }
                var start = offset
                while start < offset + data.count {
                    let end = min(offset + data.count, (start / 512 + 1) * 512)
                    pieces.append(.write(offset: start, bytes: Array(data[(start - offset)..<(end - offset)])))
                    start = end
                }
            }
            pieces.shuffle(using: &generator)
            for piece in pieces {
                let fate = garbage ? Int.random(in: 0..<3, using: &generator) : (Bool.random(using: &generator) ? 1 : 0)
                switch (fate, piece) {
                case (0, _):
                    continue
                case (2, .write(let offset, let data)):
                    Change.write(offset: offset, bytes: data.map { _ in UInt8.random(in: 0...255, using: &generator) }).apply(to: &bytes)
                default:
                    piece.apply(to: &bytes)
                }
            }
            return bytes
        }
    }
}

/// A handle on one file of a ``FaultInjectingFileSystem``; it keeps its file through renames
/// and removes, as a file descriptor does.
package final class FaultInjectingFile: StoreFile, @unchecked Sendable {
    private let fileSystem: FaultInjectingFileSystem
    private let inode: Int
    private let path: String
    private let readOnly: Bool

    package init(fileSystem: FaultInjectingFileSystem, inode: Int, path: String, readOnly: Bool) {
        self.fileSystem = fileSystem
        self.inode = inode
        self.path = path
        self.readOnly = readOnly
    }

    package func read(at offset: UInt64, count: Int) throws(StoreIOError) -> [UInt8] {
        try fileSystem.read(inode, path: path, at: offset, count: count)
    }

    package func write(_ bytes: [UInt8], at offset: UInt64) throws(StoreIOError) {
        try checkWritable("write")
        try fileSystem.write(inode, path: path, bytes, at: offset)
    }

    package func sync() throws(StoreIOError) {
        try fileSystem.sync(inode, path: path)
    }

    package func size() throws(StoreIOError) -> UInt64 {
        try fileSystem.size(inode, path: path)
    }

    package func truncate(to size: UInt64) throws(StoreIOError) {
        try checkWritable("truncate")
        try fileSystem.truncate(inode, path: path, to: size)
    }

    package func lock(exclusive: Bool, wait: Bool) throws(StoreIOError) -> Bool { true }

    package func close() {}

    private func checkWritable(_ operation: String) throws(StoreIOError) {
        guard !readOnly else { throw StoreIOError(operation: operation, path: path, code: EBADF, reason: "the file was opened read-only") }
    }
}
