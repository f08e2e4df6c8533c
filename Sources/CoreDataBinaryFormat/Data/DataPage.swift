/// The decoded payload of a data page (Formats/binary-store.md §5): a slot table and records.
///
/// The slot table is checked once, when the page is made, and then read in place: a cached page
/// costs its payload and nothing more, so more pages fit the cache's bound.
public struct DataPage: Sendable {
    public let payload: [UInt8]
    /// The number of records (slots).
    public let count: Int

    /// Splits a decoded payload into records, checking the slot table.
    ///
    /// - Parameter pageOffset: the page's file offset, for error locations.
    public init(payload: [UInt8], pageOffset: UInt64) throws(BinaryFormatError) {
        // Built only for an error: every page read and written is checked here.
        func location() -> String { "data file offset \(pageOffset) (data page)" }
        var reader = ByteReader(payload)
        let count = Int(try reader.uint32("record count"))
        guard count >= 1, count <= BinaryStoreLayout.maximumRecordsPerPage, 4 + 4 * count <= payload.count else {
            throw BinaryFormatError(location(), "record count \(count) does not fit the page")
        }
        var previous = 4 + 4 * count
        for slot in 0..<count {
            let offset = Int(try reader.uint32("record offset"))
            guard offset >= previous, offset < payload.count else {
                throw BinaryFormatError(location(), "slot \(slot) points to \(offset), outside the records")
            }
            previous = offset + 1
        }
        self.payload = payload
        self.count = count
    }

    /// The start of the record in `slot` (checked at init: increasing, inside the payload).
    @inline(__always)
    private func offset(_ slot: Int) -> Int {
        payload.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4 + 4 * slot, as: UInt32.self))) }
    }

    /// The byte range of the record in `slot`.
    public func range(of slot: Int) -> Range<Int>? {
        guard slot >= 0, slot < count else { return nil }
        let end = slot + 1 < count ? offset(slot + 1) : payload.count
        return offset(slot)..<end
    }
}

/// Packs records into data-page payloads of about the target page size.
public struct DataPageBuilder {
    /// Pages are filled up to this many decoded bytes: the file header's target page size (§2).
    public let targetPageSize: Int
    private var records: ByteWriter
    private var offsets: [Int] = []

    /// A builder filling pages up to `targetPageSize` decoded bytes (the file header's value).
    public init(targetPageSize: Int = BinaryStoreLayout.targetPageSize) {
        self.targetPageSize = targetPageSize
        records = ByteWriter(capacity: targetPageSize)
    }

    public var isEmpty: Bool { offsets.isEmpty }
    public var count: Int { offsets.count }

    /// Whether a record of `length` bytes should start a new page.
    public func isFull(adding length: Int) -> Bool {
        guard !offsets.isEmpty else { return false }
        return offsets.count >= BinaryStoreLayout.maximumRecordsPerPage
            || 4 + 4 * (offsets.count + 1) + records.count + length > targetPageSize
    }

    /// Adds one encoded record; returns its slot.
    public mutating func add<C: Collection>(_ record: C) -> Int where C.Element == UInt8 {
        offsets.append(records.count)
        records.append(record)
        return offsets.count - 1
    }

    /// Adds one encoded record given as a slice of a page or log block; returns its slot.
    /// (Concrete: the generic one, called from another module, copies a byte at a time.)
    public mutating func add(_ record: ArraySlice<UInt8>) -> Int {
        offsets.append(records.count)
        records.append(record)
        return offsets.count - 1
    }

    /// The payload of the page and an empty builder for the next.
    public mutating func finish() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + 4 * offsets.count + records.count)
        writer.uint32(UInt32(offsets.count))
        let base = 4 + 4 * offsets.count
        for offset in offsets { writer.uint32(UInt32(base + offset)) }
        writer.append(records.bytes)
        self = DataPageBuilder(targetPageSize: targetPageSize)
        return writer.bytes
    }
}
