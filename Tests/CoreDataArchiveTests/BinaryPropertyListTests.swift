import CoreDataArchive
import Foundation
import XCTest

/// The property list layer (Formats/keyed-archive.md §2–§3): every marker round-trips through the
/// test writer, and every hostile input throws its own message.
final class BinaryPropertyListTests: XCTestCase {
    // MARK: - Round trips

    func testEveryMarkerRoundTrips() throws {
        var writer = PropertyListWriter()
        let surrogatePair = Array("a😀é".utf16)
        let items: [(PropertyListWriter.Item, BinaryPropertyList.Object)] = [
            (.null, .null),
            (.fill, .null),
            (.bool(false), .bool(false)),
            (.bool(true), .bool(true)),
            (.int(0), .integer(0)),
            (.int(255), .integer(255)),
            (.int(65_535), .integer(65_535)),
            (.int(4_294_967_295), .integer(4_294_967_295)),
            (.int(Int64.max), .integer(Int64.max)),
            (.int(-1), .integer(-1)),
            (.int(Int64.min), .integer(Int64.min)),
            (.int128(high: 0, low: 42), .integer(42)),
            (.int128(high: 0, low: UInt64.max), .unsignedInteger(UInt64.max)),
            (.real(3.25), .real(3.25)),
            (.real(-0.5e300), .real(-0.5e300)),
            (.float(1.5), .real(1.5)),
            (.date(700_000_000.5), .date(Date(timeIntervalSinceReferenceDate: 700_000_000.5))),
            (.data([]), .data([])),
            (.data([1, 2, 3]), .data([1, 2, 3])),
            (.data(Array(0..<200)), .data(Array(0..<200))),
            (.ascii(""), .string("")),
            (.ascii("valueForKeyPath:"), .string("valueForKeyPath:")),
            (.ascii(String(repeating: "x", count: 300)), .string(String(repeating: "x", count: 300))),
            (.utf16(surrogatePair), .string("a😀é")),
            (.uid(0), .uid(0)),
            (.uid(200), .uid(200)),
            (.uid(70_000), .uid(70_000)),
            (.uid(UInt64.max), .uid(UInt64.max)),
        ]
        for (item, _) in items { writer.add(item) }
        let elements = Array(0..<items.count)
        let array = writer.add(.array(elements))
        let set = writer.add(.set([1, 2, 3]))
        let dict = writer.add(.dict(keys: [21, 22], values: [4, array]))
        let top = writer.add(.array([array, set, dict]))

        let list = try BinaryPropertyList(bytes: writer.encode(top: top))
        XCTAssertEqual(list.top, top)
        XCTAssertEqual(list.objects.count, items.count + 4)
        for (index, (_, expected)) in items.enumerated() {
            XCTAssertEqual(list.objects[index], expected, "object \(index)")
        }
        XCTAssertEqual(list.objects[array], .array(elements))
        XCTAssertEqual(list.objects[set], .set([1, 2, 3]))
        XCTAssertEqual(list.objects[dict], .dictionary(keys: [21, 22], values: [4, array]))
        XCTAssertEqual(list.objects[top], .array([array, set, dict]))
    }

    func testWideReferencesAndOffsets() throws {
        for (referenceSize, offsetSize) in [(1, 1), (2, 2), (4, 4), (8, 8), (3, 5)] {
            var writer = PropertyListWriter()
            writer.referenceSize = referenceSize
            writer.offsetSize = offsetSize
            let strings = (0..<20).map { writer.add(.ascii("s\($0)")) }
            let top = writer.add(.dict(keys: Array(strings[..<10]), values: Array(strings[10...])))
            let list = try BinaryPropertyList(bytes: writer.encode(top: top))
            XCTAssertEqual(list.objects[top], .dictionary(keys: Array(0..<10), values: Array(10..<20)), "sizes \(referenceSize)/\(offsetSize)")
            XCTAssertEqual(list.objects[19], .string("s19"))
        }
    }

    /// Containers hold numbers, so a list whose arrays each refer twice to the one before parses
    /// in time linear in its size (and so does a cycle).
    func testSharedAndCyclicContainersStayFlat() throws {
        var writer = PropertyListWriter()
        var previous = writer.add(.ascii("leaf"))
        for _ in 0..<60 { previous = writer.add(.array([previous, previous])) }
        let cyclic = writer.add(.array([writer.items.count]))  // itself
        let list = try BinaryPropertyList(bytes: writer.encode(top: previous))
        XCTAssertEqual(list.objects.count, 62)
        XCTAssertEqual(list.objects[cyclic], .array([cyclic]))
    }

