import CoreDataBinaryFormat
import CoreDataStorage
import Dispatch
import Foundation

/// Appends pages to a data file in order while encoding them (LZ4 and checksum,
/// Formats/binary-store.md §4) on every core.
///
/// A checkpoint or compaction spends most of its time compressing pages, one after another on
/// one core. Here pages are queued by number and encoded a batch at a time with
/// `concurrentPerform`; a page's offset is known once its batch is encoded, so a caller keeps
/// the page's number (``add(_:_:)``) and asks for ``offset(of:)`` after ``encodeQueued()``.
///
/// Threading: used by one thread; only the encoding fans out. Memory: at most one batch of
/// payloads and 8 MiB of encoded pages are held before they are written.
struct PageBatchWriter {
    /// Pages encoded together: enough to keep every core busy, few enough to bound memory.
    static let batchPages = 32
    /// Encoded bytes gathered before a write.
    static let writeBytes = 8 << 20

    private let file: any StoreFile
    private let generation: UInt64
    /// Where the next encoded page goes.
    private(set) var end: UInt64
    /// The file offset of `output`'s first byte.
    private var outputStart: UInt64
    private var output: [UInt8] = []
    private var queue: [(kind: PageKind, payload: [UInt8])] = []
    private var offsets: [UInt64] = []

    /// A writer that appends at `start`, after `prefix` (bytes written first, e.g. a new file's
    /// header area).
    init(file: any StoreFile, generation: UInt64, at start: UInt64, prefix: [UInt8] = []) {
        self.file = file
        self.generation = generation
        outputStart = start
        output = prefix
        end = start + UInt64(prefix.count)
    }

    /// Queues a page; returns its number for ``offset(of:)``.
    mutating func add(_ kind: PageKind, _ payload: [UInt8]) throws(StoreError) -> Int {
        queue.append((kind, payload))
        let number = offsets.count + queue.count - 1
        if queue.count >= Self.batchPages { try encodeQueued() }
        return number
    }

    /// Encodes every queued page, so that their offsets are known.
    mutating func encodeQueued() throws(StoreError) {
        guard !queue.isEmpty else { return }
        for page in Self.encode(queue, generation: generation) {
            offsets.append(end)
            end += UInt64(page.count)
            output.append(contentsOf: page)
        }
        queue.removeAll(keepingCapacity: true)
        if output.count >= Self.writeBytes { try write() }
    }

    /// The offset of page `number`; its batch must have been encoded.
    func offset(of number: Int) -> UInt64 {
        precondition(number < offsets.count, "PageBatchWriter.offset(of:) asked for page \(number) before its batch was encoded")
        return offsets[number]
    }

    /// Encodes and writes everything queued; ``end`` is then the file's data end.
    mutating func finish() throws(StoreError) {
        try encodeQueued()
        try write()
    }

    private mutating func write() throws(StoreError) {
        guard !output.isEmpty else { return }
        do { try file.write(output, at: outputStart) } catch { throw BinaryStore.ioError(error) }
        outputStart += UInt64(output.count)
        output.removeAll(keepingCapacity: true)
    }

    private static func encode(_ pages: [(kind: PageKind, payload: [UInt8])], generation: UInt64) -> [[UInt8]] {
        if pages.count == 1 { return [PageCodec.encode(kind: pages[0].kind, payload: pages[0].payload, generation: generation)] }
        let results = EncodedPages(count: pages.count)
        DispatchQueue.concurrentPerform(iterations: pages.count) { index in
            results.set(index, PageCodec.encode(kind: pages[index].kind, payload: pages[index].payload, generation: generation))
        }
        return results.take()
    }
}

/// Slots that `concurrentPerform` iterations fill, each its own: no two touch one slot, and the
/// caller reads them only after every iteration returned.
private final class EncodedPages: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<[UInt8]>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: [])
    }

    func set(_ index: Int, _ page: [UInt8]) { slots[index] = page }

    func take() -> [[UInt8]] { Array(slots) }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }
}
