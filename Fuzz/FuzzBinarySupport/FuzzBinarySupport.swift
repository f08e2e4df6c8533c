// Shared by the binary-store fuzz targets: the fixed model and catalog, an in-memory file system,
// a checksum fixer (so mutated bytes get past XXH3 checks into the decoders behind them) and the
// seed-corpus maker (Fuzz/make-corpus.sh). Built only for fuzz builds (COREDATA_FUZZ=1).
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataModel
import CoreDataPageCodec
import CoreDataStorage
import Foundation

// MARK: - Model and catalog

/// The model of `Tests/CoreDataBinaryFormatTests/Fixtures/golden-v1.store` (BinaryTestModel):
/// Owner 1—* Item (ordered), Item *—* Tag, every attribute type.
public enum FuzzModel {
    public static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        func relationship(_ name: String, toMany: Bool, ordered: Bool = false) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.maxCount = toMany ? 0 : 1
            relationship.isOrdered = ordered
            relationship.isOptional = true
            return relationship
        }
        let ownerItems = relationship("items", toMany: true, ordered: true)
        let itemOwner = relationship("owner", toMany: false)
        let itemTags = relationship("tags", toMany: true)
        let tagItems = relationship("items", toMany: true)
        let owner = NSEntityDescription()
        owner.name = "Owner"
        owner.properties = [attribute("name", .stringAttributeType), ownerItems]
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            attribute("i16", .integer16AttributeType), attribute("i32", .integer32AttributeType),
            attribute("i64", .integer64AttributeType), attribute("flag", .booleanAttributeType),
            attribute("double", .doubleAttributeType), attribute("float", .floatAttributeType),
            attribute("decimal", .decimalAttributeType), attribute("text", .stringAttributeType),
            attribute("date", .dateAttributeType), attribute("blob", .binaryDataAttributeType),
            attribute("uuid", .UUIDAttributeType), attribute("uri", .URIAttributeType),
            itemOwner, itemTags,
        ]
        let tag = NSEntityDescription()
        tag.name = "Tag"
        tag.properties = [attribute("label", .stringAttributeType), tagItems]
        for (a, aEntity, b, bEntity) in [(ownerItems, owner, itemOwner, item), (itemTags, item, tagItems, tag)] {
            a.destinationEntity = bEntity
            b.destinationEntity = aEntity
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        let model = NSManagedObjectModel()
        model.entities = [owner, item, tag]
        try? model.freeze()
        return model
    }()

    /// The catalog a new store of ``model`` starts with (BinaryStore.create's order): entities by
    /// name, attributes then relationships, each sorted.
    public static let catalog: Catalog = {
        var catalog = Catalog()
        catalog.register(entity: "Item", properties: [
            "blob", "date", "decimal", "double", "flag", "float", "i16", "i32", "i64", "text", "uri", "uuid", "owner", "tags",
        ])
        catalog.register(entity: "Owner", properties: ["name", "items"])
        catalog.register(entity: "Tag", properties: ["label", "items"])
        return catalog
    }()

    public static func item(_ key: Int64, owner: Int64?, tags: [Int64] = []) -> StoreRow {
        var values: [String: StoreValue] = [
            "i16": .integer(Int64(Int16.min) + key), "i32": .integer(Int64(Int32.max) - key), "i64": .integer(Int64.min + key),
            "flag": .bool(key % 2 == 0), "double": .double(Double(key) * 1.5), "float": .double(Double(Float(key) / 4)),
            "decimal": .decimal(Decimal(string: "\(key).25") ?? 0), "text": .string("item \(key) — ünïcødé"),
            "date": .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(key))),
            "blob": .data(Data((0..<(key % 7)).map { UInt8($0) })),
            "uuid": .uuid(UUID(uuidString: String(format: "E621E1F8-C36C-495A-93FC-0C247A3E%04X", key)) ?? UUID()),
            "uri": .uri(URL(string: "https://example.com/items/\(key)?q=1") ?? URL(fileURLWithPath: "/")),
            "tags": .references(tags.map { StoreObjectID(entityName: "Tag", primaryKey: $0) }),
        ]
        if let owner { values["owner"] = .reference(StoreObjectID(entityName: "Owner", primaryKey: owner)) }
        return StoreRow(objectID: StoreObjectID(entityName: "Item", primaryKey: key), version: 0, values: values)
    }

    public static func owner(_ key: Int64, _ name: String, items: [Int64]) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: "Owner", primaryKey: key), version: 0, values: [
            "name": .string(name), "items": .references(items.map { StoreObjectID(entityName: "Item", primaryKey: $0) }),
        ])
    }

    public static func tag(_ key: Int64, _ label: String, items: [Int64] = []) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: "Tag", primaryKey: key), version: 0, values: [
            "label": .string(label), "items": .references(items.map { StoreObjectID(entityName: "Item", primaryKey: $0) }),
        ])
    }
}

