import CoreDataPageCodec

/// One entry of a frame's payload (Formats/wal.md §4).
public struct LogEntry: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        case put = 1
        case tombstone = 2
        case catalog = 3
        case metadata = 4
    }

    public var kind: Kind
    /// The entry header's offset within the frame payload.
    public var offsetInPayload: Int
    /// The body's range within the frame payload.
    public var body: Range<Int>
}

/// Builds and splits frame payloads (Formats/wal.md §4). No I/O.
public enum LogEntryCodec {
    /// Appends one entry: kind, length, body checksum, body.
    public static func append(kind: LogEntry.Kind, body: ArraySlice<UInt8>, to writer: inout ByteWriter) {
        writer.uint8(kind.rawValue)
        writer.uint32(UInt32(body.count))
        writer.uint32(bodyChecksum(body))
        writer.append(body)
    }

    /// §4: the low 32 bits of the body's XXH3-64.
    public static func bodyChecksum(_ body: ArraySlice<UInt8>) -> UInt32 {
        body.withUnsafeBytes { bodyChecksum($0) }
    }

    /// ``bodyChecksum(_:)`` of bytes read in place.
    public static func bodyChecksum(_ body: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: PageChecksum.xxh3(body))
    }

    /// Splits a frame payload into entries, checking each body's checksum.
    ///
    /// - Parameter frameOffset: the frame's log offset, for error locations.
    public static func entries(of payload: [UInt8], frameOffset: UInt64) throws(BinaryFormatError) -> [LogEntry] {
        var reader = ByteReader(payload)
        var entries: [LogEntry] = []
        while !reader.isAtEnd {
            let start = reader.position
            // Built only for an error: replay splits every frame, and a string per entry was a
            // third of the replay of a 64 MB log.
            var location: String { "log offset \(frameOffset + UInt64(LogLayout.frameHeaderSize + start))" }
            let rawKind = try reader.uint8("entry kind")
            guard let kind = LogEntry.Kind(rawValue: rawKind) else { throw BinaryFormatError(location, "unknown log entry kind \(rawKind)") }
            let length = Int(try reader.uint32("entry length"))
            let checksum = try reader.uint32("entry checksum")
            guard length <= LogLayout.maximumEntrySize, length <= reader.remaining else {
                throw BinaryFormatError(location, "entry length \(length) runs past the frame")
            }
            let body = reader.position..<(reader.position + length)
            let sum = payload.withUnsafeBytes { bodyChecksum(UnsafeRawBufferPointer(rebasing: $0[body])) }
            guard sum == checksum else { throw BinaryFormatError(location, "entry checksum mismatch") }
            try reader.skip(length)
            entries.append(LogEntry(kind: kind, offsetInPayload: start, body: body))
        }
        return entries
    }

    /// The body of the record entry (put or tombstone) at `start` in `bytes`, checked, when the
    /// whole entry lies in `bytes` and is well formed; `nil` otherwise (the caller then reads it
    /// through ``body(ofEntry:at:)``, which words the error). Reads in place: no copy.
    public static func recordBody(in bytes: [UInt8], entryAt start: Int) -> Range<Int>? {
        // Read through one raw view: a reader and a slice each retained the buffer, several
        // atomic counts per record of a checkpoint that copies a million.
        bytes.withUnsafeBytes { raw -> Range<Int>? in
            guard start >= 0, start <= raw.count - LogLayout.entryHeaderSize,
                  let kind = LogEntry.Kind(rawValue: raw[start]), kind == .put || kind == .tombstone
            else { return nil }
            let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 1, as: UInt32.self)))
            let checksum = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + 5, as: UInt32.self))
            let bodyStart = start + LogLayout.entryHeaderSize
            guard length <= raw.count - bodyStart else { return nil }
            let body = bodyStart..<(bodyStart + length)
            return bodyChecksum(UnsafeRawBufferPointer(rebasing: raw[body])) == checksum ? body : nil
        }
    }

    /// Checks one entry read back from the log by its location: `bytes` starts at the entry header.
    public static func body(ofEntry bytes: [UInt8], at offset: UInt64) throws(BinaryFormatError) -> (LogEntry.Kind, Range<Int>) {
        // Built only for an error: every record read from the log passes here.
        var location: String { "log offset \(offset)" }
        var reader = ByteReader(bytes)
        let rawKind = try reader.uint8("entry kind")
        guard let kind = LogEntry.Kind(rawValue: rawKind), kind == .put || kind == .tombstone else {
            throw BinaryFormatError(location, "no record entry here (kind \(rawKind))")
        }
        let length = Int(try reader.uint32("entry length"))
        let checksum = try reader.uint32("entry checksum")
        guard length <= reader.remaining else { throw BinaryFormatError(location, "the record entry is cut short") }
        let body = LogLayout.entryHeaderSize..<(LogLayout.entryHeaderSize + length)
        guard bodyChecksum(bytes[body]) == checksum else { throw BinaryFormatError(location, "record checksum mismatch") }
        return (kind, body)
    }
}
