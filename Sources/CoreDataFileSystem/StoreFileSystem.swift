#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file layer under the binary store. The engine does all its I/O through it, so tests can
/// replace it with one that crashes, tears writes, drops unsynced data or fails with `EIO` and
/// `ENOSPC` at any chosen operation.
///
/// Threading: implementations must be safe to call from several threads at once.
public protocol StoreFileSystem: Sendable {
    /// Opens a file; `create` makes it when missing (never truncates an existing one).
    func open(_ path: String, create: Bool, readOnly: Bool) throws(StoreIOError) -> any StoreFile
    /// Opens one of the store's own files (its log, lock and temporary files, which it creates,
    /// truncates and renames): never through a symbolic link, and, when this call creates the
    /// file, with the permissions (and, where the process may, the owner) of `permissionsOf`, so
    /// a user's `chmod 600` on the store reaches every file made beside it.
    ///
    /// - Throws: with code `EEXIST` when `creation` is ``StoreFileCreation/exclusive`` and the
    ///   path exists; `ELOOP` when the path is a symbolic link.
    func openOwnFile(_ path: String, creation: StoreFileCreation, readOnly: Bool, permissionsOf reference: String?) throws(StoreIOError) -> any StoreFile
    /// Gives `source` the name `destination` only if nothing has it (a store being created by two
    /// processes at once is created once), removing the name `source`.
    ///
    /// - Throws: with code `EEXIST` when `destination` exists.
    func publish(_ source: String, as destination: String) throws(StoreIOError)
    func fileExists(_ path: String) -> Bool
    /// The files in the folder of `prefix` whose paths start with `prefix` (leftovers a crash
    /// left beside a store), in no particular order; empty when the folder cannot be read. A
    /// prefix that ends in `/` lists every file of that folder.
    func paths(startingWith prefix: String) -> [String]
    func remove(_ path: String) throws(StoreIOError)
    /// Replaces `destination` with `source` atomically.
    func rename(_ source: String, to destination: String) throws(StoreIOError)
    /// Makes creates, removes and renames in the folder holding `path` durable.
    func syncDirectory(containing path: String) throws(StoreIOError)
    /// Makes the folder `path` (its parent must exist), with the permissions of `reference` plus
    /// search permission where it may be read, so a user's `chmod 600` on the store reaches the
    /// folders made beside it. Succeeds when the folder exists. The folder's name is durable only
    /// after ``syncDirectory(containing:)`` of `path`.
    func createDirectory(_ path: String, permissionsOf reference: String?) throws(StoreIOError)
    /// Removes the empty folder `path`; succeeds when nothing has the name.
    func removeDirectory(_ path: String) throws(StoreIOError)
    /// Which file `path` names now (device and inode), `nil` when it names none or the layer
    /// cannot tell. A lock is held on the file the path names only if this equals the locked
    /// file's ``StoreFile/identity()`` after locking.
    func identity(of path: String) -> FileIdentity?
    /// Counters in a small file mapped into memory, shared by every process that maps it, or
    /// `nil` when the layer has no shared memory at all. Then the store asks the files instead,
    /// and a writable handle marks the file through
    /// ``openOwnFile(_:creation:readOnly:permissionsOf:)`` so that handles which map it stop
    /// trusting their counters (Formats/wal.md §9). A layer that wraps another should pass this
    /// call on, or every handle on the store becomes slower. The counters must be the four
    /// 64-bit words at the start of the file at `path` itself, as ``POSIXFileSystem`` maps them:
    /// the mark is written there. `writable` creates the file when missing, with the
    /// permissions (and owner, where the process may) of `reference`. Throws when the layer has
    /// shared memory but this file cannot be mapped (a symlink, no space, no permission).
    func sharedCounters(at path: String, writable: Bool, permissionsOf reference: String?) throws(StoreIOError) -> (any StoreSharedCounters)?
}

/// Whether ``StoreFileSystem/openOwnFile(_:creation:readOnly:permissionsOf:)`` may create the file.
public enum StoreFileCreation: Sendable {
    /// The file must exist.
    case never
    /// Created when missing; an existing file is opened as it is (never truncated).
    case ifMissing
    /// Created, and the call fails when something already has the name (`O_EXCL`).
    case exclusive
}

extension StoreFileSystem {
    /// Layers without links or permissions (test file systems) open the file as ``open(_:create:readOnly:)`` does.
    public func openOwnFile(_ path: String, creation: StoreFileCreation, readOnly: Bool, permissionsOf reference: String?) throws(StoreIOError) -> any StoreFile {
        if creation == .exclusive, fileExists(path) {
            throw StoreIOError(operation: "create", path: path, code: EEXIST, reason: "the file exists")
        }
        return try open(path, create: creation != .never, readOnly: readOnly)
    }

    public func publish(_ source: String, as destination: String) throws(StoreIOError) {
        if fileExists(destination) {
            throw StoreIOError(operation: "publish as \(destination)", path: source, code: EEXIST, reason: "the file exists")
        }
        try rename(source, to: destination)
    }

    /// Layers whose folders follow from the paths of their files need not make one.
    public func createDirectory(_ path: String, permissionsOf reference: String?) throws(StoreIOError) {}
    public func removeDirectory(_ path: String) throws(StoreIOError) {}

    /// Layers that cannot list a folder find no leftovers.
    public func paths(startingWith prefix: String) -> [String] { [] }

    public func identity(of path: String) -> FileIdentity? { nil }
    public func sharedCounters(at path: String, writable: Bool, permissionsOf reference: String?) throws(StoreIOError) -> (any StoreSharedCounters)? { nil }
}

/// 64-bit counters that several processes read and increment atomically, in memory they share.
/// A hint, never a record: nothing durable depends on their values, only on their changing.
public protocol StoreSharedCounters: AnyObject, Sendable {
    /// The counter at `index` (0 to 3), read with acquire ordering.
    func load(_ index: Int) -> UInt64
    /// Adds one to the counter at `index`, sequentially consistent.
    func increment(_ index: Int)
}

/// A file's device and inode: equal for two handles on the same file, different after a rename
/// put another file under the name.
public struct FileIdentity: Hashable, Sendable {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// One open file.
public protocol StoreFile: AnyObject, Sendable {
    /// Up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: UInt64, count: Int) throws(StoreIOError) -> [UInt8]
    /// Writes all of `bytes` at `offset`, extending the file as needed.
    func write(_ bytes: [UInt8], at offset: UInt64) throws(StoreIOError)
    /// `fdatasync`: everything written so far is durable when it returns.
    func sync() throws(StoreIOError)
    func size() throws(StoreIOError) -> UInt64
    func truncate(to size: UInt64) throws(StoreIOError)
    /// Takes an advisory lock on the file for this handle: exclusive for a writer, shared for
    /// readers. Returns `false` when another process holds a conflicting lock and `wait` is false.
    func lock(exclusive: Bool, wait: Bool) throws(StoreIOError) -> Bool
    /// Releases this handle's lock, if it holds one.
    func unlock()
    /// The file's device and inode, `nil` when the layer cannot tell.
    func identity() -> FileIdentity?
    func close()
}

extension StoreFile {
    public func unlock() {}
    public func identity() -> FileIdentity? { nil }
}

/// A failed file operation: which, on which file, and the system's reason.
public struct StoreIOError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String
    /// The `errno` value, 0 when there is none.
    public var code: Int32
    public var reason: String

    public init(operation: String, path: String, code: Int32, reason: String) {
        self.operation = operation
        self.path = path
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(operation) \(path) failed: \(reason)" }
}
