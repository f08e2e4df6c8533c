import CoreDataBinaryFormat
import CoreDataStorage

/// Reads the log's valid, committed frames (Formats/wal.md §7) and what each save did.
struct LogReplay {
    struct Record {
        var entityID: Int
        var key: Int64
        /// A ``RecordLocation`` raw value in the log.
        var location: UInt64
        var tombstone: Bool
    }

    struct Transaction {
        var catalog: Catalog?
        var metadata: StoreMetadata?
        var records: [Record] = []
        /// The log offset of the transaction's first frame.
        var offset: UInt64 = 0
        var frames = 0
    }

    var transactions: [Transaction] = []
    /// Where the next frame goes: just past the last valid commit frame.
    var end = UInt64(LogLayout.firstFrameOffset)
    var sequence: UInt64 = 0
    var chain: UInt64
    /// Bytes after ``end`` (a dropped tail or stale frames).
    var droppedBytes: UInt64 = 0

    /// Replays `log` of `size` bytes whose frames carry `salt`.
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` when a damaged frame is followed by a valid one
    ///   (damage in committed data, not a torn tail), or a committed frame holds a bad entry.
    static func run(_ log: any StoreFile, size: UInt64, salt: UInt64, catalog initial: Catalog) throws -> LogReplay {
        var replay = LogReplay(chain: salt)
        var catalog = initial
        var offset = UInt64(LogLayout.firstFrameOffset)
        var open = Transaction(offset: offset)
        var openChain = salt
        var openSequence: UInt64 = 0
        while offset + UInt64(LogLayout.frameHeaderSize + LogLayout.frameTrailerSize) <= size {
            let headBytes = try log.read(at: offset, count: LogLayout.frameHeaderSize)
            guard let head = LogFrameHeader(decoding: headBytes), head.salt == salt, head.sequence == openSequence + 1,
                  offset + UInt64(head.totalLength) <= size
            else {
                try checkNotDamagedInPlace(log, at: offset, size: size, salt: salt, sequence: openSequence + 1)
                break
            }
            let frame = try log.read(at: offset, count: head.totalLength)
            guard LogFrameCodec.isValid(frame, seed: openChain) else {
                try checkNotDamagedInPlace(log, at: offset, size: size, salt: salt, sequence: openSequence + 1)
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
                        tombstone: entry.kind == .tombstone))
                }
            }
            openChain = LogFrameCodec.storedChecksum(of: frame) ?? openChain
            openSequence = head.sequence
            open.frames += 1
            offset += UInt64(head.totalLength)
            if head.isCommit {
                replay.transactions.append(open)
                replay.end = offset
                replay.sequence = openSequence
                replay.chain = openChain
                open = Transaction(offset: offset)
            }
        }
        replay.droppedBytes = size > replay.end ? size - replay.end : 0
        return replay
    }

    /// A frame that fails at `offset` is a torn tail unless it is known to have been synced: the
    /// frames after it validate when chained from its stored checksum and reach a sync marker,
    /// which its writer wrote only after syncing every frame before it. Then it is a committed
    /// frame damaged in place. Without a marker the frames after it may belong to the same
    /// unsynced write, whose sectors reach the disk in any order: a torn tail (Formats/wal.md §7).
    private static func checkNotDamagedInPlace(_ log: any StoreFile, at offset: UInt64, size: UInt64, salt: UInt64, sequence: UInt64) throws {
        let headBytes = try log.read(at: offset, count: LogLayout.frameHeaderSize)
        guard headBytes.count == LogLayout.frameHeaderSize else { return }
        // Read the length leniently: a flipped magic or flag must not hide the damage.
        var reader = ByteReader(headBytes, from: 8)
        guard let length = try? reader.uint32(), Int(length) <= LogLayout.maximumEntrySize + LogLayout.maximumFramePayload else { return }
        let total = UInt64(LogLayout.frameHeaderSize + Int(length) + LogLayout.frameTrailerSize)
        guard offset + total + UInt64(LogLayout.frameHeaderSize) <= size else { return }
        let trailer = try log.read(at: offset + total - UInt64(LogLayout.frameTrailerSize), count: LogLayout.frameTrailerSize)
        guard trailer.count == LogLayout.frameTrailerSize else { return }
        var trailerReader = ByteReader(trailer)
        guard var seed = try? trailerReader.uint64() else { return }
        var next = offset + total
        var expected = sequence + 1
        while next + UInt64(LogLayout.frameHeaderSize + LogLayout.frameTrailerSize) <= size {
            let nextHead = try log.read(at: next, count: LogLayout.frameHeaderSize)
            guard let header = LogFrameHeader(decoding: nextHead), header.salt == salt, header.sequence == expected,
                  next + UInt64(header.totalLength) <= size else { return }
            let frame = try log.read(at: next, count: header.totalLength)
            guard LogFrameCodec.isValid(frame, seed: seed), let checksum = LogFrameCodec.storedChecksum(of: frame) else { return }
            if header.isSyncMarker {
                throw BinaryFormatError("log offset \(offset)", "the frame is damaged but it was synced and the frames after it are valid: committed saves would be lost, so the store is not opened")
            }
            seed = checksum
            expected += 1
            next += UInt64(header.totalLength)
        }
    }
}
