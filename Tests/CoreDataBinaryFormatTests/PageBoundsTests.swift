import CoreDataBinaryFormat
import CoreDataStorage
import Foundation
import XCTest

/// Page bounds (Formats/binary-store.md §7.3): what a data page's records give, the pages and
/// directory as bytes, and every check a decoder makes.
final class PageBoundsTests: XCTestCase {
    private static func prefix(_ text: String) -> UInt64 {
        Array(text.utf8).withUnsafeBufferPointer { PageSortBounds.prefix($0) } ?? 0
    }

    /// A catalog of Person (name, age, note) and Pet (label), and a data page of their records.
    private func page(_ rows: [StoreRow], tombstones: [StoreObjectID] = []) -> (Catalog, [UInt8]) {
        var catalog = Catalog()
        catalog.register(entity: "Person", properties: ["age", "name", "note"])
        catalog.register(entity: "Pet", properties: ["label"])
        var builder = DataPageBuilder()
        for row in rows {
            var writer = ByteWriter()
            RecordCodec.encode(row, catalog: catalog, into: &writer)
            _ = builder.add(writer.bytes)
        }
        for id in tombstones {
            var writer = ByteWriter()
            RecordCodec.encodeTombstone(id, version: 1, catalog: catalog, into: &writer)
            _ = builder.add(writer.bytes)
        }
        return (catalog, builder.finish())
    }

    private func person(_ key: Int64, name: String?, note: String? = nil, age: Int64 = 30) -> StoreRow {
        var values: [String: StoreValue] = ["age": .integer(age)]
        if let name { values["name"] = .string(name) }
        if let note { values["note"] = .string(note) }
        return StoreRow(objectID: StoreObjectID(entityName: "Person", primaryKey: key), version: 1, values: values)
    }

    func testBoundsOfAPageAreTheLeastAndGreatestPrefixPerEntityAndString() throws {
        let (catalog, payload) = page([
            person(1, name: "mallory", note: "n1"), person(2, name: "alice, with a long tail", note: "n2"), person(3, name: "zed"),
            StoreRow(objectID: StoreObjectID(entityName: "Pet", primaryKey: 1), version: 1, values: ["label": .string("rex")]),
            StoreRow(objectID: StoreObjectID(entityName: "Pet", primaryKey: 2), version: 1, values: ["label": .string("zoë")]),
        ], tombstones: [StoreObjectID(entityName: "Person", primaryKey: 9)])
        let entries = PageBoundsSummary.entries(ofDataPage: payload, at: 8_192)
        let person = try XCTUnwrap(catalog.entityID(of: "Person"))
        let pet = try XCTUnwrap(catalog.entityID(of: "Pet"))
        XCTAssertEqual(entries, [
            // name: every Person row holds one; the tombstone is not a row.
            PageBoundsEntry(pageOffset: 8_192, entityID: UInt32(person), propertyIndex: 1,
                            bounds: PageSortBounds(low: Self.prefix("alice, w"), high: Self.prefix("zed"))),
            // note: Person 3 has none, so nothing bounds the page by it.
            PageBoundsEntry(pageOffset: 8_192, entityID: UInt32(person), propertyIndex: 2, bounds: .unbounded),
            // label: one is not ASCII.
            PageBoundsEntry(pageOffset: 8_192, entityID: UInt32(pet), propertyIndex: 0, bounds: .unbounded),
        ])
        XCTAssertEqual(Self.prefix("alice, with a long tail"), Self.prefix("alice, w"), "a prefix is the first 8 bytes")
        XCTAssertEqual(PageBoundsSummary.entries(ofDataPage: [1, 2, 3], at: 8_192), [], "not a data page: no bounds")
    }

