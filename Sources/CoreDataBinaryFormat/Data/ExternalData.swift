import CoreDataPageCodec
import Foundation

/// A binary value kept in a file of the store's external-data folder instead of in its record
/// (Formats/binary-store.md §15): what value tag 13 holds.
///
/// The file is named by the SHA-256 digest of the bytes, so equal values share one file and a
/// save that keeps a value rewrites nothing; the XXH3-64 checksum lets a read or `verify` check
/// the file quickly.
public struct ExternalDataReference: Sendable, Hashable, CustomStringConvertible {
    /// The value's length in bytes.
    public var length: UInt64
    /// XXH3-64 (seed 0) of the value's bytes.
    public var checksum: UInt64
    /// SHA-256 of the value's bytes: 32 bytes, the file's name in hexadecimal.
    public var digest: [UInt8]

    public init(length: UInt64, checksum: UInt64, digest: [UInt8]) {
        self.length = length
        self.checksum = checksum
        self.digest = digest
    }

    /// The file's name in the external-data folder: the digest in lower-case hexadecimal.
    public var fileName: String {
        let hex = Array("0123456789abcdef".utf8)
        var name: [UInt8] = []
        name.reserveCapacity(digest.count * 2)
        for byte in digest {
            name.append(hex[Int(byte >> 4)])
            name.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: name, as: UTF8.self)
    }

    public var description: String { "external data \(fileName) (\(length) bytes)" }

    /// Whether `bytes` are the value this reference names (length and checksum; the name was
    /// checked when the file was found by it).
    public func matches(_ bytes: UnsafeRawBufferPointer) -> Bool {
        UInt64(bytes.count) == length && PageChecksum.xxh3(bytes) == checksum
    }

    /// The payload after tag 13 (§15): length varint, checksum (8 bytes), digest (32 bytes).
    func encode(into output: inout RawOutput) {
        output.varint(length)
        output.uint64(checksum)
        digest.withUnsafeBytes { output.bytes($0) }
    }

    /// The most bytes ``encode(into:)`` writes.
    var maximumPayloadSize: Int { RawOutput.maximumVarintSize + 8 + digest.count }

    static func decode(_ reader: inout ByteReader) throws(BinaryFormatError) -> ExternalDataReference {
        let length = try reader.varint("external data length")
        let checksum = try reader.uint64("external data checksum")
        let digest = Array(try reader.bytes(ExternalDataLayout.digestSize, "external data digest"))
        return ExternalDataReference(length: length, checksum: checksum, digest: digest)
    }
}

/// Reads the bytes an external reference names: the engine's file I/O, handed to the record
/// decoders, which do none of their own. Throws for a missing or damaged file.
public typealias ExternalDataLoader = @Sendable (ExternalDataReference) throws(BinaryFormatError) -> Data

/// The constants and names of external binary data (Formats/binary-store.md §15), each defined
/// once here.
public enum ExternalDataLayout {
    /// §15: a value of an attribute that allows external storage is written to a file when it
    /// has at least this many bytes; smaller values stay in the record. Apple's SQLite store
    /// uses about the same size.
    public static let threshold = 100 * 1_024
    /// §15: the first format version whose records may hold external references (§2).
    public static let firstFormatVersion: UInt32 = 2
    /// §15: the folder beside the store file: `NAME-external`.
    public static let folderSuffix = "-external"
    /// §15: a file being written has this suffix until it is synced and renamed to its name.
    public static let temporarySuffix = ".tmp"
    /// §15: SHA-256 digests, 32 bytes.
    public static let digestSize = 32

    /// The external-data folder of the store at `path`.
    public static func folder(ofStore path: String) -> String { path + folderSuffix }

    /// The path of the file `reference` names, for the store at `path`.
    public static func path(of reference: ExternalDataReference, store path: String) -> String {
        folder(ofStore: path) + "/" + reference.fileName
    }

    /// Whether `name` (a file name in the folder, no directory) is a finished value's name:
    /// 64 lower-case hexadecimal digits.
    public static func isValueFileName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return bytes.count == digestSize * 2 && bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}

extension RecordCodec {
    /// Every external reference in the record in `bytes[start..<end]` (§15), without decoding
    /// anything else: what compaction keeps and `verify` checks.
    ///
    /// - Throws: ``BinaryFormatError`` for a damaged record.
    public static func externalReferences(in bytes: [UInt8], from start: Int, to end: Int, catalog: Catalog) throws(BinaryFormatError) -> [ExternalDataReference] {
        var reader = ByteReader(bytes, from: start, to: end)
        let head = try header(&reader, catalog: catalog)
        let count = try reader.count("value count", atMost: catalog.entities[head.entityID].properties.count)
        guard head.kind == .row else { return [] }
        var found: [ExternalDataReference] = []
        for _ in 0..<count {
            _ = try reader.varint("property index")
            var peek = reader
            if try peek.uint8("value tag") == Tag.externalData.rawValue {
                found.append(try ExternalDataReference.decode(&peek))
                reader = peek
            } else {
                try skipValue(&reader)
            }
        }
        return found
    }
}
