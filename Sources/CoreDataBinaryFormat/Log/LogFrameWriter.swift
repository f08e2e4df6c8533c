import CoreDataPageCodec

/// Writes one save's frames (Formats/wal.md §3–4) straight into one buffer: entries are encoded
/// in place, frames are closed when the next entry would pass the payload limit, and the last
/// frame carries the commit flag. No I/O; no copy of any record.
public struct LogFrameWriter {
    /// The frames so far (after ``finish()``, the whole save).
    public private(set) var writer: ByteWriter
    public private(set) var sequence: UInt64
    /// The checksum of the last closed frame: the seed of the next.
    public private(set) var chain: UInt64
    private let salt: UInt64
    private var frameStart: Int?
    /// Where each frame starts in ``bytes``.
    public private(set) var frameOffsets: [Int] = []
    /// The first entry whose body passed its limit (``appendEntry(kind:sizeHint:limit:_:)``)
    /// and its length. The frames are then unusable: the caller throws instead of writing them.
    public private(set) var oversizedEntry: (offset: Int, length: Int)?

    /// - Parameters:
    ///   - sequence: the sequence number of the last frame already in the log.
    ///   - chain: that frame's checksum, or the salt when the log is empty.
    public init(salt: UInt64, sequence: UInt64, chain: UInt64, capacity: Int) {
        self.salt = salt
        self.sequence = sequence
        self.chain = chain
        self.writer = ByteWriter(capacity: capacity)
    }

    public var bytes: [UInt8] { writer.bytes }

    /// Appends one entry whose body `encode` writes; returns the entry's offset in ``bytes``.
    ///
    /// - Parameter sizeHint: the body's expected size, to close a frame before it overflows.
    @discardableResult
    ///
    /// A body longer than `limit` (at most `LogLayout.maximumEntrySize`) is recorded in
    /// ``oversizedEntry`` rather than trapping: its size comes from the caller's values.
    public mutating func appendEntry(kind: LogEntry.Kind, sizeHint: Int, limit: Int = LogLayout.maximumEntrySize, _ encode: (inout ByteWriter) -> Void) -> Int {
        if let start = frameStart, writer.count - start - LogLayout.frameHeaderSize + LogLayout.entryHeaderSize + sizeHint > LogLayout.maximumFramePayload,
           writer.count - start > LogLayout.frameHeaderSize {
            closeFrame(commit: false)
        }
        if frameStart == nil { openFrame() }
        let entry = writer.count
        writer.uint8(kind.rawValue)
        writer.uint32(0)
        writer.uint32(0)
        encode(&writer)
        let bodyStart = entry + LogLayout.entryHeaderSize
        let length = writer.count - bodyStart
        if length > min(limit, LogLayout.maximumEntrySize), oversizedEntry == nil { oversizedEntry = (entry, length) }
        writer.patchUInt32(UInt32(truncatingIfNeeded: length), at: entry + 1)
        writer.patchUInt32(LogEntryCodec.bodyChecksum(writer.bytes[bodyStart..<writer.count]), at: entry + 5)
        return entry
    }

    /// Writes a sync marker: an empty frame that says every frame before it was synced before it
    /// was written (Formats/wal.md §3). Call before the first entry.
    public mutating func appendSyncMarker() {
        precondition(frameStart == nil && writer.count == 0, "a sync marker comes before a save's entries")
        openFrame()
        closeFrame(commit: false)
    }

    /// Closes the last frame as the save's commit frame.
    public mutating func finish() {
        if frameStart == nil { openFrame() }
        closeFrame(commit: true)
    }

    private mutating func openFrame() {
        frameStart = writer.count
        frameOffsets.append(writer.count)
        sequence += 1
        writer.uint32(LogLayout.frameMagic)
        writer.uint8(0)
        writer.zeros(3)
        writer.uint32(0)
        writer.uint32(0)
        writer.uint64(salt)
        writer.uint64(sequence)
    }

    private mutating func closeFrame(commit: Bool) {
        guard let start = frameStart else { return }
        if commit { writer.bytes[start + 4] = LogLayout.commitFlag }
        // Only an oversized entry (``oversizedEntry``) makes a payload pass 4 GiB; such frames are never written.
        writer.patchUInt32(UInt32(truncatingIfNeeded: writer.count - start - LogLayout.frameHeaderSize), at: start + 8)
        let seed = chain
        let end = writer.count
        chain = writer.bytes.withUnsafeBytes { raw in
            PageChecksum.xxh3(UnsafeRawBufferPointer(rebasing: raw[start..<end]), seed: seed)
        }
        writer.uint64(chain)
        frameStart = nil
    }
}
