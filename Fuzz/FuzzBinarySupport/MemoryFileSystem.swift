// The file layer the store-level fuzz targets run the engine on: whole stores in memory, so an
// input costs no disk I/O and a crash leaves nothing behind.
import CoreDataBinaryStore
import Foundation

/// A minimal in-memory ``StoreFileSystem``: current contents only; every operation succeeds except
/// one that would grow a file past ``maximumFileSize`` (a full disk: `EFBIG`), so offsets read from
/// damaged bytes cannot make the fuzzer allocate gigabytes.
///
/// An open file is the file, not its path, as a POSIX descriptor is: it reads and writes the same
/// bytes after a rename (compaction renames the file it wrote over the store and goes on using it)
/// or a remove.
public final class MemoryFileSystem: StoreFileSystem, @unchecked Sendable {
    /// One file's bytes; guarded by the file system's lock.
    final class Node: @unchecked Sendable {
        var bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    final class File: StoreFile, @unchecked Sendable {
        let owner: MemoryFileSystem
        let node: Node
        let path: String
        init(owner: MemoryFileSystem, node: Node, path: String) {
            self.owner = owner
            self.node = node
            self.path = path
        }

        func read(at offset: UInt64, count: Int) throws(StoreIOError) -> [UInt8] {
            owner.lock.withLock {
                let bytes = node.bytes
                guard offset < UInt64(bytes.count), count > 0 else { return [] }
                let start = Int(offset)
                return Array(bytes[start..<min(bytes.count, start + min(count, bytes.count))])
            }
        }

        func write(_ data: [UInt8], at offset: UInt64) throws(StoreIOError) {
            guard offset <= UInt64(MemoryFileSystem.maximumFileSize), data.count <= MemoryFileSystem.maximumFileSize - Int(offset) else {
                throw StoreIOError(operation: "write", path: path, code: 27, reason: "File too large")
            }
            owner.lock.withLock {
                let start = Int(offset)
                let end = start + data.count
                // Raw copies, not replaceSubrange: the store preallocates its log a mebibyte at a
                // time, and the generic paths copy byte by byte in the unoptimized fuzz build.
                if node.bytes.count < end { node.bytes.append(contentsOf: [UInt8](repeating: 0, count: end - node.bytes.count)) }
                node.bytes.withUnsafeMutableBytes { file in
                    data.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: file[start..<end]).copyMemory(from: $0) }
                }
            }
        }

        func sync() throws(StoreIOError) {}
        func size() throws(StoreIOError) -> UInt64 { owner.lock.withLock { UInt64(node.bytes.count) } }
        func truncate(to size: UInt64) throws(StoreIOError) {
            guard size <= UInt64(MemoryFileSystem.maximumFileSize) else {
                throw StoreIOError(operation: "truncate", path: path, code: 27, reason: "File too large")
            }
            owner.lock.withLock {
                if Int(size) < node.bytes.count {
                    node.bytes.removeSubrange(Int(size)...)
                } else {
                    node.bytes.append(contentsOf: [UInt8](repeating: 0, count: Int(size) - node.bytes.count))
                }
            }
        }

        func lock(exclusive: Bool, wait: Bool) throws(StoreIOError) -> Bool { true }
        func close() {}
    }

    /// 64 MiB: far more than any seed grows to.
    public static let maximumFileSize = 64 << 20
    let lock = NSLock()
    /// The files by path; guarded by `lock`.
    var nodes: [String: Node]

    public init(files: [String: [UInt8]] = [:]) { nodes = files.mapValues(Node.init) }

    public func open(_ path: String, create: Bool, readOnly: Bool) throws(StoreIOError) -> any StoreFile {
        let node = lock.withLock { () -> Node? in
            if nodes[path] == nil, create { nodes[path] = Node([]) }
            return nodes[path]
        }
        guard let node else { throw StoreIOError(operation: "open", path: path, code: 2, reason: "No such file or directory") }
        return File(owner: self, node: node, path: path)
    }

    public func fileExists(_ path: String) -> Bool { lock.withLock { nodes[path] != nil } }
    public func remove(_ path: String) throws(StoreIOError) { lock.withLock { nodes[path] = nil } }
    public func rename(_ source: String, to destination: String) throws(StoreIOError) {
        lock.lock()
        defer { lock.unlock() }
        guard let node = nodes[source] else { throw StoreIOError(operation: "rename", path: source, code: 2, reason: "No such file or directory") }
        nodes[source] = nil
        nodes[destination] = node
    }
    public func syncDirectory(containing path: String) throws(StoreIOError) {}

    /// A snapshot of one file.
    public func contents(of path: String) -> [UInt8]? { lock.withLock { nodes[path]?.bytes } }

    /// A snapshot of every file: what a process that crashed now would leave on disk (nothing
    /// here is ever lost to a missing sync, so it is a process crash, not a power cut).
    public func snapshot() -> [String: [UInt8]] { lock.withLock { nodes.mapValues(\.bytes) } }
}
