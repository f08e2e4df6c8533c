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
/// A full batch is encoded in the background while the caller fills the next one (packing
/// records leaves the other cores idle otherwise); at most one batch is in flight.
///
/// Threading: used by one thread; only the encoding fans out, and everything written or
/// counted happens on the caller's thread. Memory: at most two batches of payloads and 8 MiB of
/// encoded pages are held before they are written.
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
    /// The batch being encoded in the background, and its page count.
    private var inFlight: (batch: EncodingBatch, count: Int)?
    /// Whether the bounds of each data page are computed as it is encoded (§7.3).
    private let collectsPageBounds: Bool
    /// The bounds of the data pages encoded so far, in stored order (§7.3).
    private(set) var pageBounds: [PageBoundsEntry] = []

    /// A writer that appends at `start`, after `prefix` (bytes written first, e.g. a new file's
    /// header area); with `collectsPageBounds` (a file of format version 4 or later), it also
    /// computes each data page's bounds on the core that encodes it.
    init(file: any StoreFile, generation: UInt64, at start: UInt64, prefix: [UInt8] = [], collectsPageBounds: Bool = false) {
        self.file = file
        self.generation = generation
        self.collectsPageBounds = collectsPageBounds
        outputStart = start
        output = prefix
        end = start + UInt64(prefix.count)
    }

    /// Queues a page; returns its number for ``offset(of:)``.
    mutating func add(_ kind: PageKind, _ payload: [UInt8]) throws(StoreError) -> Int {
        queue.append((kind, payload))
        let number = offsets.count + (inFlight?.count ?? 0) + queue.count - 1
        if queue.count >= Self.batchPages {
            try collectInFlight()
            let batch = EncodingBatch()
            let pages = queue
            let (generation, bounds) = (generation, collectsPageBounds)
            batch.group.enter()
            DispatchQueue.global().async {
                batch.results = Self.encode(pages, generation: generation, bounds: bounds)
                batch.group.leave()
            }
            inFlight = (batch, pages.count)
            queue.removeAll(keepingCapacity: true)
        }
        return number
    }

    /// Encodes every queued page, so that their offsets are known.
    mutating func encodeQueued() throws(StoreError) {
        try collectInFlight()
        guard !queue.isEmpty else { return }
        try append(Self.encode(queue, generation: generation, bounds: collectsPageBounds))
        queue.removeAll(keepingCapacity: true)
    }

    /// Waits for the batch in the background, if any, and appends its pages.
    private mutating func collectInFlight() throws(StoreError) {
        guard let (batch, _) = inFlight else { return }
        batch.group.wait()
        inFlight = nil
        try append(batch.results)
    }

    private mutating func append(_ encoded: [(page: [UInt8], bounds: [PageBoundsEntry])]) throws(StoreError) {
        for (page, bounds) in encoded {
            for var entry in bounds {
                entry.pageOffset = end
                pageBounds.append(entry)
            }
            offsets.append(end)
            end += UInt64(page.count)
            output.append(contentsOf: page)
        }
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

    /// Each page encoded, with its bounds when `bounds` and it is a data page (their page
    /// offsets 0 until the page's is known).
    private static func encode(_ pages: [(kind: PageKind, payload: [UInt8])], generation: UInt64, bounds: Bool) -> [(page: [UInt8], bounds: [PageBoundsEntry])] {
        @Sendable func encode(_ page: (kind: PageKind, payload: [UInt8])) -> (page: [UInt8], bounds: [PageBoundsEntry]) {
            let entries = bounds && page.kind == .data ? PageBoundsSummary.entries(ofDataPage: page.payload, at: 0) : []
            return (PageCodec.encode(kind: page.kind, payload: page.payload, generation: generation), entries)
        }
        if pages.count == 1 { return [encode(pages[0])] }
        let results = EncodedPages(count: pages.count)
        DispatchQueue.concurrentPerform(iterations: pages.count) { index in
            results.set(index, encode(pages[index]))
        }
        return results.take()
    }
}

/// A batch encoded in the background: its results are written before `group` is left and read
/// only after it is waited for.
private final class EncodingBatch: @unchecked Sendable {
    let group = DispatchGroup()
    var results: [(page: [UInt8], bounds: [PageBoundsEntry])] = []
}

/// Slots that `concurrentPerform` iterations fill, each its own: no two touch one slot, and the
/// caller reads them only after every iteration returned.
private final class EncodedPages: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<(page: [UInt8], bounds: [PageBoundsEntry])>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: ([], []))
    }

    func set(_ index: Int, _ page: (page: [UInt8], bounds: [PageBoundsEntry])) { slots[index] = page }

    func take() -> [(page: [UInt8], bounds: [PageBoundsEntry])] { Array(slots) }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }
}
