// Fuzz target: arbitrary bytes as a whole binary store on an in-memory file system. The
// input is a 32-bit little-endian length n, then n bytes of data file, then the log; every
// checksum the format has is rewritten first so damage reaches the code behind the checks. The
// store is verified, opened (with log recovery) under the golden store's model, every entity is
// fetched and every fetched row read by ID, fetched again sorted by each string attribute with
// a limit (which reads the page bounds, §7.3), verified again and closed (a checkpoint). Any throw is
// fine; any crash, hang or sanitizer report is a bug.
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import CoreDataTestModel
import FuzzBinarySupport

/// The body of the `FuzzBinaryStoreOpen` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzBinaryStoreOpen {
    /// Opens `bytes` (data-file length, data file, log) as a store and reads everything in it.
    ///
    /// Returns for every input, whatever the store throws; a crash is the bug the target looks for.
    public static func run(_ bytes: [UInt8]) {
        guard bytes.count >= 4 else { return }
        var length = 0
        for index in 0..<4 { length |= Int(bytes[index]) << (8 * index) }
        length = min(length, bytes.count - 4)
        var dataFile = Array(bytes[4..<(4 + length)])
        var log = Array(bytes[(4 + length)...])
        ChecksumFixer.fixDataFile(&dataFile)
        ChecksumFixer.fixLog(&log)
        var files = ["/fuzz/store": dataFile]
        if !log.isEmpty { files["/fuzz/store-wal"] = log }

        _ = BinaryStore.verify(path: "/fuzz/store", fileSystem: MemoryFileSystem(files: files))

        var options = BinaryStoreOptions()
        options.fileSystem = MemoryFileSystem(files: files)
        options.backgroundCheckpoints = false
        options.pageCacheBytes = 1 << 20
        guard let store = try? BinaryStore(path: "/fuzz/store", model: BinaryTestModel.model, metadata: StoreMetadata(), options: options) else { return }
        _ = try? store.objectCounts()
        _ = try? store.metadata()
        for entity in BinaryTestModel.model.entities {
            guard let result = try? store.execute(StoreFetchRequest(entity: entity)) else { continue }
            if case .rows(let rows) = result {
                for row in rows { _ = try? store.row(for: row.objectID) }
            }
            _ = try? store.execute(StoreFetchRequest(entity: entity, resultType: .objectIDs))
            _ = try? store.execute(StoreFetchRequest(entity: entity, resultType: .count))
            for attribute in entity.properties.compactMap({ $0 as? NSAttributeDescription }) where attribute.attributeType == .stringAttributeType {
                for ascending in [true, false] {
                    _ = try? store.execute(StoreFetchRequest(
                        entity: entity, sortDescriptors: [CoreDataPredicate.NSSortDescriptor(key: attribute.name, ascending: ascending)], limit: 2))
                }
            }
        }
        _ = try? store.verify()
        try? store.close()
    }
}