    /// Foundation's own reader agrees on a list without UIDs or sets (what it can read).
    func testAgreesWithFoundationOnPlainLists() throws {
        let value: [String: Any] = ["name": "Ada", "count": 3, "ratio": 0.5, "flags": [true, false], "blob": Data([9, 8]), "long": String(repeating: "é", count: 40)]
        let data = try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0)
        let list = try BinaryPropertyList(data: data)
        guard case .dictionary(let keys, let values) = list.objects[list.top] else { return XCTFail("top is not a dictionary") }
        var decoded: [String: BinaryPropertyList.Object] = [:]
        for (key, value) in zip(keys, values) {
            guard case .string(let name) = list.objects[key] else { return XCTFail("key is not a string") }
            decoded[name] = list.objects[value]
        }
        XCTAssertEqual(decoded["name"], .string("Ada"))
        XCTAssertEqual(decoded["count"], .integer(3))
        XCTAssertEqual(decoded["ratio"], .real(0.5))
        XCTAssertEqual(decoded["blob"], .data([9, 8]))
        XCTAssertEqual(decoded["long"], .string(String(repeating: "é", count: 40)))
    }

    // MARK: - Hostile inputs

    /// Each damaged input and a fragment of the message it must throw.
    func testHostileInputsThrowTheirOwnMessages() {
        for (name, bytes, fragment) in Self.hostileInputs() {
            XCTAssertThrowsError(try BinaryPropertyList(bytes: bytes), name) { error in
                guard let error = error as? PropertyListError else { return XCTFail("\(name): \(error)") }
                XCTAssertTrue(error.message.contains(fragment), "\(name): \(error.message)")
                XCTAssertTrue(error.message.hasPrefix("binary property list: "), "\(name): \(error.message)")
            }
        }
    }

    static func hostileInputs() -> [(String, [UInt8], String)] {
        func list(_ items: [PropertyListWriter.Item], top: Int = 0, referenceSize: Int? = nil, trailer: PropertyListWriter.Trailer = .init()) -> [UInt8] {
            var writer = PropertyListWriter()
            writer.referenceSize = referenceSize
            for item in items { writer.add(item) }
            return writer.encode(top: top, trailer: trailer)
        }
        let valid = list([.ascii("a"), .array([0])], top: 1)
        var badMagic = valid
        badMagic[0] = UInt8(ascii: "x")
        var table = PropertyListWriter.Trailer()
        table.tableOffset = UInt64.max - 3
        var many = PropertyListWriter.Trailer()
        many.objectCount = 1_000_001
        var badTop = PropertyListWriter.Trailer()
        badTop.top = 7
        var badOffsetSize = PropertyListWriter.Trailer()
        badOffsetSize.offsetSize = 0
        var badReferenceSize = PropertyListWriter.Trailer()
        badReferenceSize.referenceSize = 9
        var writer = PropertyListWriter()
        writer.add(.ascii("a"))
        let offsetOutside = writer.encode(top: 0, offsetOverride: [0: 5_000])
        let huge: UInt64 = 0xFFFF_FFFF_FFFF_FFFF
        return [
            ("truncated trailer", Array(valid.prefix(30)), "is shorter than the 8-byte header, one object and the 32-byte trailer"),
            ("trailer cut short", Array(valid.dropLast(4)), "binary property list"),
            ("bad magic", badMagic, "does not start with bplist0x"),
            ("offset table outside", list([.ascii("a")], trailer: table), "does not fit between the header and the trailer"),
            ("offset outside the object area", offsetOutside, "object 0 at byte 10: offset 5000 in the offset table is outside the object area"),
            ("offset size 0", list([.ascii("a")], trailer: badOffsetSize), "offset size 0 in the trailer is not 1 to 8"),
            ("reference size 9", list([.ascii("a")], trailer: badReferenceSize), "object reference size 9 in the trailer is not 1 to 8"),
            ("too many objects", list([.ascii("a")], trailer: many), "declares 1000001 objects, more than the limit of 1000000"),
            ("top out of range", list([.ascii("a")], trailer: badTop), "top object 7 is not one of the 1 objects"),
            ("reference out of range", list([.array([0, 9])]), "object reference 9 at byte 10 is out of range (the list has 1 objects)"),
            ("count nibble overflow, data", list([.raw([0x4F, 0x13] + PropertyListWriter.bigEndian(huge, width: 8))]),
             "needs 18446744073709551615 bytes after byte 18"),
            ("count nibble overflow, 2-byte references", list([.raw([0xAF, 0x13] + PropertyListWriter.bigEndian(huge / 2 + 1, width: 8))], referenceSize: 2),
             "9223372036854775808 object references of 2 bytes do not fit in the input"),
            ("count nibble overflow, UTF-16", list([.raw([0x6F, 0x13] + PropertyListWriter.bigEndian(huge / 2 + 1, width: 8))]),
             "a UTF-16 string of 9223372036854775808 code units does not fit in the input"),
            ("count nibble overflow, dictionary", list([.raw([0xDF, 0x13] + PropertyListWriter.bigEndian(huge, width: 8))]),
             "a dictionary of 18446744073709551615 entries does not fit in the input"),
            ("count that is not an integer", list([.raw([0x5F, 0x23, 0, 0, 0, 0, 0, 0, 0, 0])]),
             "marker 0x23 after a count nibble 0xF is not an integer of 1, 2, 4 or 8 bytes"),
            ("16-byte integer with high bits", list([.int128(high: 1, low: 0)]), "16-byte integer with high bytes 0x1"),
            ("32-byte integer", list([.raw([0x15] + Array(repeating: 0, count: 32))]), "integer of 32 bytes (marker 0x15)"),
            ("2-byte real", list([.raw([0x21, 0, 0])]), "real of 2 bytes (marker 0x21)"),
            ("date marker", list([.raw([0x32, 0, 0, 0, 0])]), "date marker 0x32 is not 0x33"),
            ("truncated integer", list([.raw([0x13, 1, 2])]), "needs 8 bytes after byte 9, but only 2 remain"),
            ("unpaired surrogate", list([.utf16([0x61, 0xD800])]), "invalid UTF-16 (an unpaired surrogate)"),
            ("non-ASCII", list([.raw([0x52, 0x41, 0xE9])]), "byte 0xe9 at byte 10 in an ASCII string is not ASCII"),
            ("UTF-8 string marker", list([.raw([0x71, 0x41])]), "unknown marker 0x71"),
            ("unknown singleton", list([.raw([0x0C])]), "unknown marker 0x0c"),
            ("9-byte UID", list([.raw([0x88] + Array(repeating: 0, count: 9))]), "UID of 9 bytes; at most 8 are supported"),
            ("overlapping objects", Self.overlapping(), "objects overlap"),
            ("input over the limit", [UInt8](repeating: 0, count: BinaryPropertyList.maximumInputSize + 1),
             "input of 67108865 bytes is larger than the limit of 67108864 bytes"),
        ]
    }

    /// Many offset-table entries pointing into one run of bytes, each reading it as a large
    /// array: without the overlap check this tiny input would decode into a huge table.
    static func overlapping() -> [UInt8] {
        var body: [UInt8] = []
        for _ in 0..<100 { body += [0xAF, 0x11, 0x01, 0x90] }  // an array of 400 one-byte references
        body += [UInt8](repeating: 0, count: 400)
        var writer = PropertyListWriter()
        writer.referenceSize = 1
        writer.add(.raw(body))
        for _ in 0..<255 { writer.add(.null) }
        let offsets = Dictionary(uniqueKeysWithValues: (0..<100).map { ($0, UInt64(8 + 4 * $0)) })
        return writer.encode(top: 0, offsetOverride: offsets)
    }

    func testMessagesNameTheObjectAndByte() {
        var writer = PropertyListWriter()
        writer.add(.ascii("ok"))
        writer.add(.array([0, 5]))
        XCTAssertThrowsError(try BinaryPropertyList(bytes: writer.encode(top: 1))) { error in
            let error = error as? PropertyListError
            XCTAssertEqual(error?.objectNumber, 1)
            XCTAssertEqual(error?.byteOffset, 11)
            XCTAssertEqual(error?.description, "binary property list: object 1 at byte 11: object reference 5 at byte 13 is out of range (the list has 2 objects)")
        }
    }

    /// Every prefix and every single-byte change of a small valid list either parses or throws.
    func testEveryTruncationAndByteFlipIsHandled() throws {
        var builder = ArchiveBuilder()
        let name = builder.constant(string: "PersonToPerson")
        let owner = builder.keyPath("owner", operand: builder.variable("source"))
        _ = builder.function("destinationInstancesForEntityMappingNamed:sourceInstances:", operand: builder.variable("manager"), arguments: [name, owner])
        let bytes = builder.build()
        for length in 0..<bytes.count {
            _ = try? BinaryPropertyList(bytes: Array(bytes.prefix(length)))
        }
        for index in bytes.indices {
            for value: UInt8 in [0x00, 0x0F, 0x7F, 0x80, 0xAF, 0xFF] {
                var damaged = bytes
                damaged[index] = value
                _ = try? BinaryPropertyList(bytes: damaged)
            }
        }
    }
}
