#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// The real file layer: `pread`, `pwrite`, `fdatasync`, `flock`.
public struct POSIXFileSystem: StoreFileSystem {
    let transfers: POSIXTransfers

    public init() { transfers = .system }

    /// A file layer whose reads and writes go through `transfers` (tests make them short or
    /// interrupted).
    package init(transfers: POSIXTransfers) { self.transfers = transfers }

    public func open(_ path: String, create: Bool, readOnly: Bool) throws(StoreIOError) -> any StoreFile {
        var flags = readOnly ? O_RDONLY : O_RDWR
        if create { flags |= O_CREAT }
        flags |= O_CLOEXEC
        let fd = path.withCString { Glibc.open($0, flags, 0o644) }
        guard fd >= 0 else { throw Self.error("open", path) }
        return POSIXFile(fd: fd, path: path, transfers: transfers)
    }

    public func openOwnFile(_ path: String, creation: StoreFileCreation, readOnly: Bool, permissionsOf reference: String?) throws(StoreIOError) -> any StoreFile {
        POSIXFile(fd: try Self.openOwnDescriptor(path, creation: creation, readOnly: readOnly, permissionsOf: reference), path: path, transfers: transfers)
    }

    /// ``openOwnFile(_:creation:readOnly:permissionsOf:)``'s descriptor.
    static func openOwnDescriptor(_ path: String, creation: StoreFileCreation, readOnly: Bool, permissionsOf reference: String?) throws(StoreIOError) -> Int32 {
        let access = (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOFOLLOW
        var created = false
        var fd: Int32 = -1
        if creation != .never {
            // O_EXCL first, so the call knows whether it made the file (and must set its mode).
            fd = path.withCString { Glibc.open($0, access | O_CREAT | O_EXCL, 0o644) }
            created = fd >= 0
            if fd < 0, errno != EEXIST || creation == .exclusive { throw Self.error(creation == .exclusive ? "create" : "open", path) }
        }
        if fd < 0 { fd = path.withCString { Glibc.open($0, access) } }
        guard fd >= 0 else { throw Self.error("open", path) }
        if created, let reference {
            var info = stat()
            if stat(reference, &info) == 0 {
                // The reference's mode exactly (fchmod ignores the umask, as SQLite does for its
                // -wal and -shm); the owner too when the process may (root), else it stays ours.
                if fchmod(fd, info.st_mode & 0o7777) != 0 {
                    let failure = Self.error("set the permissions of", path)
                    _ = Glibc.close(fd)
                    throw failure
                }
                _ = fchown(fd, info.st_uid, info.st_gid)
            }
        }
        return fd
    }

    public func publish(_ source: String, as destination: String) throws(StoreIOError) {
        // link(2) fails with EEXIST instead of replacing, which rename(2) cannot.
        if link(source, destination) != 0 {
            let code = errno
            // File systems without hard links: the exists check and rename race, but only
            // with a creator that ignores the store's lock.
            guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == EMLINK else {
                throw Self.error("publish as \(destination)", source)
            }
            guard !fileExists(destination) else {
                throw StoreIOError(operation: "publish as \(destination)", path: source, code: EEXIST, reason: "the file exists")
            }
            try rename(source, to: destination)
            return
        }
        guard unlink(source) == 0 else { throw Self.error("remove", source) }
    }

    public func paths(startingWith prefix: String) -> [String] {
        // A prefix ending in a slash names a folder: every file in it.
        let inFolder = prefix.hasSuffix("/") && prefix.count > 1
        let folder = inFolder ? String(prefix.dropLast()) : (prefix as NSString).deletingLastPathComponent
        let start = inFolder ? "" : (prefix as NSString).lastPathComponent
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder) else { return [] }
        return names.filter { $0.hasPrefix(start) }.map { folder.isEmpty ? $0 : folder + "/" + $0 }
    }

