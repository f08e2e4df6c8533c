// The seed corpora of the binary-store fuzz targets, made from the golden stores so they follow
// the format as it is today (Fuzz/make-corpus.sh runs this through FuzzBinaryStoreOpen's
// LLVMFuzzerInitialize hook).
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataPageCodec
import CoreDataStorage
import CoreDataTestModel
import Foundation
import FuzzBinarySupport

/// Writes the seed corpora of the binary targets from the golden store and a fresh store with an
/// un-checkpointed log, and the pages of the version-3 golden store.
///
/// Reads `Tests/CoreDataBinaryFormatTests/Fixtures/golden-v1.store` and its log, and
/// `golden-v3.store`, from the package.
public enum CorpusMaker {
    static func write(_ bytes: [UInt8], _ name: String, in folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: folder).appendingPathComponent(name))
    }

    /// The data file and log of a store opened from the golden fixture, with `saves` more saves
    /// left in its log (no checkpoint).
    static func storeWithLog(golden: [UInt8], goldenLog: [UInt8]) throws -> (data: [UInt8], log: [UInt8]) {
        let fs = MemoryFileSystem(files: ["/s/store": golden, "/s/store-wal": goldenLog])
        var options = BinaryStoreOptions()
        options.fileSystem = fs
        options.backgroundCheckpoints = false
        options.durability = .full
        let store = try BinaryStore(path: "/s/store", model: BinaryTestModel.model, metadata: StoreMetadata(), options: options)
        _ = try store.save(StoreChangeSet(inserted: [BinaryTestModel.item(6, owner: 1, tags: [2]), BinaryTestModel.tag(3, "green", items: [6])]))
        var updated = BinaryTestModel.item(3, owner: nil, tags: [1, 2, 3])
        updated.version = 1
        updated.values["text"] = .string("third")
        _ = try store.save(StoreChangeSet(updated: [updated], deleted: [(StoreObjectID(entityName: "Item", primaryKey: 4), 1)]))
        try store.setMetadata(StoreMetadata(["Fixture": "fuzz", "Count": 3]))
        return (fs.contents(of: "/s/store") ?? [], framesOnly(fs.contents(of: "/s/store-wal") ?? []))
    }

    /// The log up to the end of its last frame: the zeros a store preallocates after it
    /// (Formats/wal.md §5) would make a seed of a mebibyte, and libFuzzer sizes its inputs by the
    /// largest seed.
    static func framesOnly(_ log: [UInt8]) -> [UInt8] {
        var offset = LogLayout.firstFrameOffset
        while log.count - offset >= LogLayout.frameHeaderSize,
              let header = LogFrameHeader(decoding: Array(log[offset..<(offset + LogLayout.frameHeaderSize)])),
              header.totalLength > 0, header.totalLength <= log.count - offset {
            offset += header.totalLength
        }
        return Array(log.prefix(offset))
    }

    /// The golden store's log replaced by one save that puts a Tag (entity 2) and then logs a
    /// catalog naming only Item: records decoded against the old catalog, then a catalog that
    /// renumbers them (found while writing FuzzBinaryStoreOpen: opening indexed past the catalog).
    static func catalogShrinksLog(golden: [UInt8]) throws -> [UInt8] {
        let header = try FileHeader(decoding: Array(golden.prefix(64)))
        var best: RootSlot?
        for offset in BinaryStoreLayout.rootSlotOffsets {
            if case .valid(let slot) = RootSlot.decode(Array(golden[offset..<(offset + 128)])), slot.generation > (best?.generation ?? 0) { best = slot }
        }
        guard let root = best else { throw BinaryFormatError("golden", "no root") }
        let at = Int(root.catalogOffset)
        let pageHeader = try PageHeader(decoding: Array(golden[at..<(at + 32)]), at: root.catalogOffset)
        let catalog = try Catalog(decoding: try PageCodec.decodePayload(pageHeader, page: Array(golden[at..<(at + pageHeader.totalLength)]), at: root.catalogOffset))
        var shrunk = Catalog()
        shrunk.register(entity: catalog.entities[0].name, properties: catalog.entities[0].properties)
        var writer = LogFrameWriter(salt: root.logSalt, sequence: 0, chain: root.logSalt, capacity: 256)
        writer.appendEntry(kind: .put, sizeHint: 32) { RecordCodec.encode(BinaryTestModel.tag(9, "orphan"), catalog: catalog, into: &$0) }
        writer.appendEntry(kind: .catalog, sizeHint: 64) { $0.append(shrunk.encoded()) }
        writer.finish()
        return LogHeader(storeUUID: header.storeUUID).encoded() + writer.bytes
    }

    static func lengthPrefixed(_ data: [UInt8], _ log: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.uint32(UInt32(data.count))
        writer.append(data)
        writer.append(log)
        return writer.bytes
    }

    /// Writes the seeds into `root/<Target>/`, overwriting files of the same name.
    ///
    /// - Parameters:
    ///   - targets: the targets whose seeds to write; `nil` for all of them. (The seeds of the
    ///     log-holding store differ from run to run: its UUID and log salt are random.)
    ///   - package: the package's folder; by default the current directory (Fuzz/make-corpus.sh
    ///     runs from there).
    public static func make(root: String, targets: Set<String>? = nil, package: String = ".") throws {
        func write(_ bytes: [UInt8], _ name: String, for target: String) throws {
            guard targets?.contains(target) ?? true else { return }
            try CorpusMaker.write(bytes, name, in: "\(root)/\(target)")
        }
        let fixtures = "\(package)/Tests/CoreDataBinaryFormatTests/Fixtures/golden-v1.store"
        let golden = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixtures)))
        let goldenLog = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixtures + "-wal")))
        let (data, log) = try storeWithLog(golden: golden, goldenLog: goldenLog)
        // The version-3 fixture adds secondary-index pages and their directory (binary-store.md §7.2).
        let goldenV3 = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(package)/Tests/CoreDataBinaryFormatTests/Fixtures/golden-v3.store")))

        // FuzzBinaryHeader: the first 1,152 bytes (header and both root slots) of each store.
        try write(Array(golden.prefix(1_152)), "golden-header", for: "FuzzBinaryHeader")
        try write(Array(data.prefix(1_152)), "logged-header", for: "FuzzBinaryHeader")
        try write(Array(goldenV3.prefix(1_152)), "golden-v3-header", for: "FuzzBinaryHeader")

        // FuzzBinaryPage and FuzzBinaryRecord: every page of the stores; every record of the data
        // pages of the two stores of the fixed catalog's model.
        var pages = Set<[UInt8]>()
        var records: [[UInt8]] = []
        for (name, image) in [("golden", golden), ("logged", data), ("golden-v3", goldenV3)] {
            var offset = BinaryStoreLayout.firstPageOffset
            while image.count - offset >= 32, let header = try? PageHeader(decoding: Array(image[offset..<(offset + 32)]), at: UInt64(offset)),
                  header.totalLength <= image.count - offset {
                let page = Array(image[offset..<(offset + header.totalLength)])
                let kind = "\(header.kind)".replacingOccurrences(of: " ", with: "-")
                if pages.insert(page).inserted { try write(page, "\(name)-\(offset)-\(kind)", for: "FuzzBinaryPage") }
                if header.kind == .data, name != "golden-v3", let payload = try? PageCodec.decodePayload(header, page: page, at: UInt64(offset)),
                   let dataPage = try? DataPage(payload: payload, pageOffset: UInt64(offset)) {
                    for slot in 0..<dataPage.count {
                        if let range = dataPage.range(of: slot) { records.append(Array(payload[range])) }
                    }
                }
                offset += header.totalLength
            }
        }
        // Records encoded with the fixed catalog, both encoders, a tombstone.
        for row in [BinaryTestModel.item(7, owner: 2, tags: [1, 9]), BinaryTestModel.owner(2, "Bo", items: [7]), BinaryTestModel.tag(4, "", items: [])] {
            var writer = ByteWriter()
            RecordCodec.encode(row, catalog: BinaryTestModel.catalog, into: &writer)
            records.append(writer.bytes)
        }
        var tombstone = ByteWriter()
        RecordCodec.encodeTombstone(StoreObjectID(entityName: "Item", primaryKey: 8), version: 3, catalog: BinaryTestModel.catalog, into: &tombstone)
        records.append(tombstone.bytes)
        var seen = Set<[UInt8]>()
        for record in records where seen.insert(record).inserted {
            try write(record, String(format: "record-%02d", seen.count), for: "FuzzBinaryRecord")
        }

        // FuzzLogFrame: the logs whole, and each frame alone after the header.
        try write(goldenLog, "golden-log", for: "FuzzLogFrame")
        try write(log, "logged-log", for: "FuzzLogFrame")
        var offset = LogLayout.firstFrameOffset
        var frame = 0
        while log.count - offset >= LogLayout.frameHeaderSize,
              let header = LogFrameHeader(decoding: Array(log[offset..<(offset + LogLayout.frameHeaderSize)])),
              header.totalLength <= log.count - offset {
            frame += 1
            try write(Array(log[0..<64]) + Array(log[offset..<(offset + header.totalLength)]), "logged-frame-\(frame)", for: "FuzzLogFrame")
            offset += header.totalLength
        }

        // FuzzBinaryStoreOpen: data length (4 bytes), data file, log.
        try write(lengthPrefixed(golden, goldenLog), "golden", for: "FuzzBinaryStoreOpen")
        try write(lengthPrefixed(data, log), "logged", for: "FuzzBinaryStoreOpen")
        try write(lengthPrefixed(data, []), "logged-no-log", for: "FuzzBinaryStoreOpen")
        try write(lengthPrefixed(golden, try catalogShrinksLog(golden: golden)), "regression-log-catalog-shrinks", for: "FuzzBinaryStoreOpen")

        // FuzzBinaryStoreSaves: a new store (the empty input, and two programs) and programs on
        // the golden store and the store with a log.
        for (name, input) in savesSeeds(golden: golden, goldenLog: goldenLog, logged: data, log: log) {
            try write(input, name, for: "FuzzBinaryStoreSaves")
        }
    }

    /// Operand bytes that do not depend on the run (a linear congruential generator), so the
    /// seeds come out the same every time.
    struct SeedBytes {
        var state: UInt64

        mutating func next(_ count: Int = 255) -> [UInt8] {
            (0..<count).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
        }
    }

    /// Inputs of FuzzBinaryStoreSaves. Options bits: 1 exclusive access, 2 normal durability,
    /// 4 history, 8 a cache smaller than a page, 16 name-keyed rows.
    static func savesSeeds(golden: [UInt8], goldenLog: [UInt8], logged: [UInt8], log: [UInt8]) -> [(String, [UInt8])] {
        typealias Operation = FuzzBinaryStoreSaves.Operation
        var bytes = SeedBytes(state: 19)
        // All 0xFF: four Items whose strings and data take 144,000 bytes each (several pages).
        let large = [UInt8](repeating: 0xFF, count: 255)
        let everyOperation: [(Operation, [UInt8])] = [
            (.insert, bytes.next()), (.insert, bytes.next()), (.insert, bytes.next()), (.update, bytes.next()),
            (.mixed, bytes.next()), (.faulty, bytes.next()), (.checkpoint, []), (.delete, bytes.next()),
            (.metadata, bytes.next()), (.batchUpdate, bytes.next()), (.faulty, bytes.next()), (.compact, []),
            (.insert, large), (.crash, []), (.update, bytes.next()), (.batchDelete, bytes.next()), (.reopen, []),
            (.mixed, bytes.next()), (.verify, []), (.checkpointTruncatingLog, []), (.faulty, bytes.next()),
        ]
        let saves: [(Operation, [UInt8])] = [
            (.update, bytes.next()), (.mixed, bytes.next()), (.faulty, bytes.next()), (.insert, bytes.next()),
            (.crash, []), (.delete, bytes.next()), (.batchUpdate, bytes.next()), (.checkpoint, []), (.mixed, bytes.next()),
            (.reopen, []), (.metadata, bytes.next()), (.compact, []),
        ]
        let faults: [(Operation, [UInt8])] = [
            (.faulty, bytes.next()), (.faulty, bytes.next()), (.faulty, bytes.next()), (.batchUpdate, bytes.next()),
            (.faulty, bytes.next()), (.crash, []), (.faulty, bytes.next()), (.batchDelete, bytes.next()), (.verify, []),
        ]
        return [
            ("new-empty", []),
            ("new-every-operation", FuzzBinaryStoreSaves.input(data: [], log: [], options: 1, operations: everyOperation)),
            ("new-shared-history", FuzzBinaryStoreSaves.input(data: [], log: [], options: 2 | 4 | 8, operations: everyOperation)),
            ("golden-saves", FuzzBinaryStoreSaves.input(data: golden, log: goldenLog, options: 1, operations: saves)),
            ("golden-faults", FuzzBinaryStoreSaves.input(data: golden, log: goldenLog, options: 16, operations: faults)),
            ("logged-saves", FuzzBinaryStoreSaves.input(data: logged, log: log, options: 2 | 8, operations: saves)),
        ]
    }
}
