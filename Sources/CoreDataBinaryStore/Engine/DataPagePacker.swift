import CoreDataBinaryFormat
import CoreDataStorage

/// Packs records into data pages (Formats/binary-store.md §5) handed to a ``PageBatchWriter``,
/// and remembers which page and slot each object's record took, so that the new index can point
/// at it once the pages' offsets are known. Checkpoints and compaction share it.
///
/// Threading: used by one thread.
struct DataPagePacker {
    private var builder: DataPageBuilder
    private var pending: [(entityID: Int, key: Int64, slot: Int)] = []
    private var placed: [(entityID: Int, key: Int64, page: Int, slot: Int)] = []

    /// A packer filling pages up to `targetPageSize` decoded bytes (the file header's value).
    init(targetPageSize: Int) {
        builder = DataPageBuilder(targetPageSize: targetPageSize)
    }

    /// Adds one record; `indexed` says whether the index should point at it (a tombstone kept
    /// only for what it hides is not indexed).
    mutating func add(_ record: ArraySlice<UInt8>, entityID: Int, key: Int64, indexed: Bool, to writer: inout PageBatchWriter) throws(StoreError) {
        if builder.isFull(adding: record.count) { try emit(to: &writer) }
        let slot = builder.add(record)
        if indexed { pending.append((entityID, key, slot)) }
    }

    /// Writes the last page, then sets the location of every indexed record in `index`.
    mutating func finish(to writer: inout PageBatchWriter, into index: inout ObjectIndex) throws(StoreError) {
        try emit(to: &writer)
        try writer.encodeQueued()
        for item in placed {
            index.set(entityID: item.entityID, key: item.key, location: RecordLocation.page(offset: writer.offset(of: item.page), slot: item.slot).raw)
        }
        placed.removeAll()
    }

    private mutating func emit(to writer: inout PageBatchWriter) throws(StoreError) {
        guard !builder.isEmpty else { return }
        let page = try writer.add(.data, builder.finish())
        for item in pending { placed.append((item.entityID, item.key, page, item.slot)) }
        pending.removeAll(keepingCapacity: true)
    }
}
