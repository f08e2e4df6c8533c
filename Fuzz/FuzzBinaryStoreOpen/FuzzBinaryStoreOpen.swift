// libFuzzer target: arbitrary bytes as a whole binary store on an in-memory file system. The
// input is a 32-bit little-endian length n, then n bytes of data file, then the log; every
// checksum the format has is rewritten first so damage reaches the code behind the checks. The
// store is verified, opened (with log recovery) under the golden store's model, every entity is
// fetched and every fetched row read by ID, verified again and closed (a checkpoint). Any throw is
// fine; any crash, hang or sanitizer report is a bug.
//
// With COREDATA_FUZZ_MAKE_CORPUS=<folder> set, the binary instead writes the seed corpora of all
// binary targets into that folder and exits (Fuzz/make-corpus.sh).
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import Foundation
import FuzzBinarySupport

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    if let folder = ProcessInfo.processInfo.environment["COREDATA_FUZZ_MAKE_CORPUS"] {
        do {
            try CorpusMaker.make(root: folder)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("make corpus: \(error)\n".utf8))
            exit(1)
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 4 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var length = 0
    for index in 0..<4 { length |= Int(bytes[index]) << (8 * index) }
    length = min(length, size - 4)
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
    guard let store = try? BinaryStore(path: "/fuzz/store", model: FuzzModel.model, metadata: StoreMetadata(), options: options) else { return 0 }
    _ = try? store.objectCounts()
    _ = try? store.metadata()
    for entity in FuzzModel.model.entities {
        guard let result = try? store.execute(StoreFetchRequest(entity: entity)) else { continue }
        if case .rows(let rows) = result {
            for row in rows { _ = try? store.row(for: row.objectID) }
        }
        _ = try? store.execute(StoreFetchRequest(entity: entity, resultType: .objectIDs))
        _ = try? store.execute(StoreFetchRequest(entity: entity, resultType: .count))
    }
    _ = try? store.verify()
    try? store.close()
    return 0
}