// MARK: - In-memory file system

/// A minimal in-memory ``StoreFileSystem``: current contents only; every operation succeeds except
/// one that would grow a file past ``maximumFileSize`` (a full disk: `EFBIG`), so offsets read from
/// damaged bytes cannot make the fuzzer allocate gigabytes.
public final class MemoryFileSystem: StoreFileSystem, @unchecked Sendable {
    final class File: StoreFile, @unchecked Sendable {
        let owner: MemoryFileSystem
        let path: String
        init(owner: MemoryFileSystem, path: String) {
            self.owner = owner
            self.path = path
        }

        func read(at offset: UInt64, count: Int) throws(StoreIOError) -> [UInt8] {
            owner.lock.withLock {
                let bytes = owner.files[path] ?? []
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
                var bytes = owner.files[path] ?? []
                let start = Int(offset)
                if bytes.count < start + data.count { bytes.append(contentsOf: repeatElement(0, count: start + data.count - bytes.count)) }
                bytes.replaceSubrange(start..<(start + data.count), with: data)
                owner.files[path] = bytes
            }
        }

        func sync() throws(StoreIOError) {}
        func size() throws(StoreIOError) -> UInt64 { owner.lock.withLock { UInt64(owner.files[path]?.count ?? 0) } }
        func truncate(to size: UInt64) throws(StoreIOError) {
            guard size <= UInt64(MemoryFileSystem.maximumFileSize) else {
                throw StoreIOError(operation: "truncate", path: path, code: 27, reason: "File too large")
            }
            owner.lock.withLock {
                var bytes = owner.files[path] ?? []
                if Int(size) < bytes.count { bytes.removeSubrange(Int(size)...) } else { bytes.append(contentsOf: repeatElement(0, count: Int(size) - bytes.count)) }
                owner.files[path] = bytes
            }
        }

        func lock(exclusive: Bool, wait: Bool) throws(StoreIOError) -> Bool { true }
        func close() {}
    }

    /// 64 MiB: far more than any seed grows to.
    public static let maximumFileSize = 64 << 20
    let lock = NSLock()
    public var files: [String: [UInt8]]

    public init(files: [String: [UInt8]] = [:]) { self.files = files }

    public func open(_ path: String, create: Bool, readOnly: Bool) throws(StoreIOError) -> any StoreFile {
        let exists = lock.withLock { () -> Bool in
            if files[path] == nil, create { files[path] = [] }
            return files[path] != nil
        }
        guard exists else { throw StoreIOError(operation: "open", path: path, code: 2, reason: "No such file or directory") }
        return File(owner: self, path: path)
    }

    public func fileExists(_ path: String) -> Bool { lock.withLock { files[path] != nil } }
    public func remove(_ path: String) throws(StoreIOError) { lock.withLock { files[path] = nil } }
    public func rename(_ source: String, to destination: String) throws(StoreIOError) {
        lock.lock()
        defer { lock.unlock() }
        guard let bytes = files[source] else { throw StoreIOError(operation: "rename", path: source, code: 2, reason: "No such file or directory") }
        files[source] = nil
        files[destination] = bytes
    }
    public func syncDirectory(containing path: String) throws(StoreIOError) {}

    /// A snapshot of one file.
    public func contents(of path: String) -> [UInt8]? { lock.withLock { files[path] } }
}

// MARK: - Checksums

/// Rewrites the checksums of damaged bytes so that decoders past the checks see them.
public enum ChecksumFixer {
    static func put(_ value: UInt64, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }

    static func get(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        return value
    }

    /// The 64-byte file or log header's checksum at byte 56.
    public static func fixHeader(_ bytes: inout [UInt8]) {
        guard bytes.count >= 64 else { return }
        put(PageChecksum.xxh3(Array(bytes[0..<56])), into: &bytes, at: 56)
    }

