import Foundation

/// A binary property list (`bplist00`, Apple's `CFBinaryPList.c` layout) parsed into a flat table
/// of objects.
///
/// Why not `PropertyListSerialization`: on Linux it cannot decode the keyed-archiver UIDs that
/// every `NSKeyedArchiver` file holds, and it crashes on sets (see `PropertyListBytes` in
/// CoreDataModel). This parser reads bytes from outside (compiled models, mapping models) and
/// throws on anything malformed; it never traps.
///
/// Containers hold object numbers, not nested objects: objects in a binary property list may be
/// shared (a DAG) or even form cycles, and expanding them into a tree could blow up
/// exponentially. Callers walk ``objects`` by index and bound their own walks.
///
/// Threading: an immutable value, `Sendable`; read it from any thread.
/// Complexity: parsing is O(input bytes); each object is decoded once.
public struct BinaryPropertyList: Sendable {
    /// One object of the list. Containers refer to other objects by their number (their index in
    /// ``BinaryPropertyList/objects``).
    public enum Object: Sendable, Equatable {
        /// Marker `0x00` (and the fill byte `0x0F`, which reads as null).
        case null
        /// Markers `0x08` (false) and `0x09` (true).
        case bool(Bool)
        /// Marker `0x1n`: 1, 2 and 4-byte integers are unsigned, 8-byte ones signed, as CF writes them.
        case integer(Int64)
        /// A 16-byte integer above `Int64.max` (CF writes `UInt64` values that large in 16 bytes).
        case unsignedInteger(UInt64)
        /// Marker `0x22` (4-byte float, widened) or `0x23` (8-byte double).
        case real(Double)
        /// Marker `0x33`: seconds since 2001-01-01 00:00 UTC.
        case date(Date)
        /// Marker `0x4n`.
        case data([UInt8])
        /// Marker `0x5n` (ASCII) or `0x6n` (UTF-16 big-endian).
        case string(String)
        /// Marker `0x8n`: a keyed archiver's reference into its `$objects` array.
        case uid(UInt64)
        /// Marker `0xAn`: the element objects' numbers.
        case array([Int])
        /// Marker `0xCn`: the element objects' numbers, in file order.
        case set([Int])
        /// Marker `0xDn`: the key and value objects' numbers, pairwise.
        case dictionary(keys: [Int], values: [Int])
    }

    /// The largest input accepted, 64 MiB: a compiled model or mapping model is kilobytes, and the
    /// table of decoded objects costs a small multiple of the input.
    /// Formats/keyed-archive.md §3; exceeding it throws "… bytes is larger than the limit …".
    public static let maximumInputSize = 64 << 20

    /// The most objects a list may declare in its trailer, 1,000,000.
    /// Formats/keyed-archive.md §3; exceeding it throws "… declares N objects, more than the limit …".
    public static let maximumObjects = 1_000_000

    /// The objects, indexed by object number.
    public let objects: [Object]
    /// The number of the top (root) object.
    public let top: Int

    /// Parses `bytes` as a binary property list.
    ///
    /// - Throws: ``PropertyListError`` naming the problem and where it is: a bad header or trailer,
    ///   an offset table or object outside the input, an object reference out of range, a length
    ///   that does not fit, an unknown marker, invalid text, or a limit exceeded
    ///   (Formats/keyed-archive.md §2–§3).
    /// - Complexity: O(bytes.count).
    public init(bytes: [UInt8]) throws(PropertyListError) {
        var parser = try BinaryPropertyListParser(bytes: bytes)
        objects = try parser.parseObjects()
        top = parser.topObject
    }

    /// Parses `data` as a binary property list; see ``init(bytes:)``.
    public init(data: Data) throws(PropertyListError) {
        try self.init(bytes: [UInt8](data))
    }

    /// The object `number`, or nil when there is no such object.
    public func object(_ number: Int) -> Object? {
        objects.indices.contains(number) ? objects[number] : nil
    }
}
