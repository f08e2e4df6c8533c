import CoreDataBinaryFormat
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Records (Formats/binary-store.md §5): every value type round-trips; damaged bytes throw.
final class RecordCodecTests: XCTestCase {
    private func catalog(for rows: [StoreRow]) -> Catalog {
        var catalog = Catalog()
        for row in rows { RecordCodec.register(row, in: &catalog) }
        return catalog
    }

    func testEveryValueTypeRoundTrips() throws {
        var row = BinaryTestModel.item(42, owner: 7, tags: [3, 1, 2])
        row.version = 9
        row.values["text"] = .string("")
        row.values["i64"] = .integer(Int64.max)
        let catalog = catalog(for: [row])
        var writer = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &writer)
        let (header, decoded) = try RecordCodec.decode(writer.bytes, catalog: catalog)
        XCTAssertEqual(header, RecordHeader(kind: .row, entityID: try XCTUnwrap(catalog.entityID(of: "Item")), primaryKey: 42, version: 9))
        XCTAssertEqual(decoded, row)
    }

    func testNullsAreNotWrittenAndReadBackAbsent() throws {
        let row = StoreRow(objectID: StoreObjectID(entityName: "Owner", primaryKey: 1), version: 1, values: ["name": .null, "items": .references([])])
        let catalog = catalog(for: [row])
        var writer = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &writer)
        let decoded = try XCTUnwrap(RecordCodec.decode(writer.bytes, catalog: catalog).1)
        XCTAssertEqual(decoded.values, ["items": .references([])])
        XCTAssertEqual(decoded["name"], .null)
    }

    func testTombstoneRoundTrips() throws {
        let id = StoreObjectID(entityName: "Tag", primaryKey: 5)
        var catalog = Catalog()
        catalog.register(entity: "Tag", properties: [])
        var writer = ByteWriter()
        RecordCodec.encodeTombstone(id, version: 3, catalog: catalog, into: &writer)
        let (header, row) = try RecordCodec.decode(writer.bytes, catalog: catalog)
        XCTAssertEqual(header.kind, .tombstone)
        XCTAssertEqual(header.version, 3)
        XCTAssertNil(row)
    }

    /// The bytes of one record are fixed by the spec; a change here is a format change.
    func testGoldenRecordBytes() {
        var catalog = Catalog()
        catalog.register(entity: "Owner", properties: ["items", "name"])
        let row = StoreRow(objectID: StoreObjectID(entityName: "Owner", primaryKey: 300), version: 2, values: [
            "name": .string("Ann"), "items": .references([StoreObjectID(entityName: "Owner", primaryKey: 1)]),
        ])
        var writer = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &writer)
        // kind 1, entity 0, key 300 (0xAC 0x02), version 2, 2 values;
        // property 0 (items) tag 12 count 1 (entity 0, key 1); property 1 (name) tag 6 "Ann".
        XCTAssertEqual(writer.bytes, [1, 0, 0xAC, 0x02, 2, 2, 0, 12, 1, 0, 1, 1, 6, 3, 0x41, 0x6E, 0x6E])
    }

    /// The tag and payload of every scalar kind (§5), written out by hand: both encoders share
    /// `encodeScalar`, so only fixed bytes catch a change in it.
    func testGoldenScalarBytes() throws {
        let uuid = try XCTUnwrap(UUID(uuidString: "00010203-0405-0607-0809-0A0B0C0D0E0F"))
        let cases: [(StoreValue, [UInt8])] = [
            (.bool(false), [1]), (.bool(true), [2]),
            (.integer(-1), [3, 0x01]), (.integer(300), [3, 0xD8, 0x04]),
            (.double(1.5), [4, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F]),
            (.decimal(Decimal(string: "12.5") ?? 0), [5, 4, 0x31, 0x32, 0x2E, 0x35]),
            (.string("é"), [6, 2, 0xC3, 0xA9]),
            (.date(Date(timeIntervalSinceReferenceDate: 1.5)), [7, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F]),
            (.data(Data([1, 2])), [8, 2, 1, 2]),
            (.uuid(uuid), [9] + (0..<16).map { UInt8($0) }),
            (.uri(try XCTUnwrap(URL(string: "a:b"))), [10, 3, 0x61, 0x3A, 0x62]),
        ]
        for (value, expected) in cases {
            XCTAssertEqual(RecordCodec.encodedValue(value), expected, "\(value)")
            var catalog = Catalog()
            catalog.register(entity: "G", properties: ["v"])
            var encoder = RecordEncoder(catalog: catalog)
            var writer = ByteWriter()
            let row = StoreRow(objectID: StoreObjectID(entityName: "G", primaryKey: 5), version: 1, values: ["v": value])
            XCTAssertTrue(encoder.encode(row, version: 1, into: &writer))
            // kind 1, entity 0, key 5, version 1, 1 value; property 0, then the value.
            XCTAssertEqual(writer.bytes, [1, 0, 5, 1, 1, 0] + expected, "\(value)")
        }
    }

    func testEveryTruncationThrows() {
        let row = BinaryTestModel.item(3, owner: 1, tags: [1])
        let catalog = catalog(for: [row])
        var writer = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &writer)
        for cut in 0..<writer.bytes.count {
            XCTAssertThrowsError(try RecordCodec.decode(Array(writer.bytes[0..<cut]), catalog: catalog), "cut at \(cut)")
        }
    }

    /// Random damage never traps: it throws or decodes to some row.
    func testRandomDamageNeverTraps() {
        let row = BinaryTestModel.item(11, owner: 2, tags: [1, 2])
        let catalog = catalog(for: [row])
        var writer = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &writer)
        var generator = SystemRandomNumberGenerator()
        var thrown = 0
        for _ in 0..<5_000 {
            var bytes = writer.bytes
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if (try? RecordCodec.decode(bytes, catalog: catalog)) == nil { thrown += 1 }
        }
        XCTAssertGreaterThan(thrown, 0)
    }

    /// With layouts, records decode in one raw pass over the bytes; it must agree with the
    /// checked decoder on every value type, and every cut or random damage must still throw or
    /// decode, never trap, with exactly the checked decoder's outcome.
    func testTheRawPassAgreesWithTheCheckedDecoder() throws {
        var row = BinaryTestModel.item(42, owner: 7, tags: [3, 1, 2])
        row.version = 9
        row.values["text"] = .string("naïve – ünïcödé")
        row.values["i64"] = .integer(Int64.min)
        let catalog = catalog(for: [row])
        let layouts = RecordLayouts(catalog: catalog)
        var writer = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &writer)
        let checked = try XCTUnwrap(RecordCodec.decode(writer.bytes, catalog: catalog).1)
        let raw = try XCTUnwrap(RecordCodec.decode(writer.bytes, catalog: catalog, layouts: layouts).1)
        XCTAssertEqual(raw.values, checked.values)
        XCTAssertEqual(raw.version, 9)

        // Only some fields, as a scan reads them: the rest skipped in place.
        let itemID = try XCTUnwrap(catalog.entityID(of: "Item"))
        let properties = catalog.entities[itemID].properties
        let wanted = ["text", "i64", "double", "owner"]
        let slots = properties.map { wanted.firstIndex(of: $0) ?? -1 }
        var values = [StoreValue](repeating: .null, count: wanted.count)
        _ = try RecordCodec.decodeFields(writer.bytes, from: 0, to: writer.bytes.count, catalog: catalog, slots: slots, into: &values)
        XCTAssertEqual(values, wanted.map { checked[$0] })

        var generator = SystemRandomNumberGenerator()
        for trial in 0..<4_000 {
            var bytes = writer.bytes
            if trial < bytes.count {
                bytes = Array(bytes[0..<trial])
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            let slow = try? RecordCodec.decode(bytes, catalog: catalog)
            let fast = try? RecordCodec.decode(bytes, catalog: catalog, layouts: layouts)
            XCTAssertEqual(fast?.0, slow?.0, "trial \(trial)")
            XCTAssertEqual(fast?.1?.values, slow?.1?.values, "trial \(trial)")
            var fieldValues = [StoreValue](repeating: .null, count: wanted.count)
            _ = try? RecordCodec.decodeFields(bytes, from: 0, to: bytes.count, catalog: catalog, slots: slots, into: &fieldValues)
        }
    }

    func testVarintsRejectOverflow() {
        var reader = ByteReader([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02])
        XCTAssertThrowsError(try reader.varint()) { XCTAssertTrue("\($0)".contains("overflows"), "\($0)") }
        var long = ByteReader([UInt8](repeating: 0x80, count: 11) + [0])
        XCTAssertThrowsError(try long.varint())
        var max = ByteReader([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        XCTAssertEqual(try max.varint(), UInt64.max)
        var writer = ByteWriter()
        for value: Int64 in [0, -1, 1, Int64.min, Int64.max, 63, -64, 64] { writer.signedVarint(value) }
        var back = ByteReader(writer.bytes)
        for value: Int64 in [0, -1, 1, Int64.min, Int64.max, 63, -64, 64] { XCTAssertEqual(try back.signedVarint(), value) }
    }
}
