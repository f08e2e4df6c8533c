import Foundation

/// Decodes property lists from bytes read from outside (a store's metadata, a model package's
/// `.xccurrentversion`), screening out what swift-corelibs-foundation cannot decode safely.
///
/// Why: `PropertyListSerialization.propertyList(from:)` on Linux (Swift 6.3.1) crashes the
/// process with a null-pointer read while bridging a binary property list that holds a set
/// (marker `0xC`), instead of throwing; the fuzzer found it through a damaged store's metadata.
/// Property lists have no sets (Apple's XML form cannot even write one), so a binary list with one
/// is rejected here before Foundation sees it. Every other check stays Foundation's.
///
/// Threading: pure functions, safe from any thread. Complexity: O(bytes).
public enum PropertyListBytes {
    /// A property list the screen rejected: ``message`` says what is wrong and where.
    public struct Rejection: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The binary form's header and trailer (Apple's `CFBinaryPList.c`): 8 magic bytes, then
    /// objects, an offset table, and a 32-byte trailer of 6 unused bytes, the offset size, the
    /// object-reference size, and three 8-byte big-endian counts: objects, top object, table offset.
    static let binaryMagic = Array("bplist0".utf8)
    static let trailerSize = 32

    /// Markers by their high nibble that Foundation decodes without trapping: singletons and
    /// fill (0), integer (1), real (2), date (3), data (4), ASCII (5) and UTF-16 (6) strings,
    /// arrays (A) and dictionaries (D). Sets (C), keyed-archiver UIDs (8) and unassigned
    /// markers are rejected.
    static let acceptedMarkers: Set<UInt8> = [0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0xA, 0xD]

    /// Decodes a property list (XML, binary or OpenStep).
    ///
    /// - Throws: ``Rejection`` naming the problem: a binary list holding an object type property
    ///   lists do not have, a malformed binary trailer or offset table, or whatever Foundation
    ///   reports for a list it cannot parse.
    public static func decode(_ data: Data) throws(Rejection) -> Any {
        let bytes = [UInt8](data)
        if bytes.starts(with: binaryMagic) { try screenBinary(bytes) }
        do {
            return try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw Rejection(message: "not a property list: \(error.localizedDescription)")
        }
    }

    /// Walks the binary list's offset table and checks the marker of every object.
    static func screenBinary(_ bytes: [UInt8]) throws(Rejection) {
        guard bytes.count >= binaryMagic.count + 1 + trailerSize else {
            throw Rejection(message: "binary property list of \(bytes.count) bytes is shorter than its header and trailer")
        }
        let trailer = bytes.count - trailerSize
        let offsetSize = Int(bytes[trailer + 6])
        func bigEndian(_ start: Int, _ width: Int) -> UInt64 {
            bytes[start..<(start + width)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let objectCount = bigEndian(trailer + 8, 8)
        let tableOffset = bigEndian(trailer + 24, 8)
        guard (1...8).contains(offsetSize) else {
            throw Rejection(message: "binary property list: offset size \(offsetSize) at byte \(trailer + 6) is not 1 to 8")
        }
        // The table must lie between the header and the trailer; checked in UInt64 before any Int
        // arithmetic so that hostile counts cannot overflow.
        let (tableBytes, overflow) = objectCount.multipliedReportingOverflow(by: UInt64(offsetSize))
        guard !overflow, tableOffset >= UInt64(binaryMagic.count + 1), tableOffset <= UInt64(trailer),
              tableBytes <= UInt64(trailer) - tableOffset
        else {
            throw Rejection(message: "binary property list: an offset table of \(objectCount) objects at byte \(tableOffset) does not fit before the trailer at byte \(trailer)")
        }
        let table = Int(tableOffset)
        for index in 0..<Int(objectCount) {
            let offset = bigEndian(table + index * offsetSize, offsetSize)
            guard offset >= UInt64(binaryMagic.count + 1), offset < tableOffset else {
                throw Rejection(message: "binary property list: object \(index) is at byte \(offset), outside the object area")
            }
            let marker = bytes[Int(offset)] >> 4
            guard acceptedMarkers.contains(marker) else {
                let kind = marker == 0xC ? "a set" : marker == 0x8 ? "a keyed-archiver UID" : "an unknown object type"
                throw Rejection(message: "binary property list: object \(index) at byte \(offset) is \(kind) (marker 0x\(String(bytes[Int(offset)], radix: 16))), which property lists do not hold")
            }
        }
    }
}
