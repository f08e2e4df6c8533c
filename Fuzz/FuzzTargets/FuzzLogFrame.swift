// Fuzz target: arbitrary bytes as a binary store's write-ahead log: the 64-byte log header,
// then frames (header, payload, chained XXH3 trailer) and each frame's entries, walked as log
// replay walks them. Each input is decoded as given and again with every checksum rewritten
// (header, entry bodies, frame chain). Decoders must throw or say no; any crash, hang or sanitizer
// report is a bug.
import CoreDataBinaryFormat
import CoreDataTestModel
import FuzzBinarySupport

/// The body of the `FuzzLogFrame` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzLogFrame {
    /// Walks `bytes` as a log, as given and with every checksum rewritten.
    ///
    /// Traps (`precondition`) when an entry's body lies outside its frame or reads back
    /// differently on its own.
    public static func run(_ raw: [UInt8]) {
        walkLog(raw)
        var fixed = raw
        ChecksumFixer.fixLog(&fixed)
        if fixed != raw { walkLog(fixed) }
    }

    private static func walkLog(_ bytes: [UInt8]) {
        _ = try? LogHeader(decoding: bytes)
        var offset = LogLayout.firstFrameOffset
        var chain: UInt64?
        while bytes.count - offset >= LogLayout.frameHeaderSize {
            guard let header = LogFrameHeader(decoding: Array(bytes[offset..<(offset + LogLayout.frameHeaderSize)])),
                  header.totalLength <= bytes.count - offset else { return }
            let frame = Array(bytes[offset..<(offset + header.totalLength)])
            _ = LogFrameCodec.storedChecksum(of: frame)
            guard LogFrameCodec.isValid(frame, seed: chain ?? header.salt) else { return }
            chain = LogFrameCodec.storedChecksum(of: frame)
            let payload = Array(frame[LogLayout.frameHeaderSize..<(LogLayout.frameHeaderSize + header.payloadLength)])
            if let entries = try? LogEntryCodec.entries(of: payload, frameOffset: UInt64(offset)) {
                for entry in entries {
                    precondition(entry.body.lowerBound >= 0 && entry.body.upperBound <= payload.count, "entry body outside its frame")
                    let body = Array(payload[entry.body])
                    switch entry.kind {
                    case .put, .tombstone:
                        let located = Array(payload[entry.offsetInPayload..<entry.body.upperBound])
                        guard let (kind, range) = try? LogEntryCodec.body(ofEntry: located, at: UInt64(offset)) else {
                            preconditionFailure("an entry that split from its frame does not read back alone")
                        }
                        precondition(kind == entry.kind && Array(located[range]) == body, "entry reads back differently alone")
                        _ = try? RecordCodec.decode(body, catalog: BinaryTestModel.catalog)
                    case .catalog:
                        _ = try? Catalog(decoding: body)
                    case .metadata:
                        _ = try? MetadataCodec.decode(body, location: "log")
                    }
                }
            }
            // The same bytes read back by location, as a fetch of a logged record does.
            _ = try? LogEntryCodec.body(ofEntry: payload, at: UInt64(offset + LogLayout.frameHeaderSize))
            offset += header.totalLength
        }
    }
}