    /// Whether anything has the name, a symbolic link included (even one that leads nowhere), so
    /// a leftover link is removed rather than taken for a free name.
    public func fileExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    public func remove(_ path: String) throws(StoreIOError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw Self.error("remove", path) }
    }

    public func rename(_ source: String, to destination: String) throws(StoreIOError) {
        guard Glibc.rename(source, destination) == 0 else { throw Self.error("rename to \(destination)", source) }
    }

    public func syncDirectory(containing path: String) throws(StoreIOError) {
        let directory = (path as NSString).deletingLastPathComponent
        let target = directory.isEmpty ? "." : directory
        let fd = Glibc.open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.error("open directory", target) }
        defer { _ = Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw Self.error("fsync directory", target) }
    }

    public func createDirectory(_ path: String, permissionsOf reference: String?) throws(StoreIOError) {
        var mode: mode_t = 0o755
        var info = stat()
        if let reference, stat(reference, &info) == 0 {
            // Search permission wherever the store may be read: a folder is no use without it.
            let read = info.st_mode & 0o444
            mode = (info.st_mode & 0o666) | (read >> 2)
        }
        if mkdir(path, mode) != 0 {
            guard errno == EEXIST else { throw Self.error("create directory", path) }
            var existing = stat()
            guard lstat(path, &existing) == 0, (existing.st_mode & S_IFMT) == S_IFDIR else {
                throw StoreIOError(operation: "create directory", path: path, code: EEXIST, reason: "something that is not a folder has the name")
            }
            return
        }
        // mkdir applies the umask; the store's own mode is what the folder must have.
        _ = chmod(path, mode)
    }

    public func removeDirectory(_ path: String) throws(StoreIOError) {
        guard rmdir(path) == 0 || errno == ENOENT else { throw Self.error("remove directory", path) }
    }

    public func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    public func sharedCounters(at path: String, writable: Bool, permissionsOf reference: String?) throws(StoreIOError) -> (any StoreSharedCounters)? {
        try MappedCounters(path: path, writable: writable, permissionsOf: reference)
    }

    static func error(_ operation: String, _ path: String) -> StoreIOError {
        let code = errno
        return StoreIOError(operation: operation, path: path, code: code, reason: String(cString: strerror(code)))
    }
}

final class POSIXFile: StoreFile, @unchecked Sendable {
    private let fd: Int32
    private let path: String
    private let transfers: POSIXTransfers
    // The engine never uses a file after closing it; the flag only makes close idempotent.
    private var isClosed = false

    init(fd: Int32, path: String, transfers: POSIXTransfers = .system) {
        self.fd = fd
        self.path = path
        self.transfers = transfers
    }

    deinit { close() }

    func read(at offset: UInt64, count: Int) throws(StoreIOError) -> [UInt8] {
        guard count > 0 else { return [] }
        // Uninitialised capacity: zero-filling a buffer the read overwrites cost as much as a
        // small page's copy out of the kernel.
        var failure: StoreIOError?
        let buffer = [UInt8](unsafeUninitializedCapacity: count) { raw, initialized in
            initialized = 0
            guard let base = raw.baseAddress else { return }
            var done = 0
            while done < count {
                let n = transfers.read(fd, base + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = POSIXFileSystem.error("read", path)
                    break
                }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
        if let failure { throw failure }
        return buffer
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws(StoreIOError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                transfers.write(fd, raw.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIXFileSystem.error("write", path)
            }
            // pwrite(2) may return 0 for a non-empty write (a full quota on some file systems);
            // trying again would spin for ever.
            guard n > 0 else {
                throw StoreIOError(operation: "write", path: path, code: ENOSPC, reason: "the system wrote nothing of \(bytes.count - done) bytes at offset \(offset + UInt64(done))")
            }
            done += n
        }
    }

    func sync() throws(StoreIOError) {
        guard fdatasync(fd) == 0 else { throw POSIXFileSystem.error("fdatasync", path) }
    }

    func size() throws(StoreIOError) -> UInt64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw POSIXFileSystem.error("stat", path) }
        return UInt64(info.st_size)
    }

