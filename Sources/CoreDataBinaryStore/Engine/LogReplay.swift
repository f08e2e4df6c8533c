import CoreDataBinaryFormat
import CoreDataPageCodec
import CoreDataStorage

/// Reads the log's valid, committed frames (Formats/wal.md §7) and what each save did.
struct LogReplay {
    struct Record {
        var entityID: Int
        var key: Int64
        /// A ``RecordLocation`` raw value in the log.
        var location: UInt64
        var tombstone: Bool
        /// The record's bytes (the entry body), for the live and dead byte counts of `info`.
        var length = 0
    }

    /// One valid frame of a committed save, for the CLI's `log`.
    struct Frame {
        var offset: UInt64
        var header: LogFrameHeader
    }

    struct Transaction {
        var catalog: Catalog?
        var metadata: StoreMetadata?
        var records: [Record] = []
        /// The log offset of the transaction's first frame.
        var offset: UInt64 = 0
        var frames = 0
        var frameHeaders: [Frame] = []
    }

    var transactions: [Transaction] = []
    /// Where the next frame goes: just past the last valid commit frame.
    var end = UInt64(LogLayout.firstFrameOffset)
    var sequence: UInt64 = 0
    var chain: UInt64
    /// Bytes after ``end`` (a dropped tail or stale frames).
    var droppedBytes: UInt64 = 0
    /// When salvaging: the synced frame damaged in place that the replay stopped before.
    var damage: BinaryFormatError?

    /// The highest primary key of each entity number in the committed saves (tombstones
    /// included), 0 where it has none; kept as each save commits, while its records are at hand.
    private var highestKeyByEntity: [Int64] = []

    /// The highest primary key of each entity in the committed saves (tombstones included), by
    /// the entity's name in `catalog`: the last catalog the saves carry, or the one before them
    /// (later catalogs extend earlier ones, which `run` checks). Kept per entity number and
    /// named once: a dictionary update by name per record was a fifth of replaying a 64 MB log.
    func highestKeys(namedBy catalog: Catalog) -> [String: Int64] {
        var named: [String: Int64] = [:]
        for (entityID, key) in highestKeyByEntity.enumerated() where key > 0 && entityID < catalog.entities.count {
            named[catalog.entities[entityID].name] = key
        }
        return named
    }

    private mutating func noteHighestKeys(of records: [Record]) {
        for record in records {
            if record.entityID >= highestKeyByEntity.count {
                highestKeyByEntity.append(contentsOf: repeatElement(0, count: record.entityID + 1 - highestKeyByEntity.count))
            }
            highestKeyByEntity[record.entityID] = max(highestKeyByEntity[record.entityID], record.key)
        }
    }