    func testPagesAndDirectoryRoundTrip() throws {
        let (catalog, _) = page([])
        let entries = [
            PageBoundsEntry(pageOffset: 4_096, entityID: 0, propertyIndex: 1, bounds: PageSortBounds(low: 5, high: 9)),
            PageBoundsEntry(pageOffset: 4_096, entityID: 1, propertyIndex: 0, bounds: .unbounded),
            PageBoundsEntry(pageOffset: 20_480, entityID: 0, propertyIndex: 2, bounds: PageSortBounds(low: 7, high: 7)),
        ]
        let payload = PageBoundsCodec.encodePage(entries[...])
        XCTAssertEqual(payload.count, 4 + PageBoundsLayout.entryBytes * 3)
        XCTAssertEqual(try PageBoundsCodec.decodePage(payload, pageOffset: 40_960, catalog: catalog), entries)
        let listings = [PageBoundsListing(offset: 40_960, entryCount: 3), PageBoundsListing(offset: 50_000, entryCount: 511)]
        let directory = PageBoundsCodec.encodeDirectory(listings)
        XCTAssertEqual(try PageBoundsCodec.decodeDirectory(directory, pageOffset: 60_000), listings)
        XCTAssertEqual(try PageBoundsCodec.decodeDirectory(PageBoundsCodec.encodeDirectory([]), pageOffset: 60_000), [])
        XCTAssertLessThanOrEqual(4 + PageBoundsLayout.entryBytes * PageBoundsLayout.entriesPerPage, 16_384)
    }

    func testEveryDamageIsAnErrorWithItsLocation() throws {
        let (catalog, _) = page([])
        func entry(_ offset: UInt64, _ entity: UInt32 = 0, _ property: UInt32 = 1, low: UInt64 = 1, high: UInt64 = 2) -> PageBoundsEntry {
            PageBoundsEntry(pageOffset: offset, entityID: entity, propertyIndex: property, bounds: PageSortBounds(low: low, high: high))
        }
        let cases: [(String, [UInt8])] = [
            ("no entry", PageBoundsCodec.encodePage([])),
            ("cut short", Array(PageBoundsCodec.encodePage([entry(4_096)]).dropLast())),
            ("a data page before the first page", PageBoundsCodec.encodePage([entry(4_000)])),
            ("a data page after the bounds page", PageBoundsCodec.encodePage([entry(40_960)])),
            ("an entity outside the catalog", PageBoundsCodec.encodePage([entry(4_096, 2)])),
            ("a property outside the catalog", PageBoundsCodec.encodePage([entry(4_096, 1, 1)])),
            ("low above high", PageBoundsCodec.encodePage([entry(4_096, low: 3, high: 2)])),
            ("out of order", PageBoundsCodec.encodePage([entry(8_192), entry(4_096)])),
            ("a repeated entry", PageBoundsCodec.encodePage([entry(4_096), entry(4_096)])),
        ]
        for (what, payload) in cases {
            XCTAssertThrowsError(try PageBoundsCodec.decodePage(payload, pageOffset: 40_960, catalog: catalog), what) { error in
                XCTAssertTrue("\(error)".contains("data file offset 40960 (page-bounds page)"), "\(what): \(error)")
            }
        }
        let directories: [(String, [UInt8])] = [
            ("cut short", Array(PageBoundsCodec.encodeDirectory([PageBoundsListing(offset: 8_192, entryCount: 1)]).dropLast())),
            ("a page after the directory", PageBoundsCodec.encodeDirectory([PageBoundsListing(offset: 70_000, entryCount: 1)])),
            ("pages out of order", PageBoundsCodec.encodeDirectory([PageBoundsListing(offset: 9_000, entryCount: 1), PageBoundsListing(offset: 8_192, entryCount: 1)])),
            ("an empty page", PageBoundsCodec.encodeDirectory([PageBoundsListing(offset: 8_192, entryCount: 0)])),
            ("more entries than a page holds", PageBoundsCodec.encodeDirectory([PageBoundsListing(offset: 8_192, entryCount: .max)])),
            ("a page count larger than the bytes", [0xFF, 0xFF, 0xFF, 0xFF]),
        ]
        for (what, payload) in directories {
            XCTAssertThrowsError(try PageBoundsCodec.decodeDirectory(payload, pageOffset: 60_000), what) { error in
                XCTAssertTrue("\(error)".contains("data file offset 60000 (page-bounds directory page)"), "\(what): \(error)")
            }
        }
    }
}