    func truncate(to size: UInt64) throws(StoreIOError) {
        guard ftruncate(fd, off_t(size)) == 0 else { throw POSIXFileSystem.error("truncate", path) }
    }

    func lock(exclusive: Bool, wait: Bool) throws(StoreIOError) -> Bool {
        // A closed descriptor's number may belong to another file by now.
        guard !isClosed else { throw StoreIOError(operation: "lock", path: path, code: EBADF, reason: "the file is closed") }
        var operation = exclusive ? LOCK_EX : LOCK_SH
        if !wait { operation |= LOCK_NB }
        while flock(fd, operation) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { return false }
            throw POSIXFileSystem.error("lock", path)
        }
        return true
    }

    func unlock() {
        guard !isClosed else { return }
        while flock(fd, LOCK_UN) != 0, errno == EINTR {}
    }

    func identity() -> FileIdentity? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        _ = Glibc.close(fd)
    }
}

/// Four counters at the start of a one-page file mapped shared (Formats/wal.md §9, `NAME-shm`).
/// The file only grows (to one page), so the mapping never reaches past its end.
final class MappedCounters: StoreSharedCounters, @unchecked Sendable {
    static let size = 4_096
    private let base: UnsafeMutableRawPointer
    private let counters: UnsafeMutablePointer<Atomic<UInt64>>

    init(path: String, writable: Bool, permissionsOf reference: String?) throws(StoreIOError) {
        let fd = try POSIXFileSystem.openOwnDescriptor(path, creation: writable ? .ifMissing : .never, readOnly: !writable, permissionsOf: reference)
        defer { _ = Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw POSIXFileSystem.error("stat", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw StoreIOError(operation: "open", path: path, code: 0, reason: "not a regular file")
        }
        if info.st_size < Self.size {
            guard writable else { throw StoreIOError(operation: "map", path: path, code: 0, reason: "shorter than one page") }
            guard ftruncate(fd, off_t(Self.size)) == 0 else { throw POSIXFileSystem.error("extend", path) }
        }
        // A reader maps the page read-only: it only loads.
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        guard let mapped = mmap(nil, Self.size, protection, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw POSIXFileSystem.error("map", path)
        }
        base = mapped
        counters = mapped.bindMemory(to: Atomic<UInt64>.self, capacity: 4)
    }

    deinit { munmap(base, Self.size) }

    func load(_ index: Int) -> UInt64 { (counters + index).pointee.load(ordering: .acquiring) }

    func increment(_ index: Int) { (counters + index).pointee.wrappingAdd(1, ordering: .sequentiallyConsistent) }
}

/// The file layer's two data transfers, `pread` and `pwrite`. The kernel may move fewer bytes
/// than asked (a signal, a full disk, a network file system) or fail with `EINTR`; the file layer
/// loops until all moved, and tests replace these to make every transfer short or interrupted.
package struct POSIXTransfers: Sendable {
    /// `pread(fd, buffer, count, offset)`: bytes read, 0 at the end of the file, or -1 with `errno`.
    package var read: @Sendable (Int32, UnsafeMutableRawPointer, Int, off_t) -> Int
    /// `pwrite(fd, bytes, count, offset)`: bytes written, or -1 with `errno`.
    package var write: @Sendable (Int32, UnsafeRawPointer, Int, off_t) -> Int

    package init(read: @escaping @Sendable (Int32, UnsafeMutableRawPointer, Int, off_t) -> Int, write: @escaping @Sendable (Int32, UnsafeRawPointer, Int, off_t) -> Int) {
        self.read = read
        self.write = write
    }

    /// The system's calls.
    package static let system = POSIXTransfers(read: { Glibc.pread($0, $1, $2, $3) }, write: { Glibc.pwrite($0, $1, $2, $3) })
}