    /// Replays `log` of `size` bytes whose frames carry `salt`.
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` when a damaged frame is followed by a valid one
    ///   (damage in committed data, not a torn tail), or a committed frame holds a bad entry.
    ///
    /// A handle that shares the store tails the log with it (Formats/wal.md §9): from `start`,
    /// the end of the frames it has read, with the sequence number and checksum chain there, and
    /// without the damage check, since frames after the end may be a save another process is
    /// writing right now. `salvaging` stops before damage in place instead of throwing, and
    /// names it in ``damage``.
    static func run(
        _ log: any StoreFile, from start: UInt64 = UInt64(LogLayout.firstFrameOffset), size: UInt64, salt: UInt64,
        sequence: UInt64 = 0, chain: UInt64? = nil, catalog initial: Catalog, checkingDamage: Bool = true, salvaging: Bool = false
    ) throws -> LogReplay {
        var replay = LogReplay(chain: chain ?? salt)
        replay.end = start
        replay.sequence = sequence
        var catalog = initial
        var offset = start
        var open = Transaction(offset: offset)
        var openChain = chain ?? salt
        var openSequence = sequence
        while offset + UInt64(LogLayout.frameHeaderSize + LogLayout.frameTrailerSize) <= size {
            let headBytes = try log.read(at: offset, count: LogLayout.frameHeaderSize)
            guard let head = LogFrameHeader(decoding: headBytes), head.salt == salt, head.sequence == openSequence + 1,
                  offset + UInt64(head.totalLength) <= size
            else {
                if checkingDamage { replay.damage = try checkNotDamagedInPlace(log, at: offset, size: size, salt: salt, sequence: openSequence + 1, chain: openChain, salvaging: salvaging) }
                break
            }
            let frame = try log.read(at: offset, count: head.totalLength)
            guard LogFrameCodec.isValid(frame, seed: openChain) else {
                if checkingDamage { replay.damage = try checkNotDamagedInPlace(log, at: offset, size: size, salt: salt, sequence: openSequence + 1, chain: openChain, salvaging: salvaging) }
                break
            }
            let payload = Array(frame[LogLayout.frameHeaderSize..<(LogLayout.frameHeaderSize + head.payloadLength)])
            let entries = try LogEntryCodec.entries(of: payload, frameOffset: offset)
            for entry in entries {
                let location = offset + UInt64(LogLayout.frameHeaderSize + entry.offsetInPayload)
                switch entry.kind {
                case .catalog:
                    let decoded: Catalog
                    do { decoded = try Catalog(decoding: Array(payload[entry.body])) } catch { throw error.within("log offset \(location) (catalog entry)") }
                    // Records already read were decoded against `catalog`; a later catalog must keep
                    // their numbers, or opening would index past its entities.
                    guard decoded.extends(catalog) else {
                        throw BinaryFormatError("log offset \(location) (catalog entry)", "the catalog drops or renumbers names of the catalog before it")
                    }
                    catalog = decoded
                    open.catalog = catalog
                case .metadata:
                    open.metadata = try MetadataCodec.decode(Array(payload[entry.body]), location: "log offset \(location) (metadata entry)")
                case .put, .tombstone:
                    let record: RecordHeader
                    // Decoded in place: a copy of every record's bytes would dominate replay time.
                    do { record = try RecordCodec.decodeHeader(payload, from: entry.body.lowerBound, to: entry.body.upperBound, catalog: catalog) } catch { throw error.within("log offset \(location)") }
                    open.records.append(Record(
                        entityID: record.entityID, key: record.primaryKey, location: location | RecordLocation.logBit,
                        tombstone: entry.kind == .tombstone, length: entry.body.count))
                }
            }
            openChain = LogFrameCodec.storedChecksum(of: frame) ?? openChain
            openSequence = head.sequence
            open.frames += 1
            open.frameHeaders.append(Frame(offset: offset, header: head))
            offset += UInt64(head.totalLength)
            if head.isCommit {
                replay.noteHighestKeys(of: open.records)
                replay.transactions.append(open)
                replay.end = offset
                replay.sequence = openSequence
                replay.chain = openChain
                open = Transaction(offset: offset)
            }
        }
        replay.droppedBytes = size > replay.end ? size - replay.end : 0
        // A sync marker right after the last save certifies it (wal.md §3, §5); the next save
        // writes over it, so it is neither a save nor a torn tail. The loop above validated it.
        if let marker = open.frameHeaders.first, marker.offset == replay.end, marker.header.isSyncMarker {
            replay.droppedBytes = size - (replay.end + UInt64(marker.header.totalLength))
        }
        let tailStart = size - replay.droppedBytes
        if checkingDamage, replay.droppedBytes > 0, replay.droppedBytes <= UInt64(LogLayout.preallocationStep),
           try ZeroBytes.areAll(log.read(at: tailStart, count: Int(replay.droppedBytes))) {
            // Formats/wal.md §5, §7: a zero tail is preallocation, not a torn save.
            replay.droppedBytes = 0
        }
        return replay
    }

    /// A frame that fails at `offset` is a torn tail unless it is known to have been synced: the
    /// frames after it validate when chained from its checksum and reach a sync marker, which its
    /// writer wrote only after syncing every frame before it. Then it is a committed frame
    /// damaged in place. Without a marker the frames after it may belong to the same unsynced
    /// write, whose sectors reach the disk in any order: a torn tail (Formats/wal.md §7).
    ///
    /// Damage to the frame's length or its trailer must not hide it: the next frame is looked for
    /// where the length says and, when the damaged header still carries this log's salt and the
    /// expected sequence (so it is no stale frame), at the first header with the next sequence
    /// after it; the chain is tried from the stored trailer and from the checksum the damaged
    /// frame's bytes have when chained from `chain`, the checksum of the frame before it.
    ///
    /// - Returns: when `salvaging`, the damage instead of throwing it; otherwise `nil`.
    private static func checkNotDamagedInPlace(_ log: any StoreFile, at offset: UInt64, size: UInt64, salt: UInt64, sequence: UInt64, chain: UInt64, salvaging: Bool) throws -> BinaryFormatError? {
        let headerSize = UInt64(LogLayout.frameHeaderSize)
        let trailerSize = UInt64(LogLayout.frameTrailerSize)
        let headBytes = try log.read(at: offset, count: LogLayout.frameHeaderSize)
        guard headBytes.count == LogLayout.frameHeaderSize else { return nil }
        var starts: [UInt64] = []
        // Read the length leniently: a flipped magic or flag must not hide the damage.
        var reader = ByteReader(headBytes, from: 8)
        if let length = try? reader.uint32(), Int(length) <= LogLayout.maximumEntrySize + LogLayout.maximumFramePayload {
            let next = offset + headerSize + UInt64(length) + trailerSize
            if next + headerSize <= size { starts.append(next) }
        }
        var tail = ByteReader(headBytes, from: 16)
        if let frameSalt = try? tail.uint64(), frameSalt == salt, let frameSequence = try? tail.uint64(), frameSequence == sequence,
           let next = try nextFrame(log, after: offset + headerSize + trailerSize, size: size, salt: salt, sequence: sequence + 1),
           !starts.contains(next) {
            starts.append(next)
        }
        for next in starts {
            let trailer = try log.read(at: next - trailerSize, count: LogLayout.frameTrailerSize)
            var trailerReader = ByteReader(trailer)
            var seeds: [UInt64] = []
            if let stored = try? trailerReader.uint64() { seeds.append(stored) }
            let frame = try log.read(at: offset, count: Int(next - trailerSize - offset))
            seeds.append(PageChecksum.xxh3(frame, seed: chain))
            for seed in Set(seeds) where try chainReachesSyncMarker(log, from: next, size: size, salt: salt, sequence: sequence + 1, seed: seed) {
                if salvaging {
                    return BinaryFormatError("log offset \(offset)", "the frame is damaged but it was synced: the saves from it on were not read")
                }
                throw BinaryFormatError("log offset \(offset)", "the frame is damaged but it was synced and the frames after it are valid: committed saves would be lost, so the store is not opened")
            }
        }
        return nil
    }

    /// The first offset after `start` where a frame header with `salt` and `sequence` begins,
    /// looking one frame's worth of bytes ahead (a frame holding one entry larger than a frame
    /// payload is not looked past).
    private static func nextFrame(_ log: any StoreFile, after start: UInt64, size: UInt64, salt: UInt64, sequence: UInt64) throws -> UInt64? {
        let window = min(size - min(size, start), UInt64(LogLayout.maximumFramePayload + 2 * (LogLayout.frameHeaderSize + LogLayout.frameTrailerSize)))
        let bytes = try log.read(at: start, count: Int(window))
        var magic = ByteWriter(capacity: 4)
        magic.uint32(LogLayout.frameMagic)
        let first = magic.bytes[0]
        var position = 0
        while position + LogLayout.frameHeaderSize <= bytes.count {
            defer { position += 1 }
            guard bytes[position] == first, bytes[position..<(position + 4)].elementsEqual(magic.bytes) else { continue }
            if let header = LogFrameHeader(decoding: Array(bytes[position..<(position + LogLayout.frameHeaderSize)])),
               header.salt == salt, header.sequence == sequence {
                return start + UInt64(position)
            }
        }
        return nil
    }

    /// Whether the frames from `offset` validate in a chain seeded with `seed`, with sequence
    /// numbers from `sequence` on, up to a sync marker.
    private static func chainReachesSyncMarker(_ log: any StoreFile, from offset: UInt64, size: UInt64, salt: UInt64, sequence: UInt64, seed start: UInt64) throws -> Bool {
        var seed = start
        var next = offset
        var expected = sequence
        while next + UInt64(LogLayout.frameHeaderSize + LogLayout.frameTrailerSize) <= size {
            let nextHead = try log.read(at: next, count: LogLayout.frameHeaderSize)
            guard let header = LogFrameHeader(decoding: nextHead), header.salt == salt, header.sequence == expected,
                  next + UInt64(header.totalLength) <= size else { return false }
            let frame = try log.read(at: next, count: header.totalLength)
            guard LogFrameCodec.isValid(frame, seed: seed), let checksum = LogFrameCodec.storedChecksum(of: frame) else { return false }
            if header.isSyncMarker { return true }
            seed = checksum
            expected += 1
            next += UInt64(header.totalLength)
        }
        return false
    }
}