    /// A 128-byte root slot's checksum at byte 120 of the slot at `offset`.
    public static func fixRootSlot(_ bytes: inout [UInt8], at offset: Int) {
        guard bytes.count >= offset + 128 else { return }
        put(PageChecksum.xxh3(Array(bytes[offset..<(offset + 120)])), into: &bytes, at: offset + 120)
    }

    /// The page at `offset`: its checksum, when its header decodes and it fits; returns its length.
    @discardableResult
    public static func fixPage(_ bytes: inout [UInt8], at offset: Int) -> Int? {
        guard offset >= 0, bytes.count - offset >= 32 else { return nil }
        guard let header = try? PageHeader(decoding: Array(bytes[offset..<(offset + 32)]), at: UInt64(offset)) else { return nil }
        guard header.totalLength <= bytes.count - offset else { return nil }
        let seed = PageChecksum.xxh3(Array(bytes[offset..<(offset + 24)]))
        let checksum = PageChecksum.xxh3(Array(bytes[(offset + 32)..<(offset + header.totalLength)]), seed: seed)
        put(checksum, into: &bytes, at: offset + 24)
        return header.totalLength
    }

    /// A whole data file image: header, both root slots and every page from the first on.
    public static func fixDataFile(_ bytes: inout [UInt8]) {
        fixHeader(&bytes)
        for slot in BinaryStoreLayout.rootSlotOffsets where !bytes[min(slot, bytes.count)..<min(slot + 128, bytes.count)].allSatisfy({ $0 == 0 }) {
            fixRootSlot(&bytes, at: slot)
        }
        var offset = BinaryStoreLayout.firstPageOffset
        while let length = fixPage(&bytes, at: offset) { offset += length }
    }

    /// Entry body checksums in a frame payload `bytes[start..<end]`, as far as they parse.
    public static func fixEntries(_ bytes: inout [UInt8], from start: Int, to end: Int) {
        var position = start
        while end - position >= 9 {
            var length = 0
            for index in 0..<4 { length |= Int(bytes[position + 1 + index]) << (8 * index) }
            guard length <= end - position - 9 else { return }
            let body = (position + 9)..<(position + 9 + length)
            let checksum = LogEntryCodec.bodyChecksum(bytes[body])
            for index in 0..<4 { bytes[position + 5 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(index))) }
            position = body.upperBound
        }
    }

    /// A whole log image: header, then each frame's entries and chained trailer, seeded by the
    /// first frame's salt, as far as frames parse.
    public static func fixLog(_ bytes: inout [UInt8]) {
        fixHeader(&bytes)
        var offset = LogLayout.firstFrameOffset
        var chain: UInt64?
        while bytes.count - offset >= LogLayout.frameHeaderSize {
            guard let header = LogFrameHeader(decoding: Array(bytes[offset..<(offset + LogLayout.frameHeaderSize)])),
                  header.totalLength <= bytes.count - offset else { return }
            let payloadStart = offset + LogLayout.frameHeaderSize
            fixEntries(&bytes, from: payloadStart, to: payloadStart + header.payloadLength)
            let seed = chain ?? header.salt
            let end = payloadStart + header.payloadLength
            let checksum = PageChecksum.xxh3(Array(bytes[offset..<end]), seed: seed)
            put(checksum, into: &bytes, at: end)
            chain = checksum
            offset = end + LogLayout.frameTrailerSize
        }
    }
}

// MARK: - Corpus maker

/// Writes the seed corpora of the binary targets from the golden store and a fresh store with an
/// unchecked-pointed log. Run by Fuzz/make-corpus.sh from the package root.
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
        let store = try BinaryStore(path: "/s/store", model: FuzzModel.model, metadata: StoreMetadata(), options: options)
        _ = try store.save(StoreChangeSet(inserted: [FuzzModel.item(6, owner: 1, tags: [2]), FuzzModel.tag(3, "green", items: [6])]))
        var updated = FuzzModel.item(3, owner: nil, tags: [1, 2, 3])
        updated.version = 1
        updated.values["text"] = .string("third")
        _ = try store.save(StoreChangeSet(updated: [updated], deleted: [(StoreObjectID(entityName: "Item", primaryKey: 4), 1)]))
        try store.setMetadata(StoreMetadata(["Fixture": "fuzz", "Count": 3]))
        return (fs.contents(of: "/s/store") ?? [], fs.contents(of: "/s/store-wal") ?? [])
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
        writer.appendEntry(kind: .put, sizeHint: 32) { RecordCodec.encode(FuzzModel.tag(9, "orphan"), catalog: catalog, into: &$0) }
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

    public static func make(root: String) throws {
        let fixtures = "Tests/CoreDataBinaryFormatTests/Fixtures/golden-v1.store"
        let golden = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixtures)))
        let goldenLog = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixtures + "-wal")))
        let (data, log) = try storeWithLog(golden: golden, goldenLog: goldenLog)

        // FuzzBinaryHeader: the first 1,152 bytes (header and both root slots) of each store.
        try write(Array(golden.prefix(1_152)), "golden-header", in: "\(root)/FuzzBinaryHeader")
        try write(Array(data.prefix(1_152)), "logged-header", in: "\(root)/FuzzBinaryHeader")

        // FuzzBinaryPage and FuzzBinaryRecord: every page of both stores; every record of their data pages.
        var pages = Set<[UInt8]>()
        var records: [[UInt8]] = []
        for (name, image) in [("golden", golden), ("logged", data)] {
            var offset = BinaryStoreLayout.firstPageOffset
            while image.count - offset >= 32, let header = try? PageHeader(decoding: Array(image[offset..<(offset + 32)]), at: UInt64(offset)),
                  header.totalLength <= image.count - offset {
                let page = Array(image[offset..<(offset + header.totalLength)])
                let kind = "\(header.kind)".replacingOccurrences(of: " ", with: "-")
                if pages.insert(page).inserted { try write(page, "\(name)-\(offset)-\(kind)", in: "\(root)/FuzzBinaryPage") }
                if header.kind == .data, let payload = try? PageCodec.decodePayload(header, page: page, at: UInt64(offset)),
                   let dataPage = try? DataPage(payload: payload, pageOffset: UInt64(offset)) {
                    for slot in 0..<dataPage.count {
                        if let range = dataPage.range(of: slot) { records.append(Array(payload[range])) }
                    }
                }
                offset += header.totalLength
            }
        }
        // Records encoded with the fixed catalog, both encoders, a tombstone.
        for row in [FuzzModel.item(7, owner: 2, tags: [1, 9]), FuzzModel.owner(2, "Bo", items: [7]), FuzzModel.tag(4, "", items: [])] {
            var writer = ByteWriter()
            RecordCodec.encode(row, catalog: FuzzModel.catalog, into: &writer)
            records.append(writer.bytes)
        }
        var tombstone = ByteWriter()
        RecordCodec.encodeTombstone(StoreObjectID(entityName: "Item", primaryKey: 8), version: 3, catalog: FuzzModel.catalog, into: &tombstone)
        records.append(tombstone.bytes)
        var seen = Set<[UInt8]>()
        for record in records where seen.insert(record).inserted {
            try write(record, String(format: "record-%02d", seen.count), in: "\(root)/FuzzBinaryRecord")
        }

        // FuzzLogFrame: the logs whole, and each frame alone after the header.
        try write(goldenLog, "golden-log", in: "\(root)/FuzzLogFrame")
        try write(log, "logged-log", in: "\(root)/FuzzLogFrame")
        var offset = LogLayout.firstFrameOffset
        var frame = 0
        while log.count - offset >= LogLayout.frameHeaderSize,
              let header = LogFrameHeader(decoding: Array(log[offset..<(offset + LogLayout.frameHeaderSize)])),
              header.totalLength <= log.count - offset {
            frame += 1
            try write(Array(log[0..<64]) + Array(log[offset..<(offset + header.totalLength)]), "logged-frame-\(frame)", in: "\(root)/FuzzLogFrame")
            offset += header.totalLength
        }

        // FuzzBinaryStoreOpen: data length (4 bytes), data file, log.
        try write(lengthPrefixed(golden, goldenLog), "golden", in: "\(root)/FuzzBinaryStoreOpen")
        try write(lengthPrefixed(data, log), "logged", in: "\(root)/FuzzBinaryStoreOpen")
        try write(lengthPrefixed(data, []), "logged-no-log", in: "\(root)/FuzzBinaryStoreOpen")
        try write(lengthPrefixed(golden, try catalogShrinksLog(golden: golden)), "regression-log-catalog-shrinks", in: "\(root)/FuzzBinaryStoreOpen")
    }
}
