import CoreDataBinaryFormat
import CoreDataModel
import CoreDataStorage
import Foundation
import XCTest

/// Values by slot (issue 14): layouts, rows by slot, and records mapped to slots through
/// `RecordLayouts` whatever order the catalog has.
final class ValuesBySlotTests: XCTestCase {
    private func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        return attribute
    }

    /// Person(name, age) with subentity Employee(salary); frozen.
    private func model() throws -> NSManagedObjectModel {
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [attribute("name", .stringAttributeType), attribute("age", .integer64AttributeType)]
        let employee = NSEntityDescription()
        employee.name = "Employee"
        employee.properties = [attribute("salary", .doubleAttributeType)]
        person.subentities = [employee]
        let model = NSManagedObjectModel()
        model.entities = [person, employee]
        try model.freeze()
        return model
    }

    func testInheritedPropertiesKeepTheirSlotInSubentities() throws {
        let model = try model()
        let person = try XCTUnwrap(model.entitiesByName["Person"]).propertyLayout
        let employee = try XCTUnwrap(model.entitiesByName["Employee"]).propertyLayout
        XCTAssertEqual(person.names, ["name", "age"])
        XCTAssertEqual(employee.names, ["name", "age", "salary"])
        for name in person.names { XCTAssertEqual(person.slot(of: name), employee.slot(of: name)) }
        // A frozen entity hands out one layout object: rows compare layouts by identity.
        XCTAssertTrue(model.entitiesByName["Person"]?.propertyLayout === person)
    }

    func testNameViewAndSlotsAgree() throws {
        let layout = try XCTUnwrap(model().entitiesByName["Employee"]).propertyLayout
        var row = StoreRow(objectID: StoreObjectID(entityName: "Employee", primaryKey: 3), version: 1, layout: layout, slots: [.string("Ann"), nil, .double(2.5)])
        XCTAssertEqual(row.values, ["name": .string("Ann"), "salary": .double(2.5)])
        XCTAssertEqual(row["age"], .null)
        XCTAssertFalse(row.contains("age"))
        row["age"] = .integer(40)
        XCTAssertTrue(row.layout === layout, "setting a property the layout has keeps the layout")
        XCTAssertEqual(row[slot: 1], .integer(40))
        // Equal to the same values laid out by name.
        XCTAssertEqual(row, StoreRow(objectID: row.objectID, version: 1, values: ["name": .string("Ann"), "age": .integer(40), "salary": .double(2.5)]))
        // A name the layout lacks extends it; the old slots stay where they were.
        row["nickname"] = .string("A")
        XCTAssertTrue(row.layout.extends(layout))
        XCTAssertEqual(row[slot: 0], .string("Ann"))
        XCTAssertEqual(row["nickname"], .string("A"))
    }

    /// A catalog in another order than the model (an older store: sorted names), with a column
    /// the model lacks: records decode into the model's layout, the extra value is kept, and a
    /// row in the model's layout encodes to the same record.
    func testRecordsMapCatalogColumnsToModelSlots() throws {
        let model = try model()
        let layout = try XCTUnwrap(model.entitiesByName["Employee"]).propertyLayout
        var catalog = Catalog()
        catalog.register(entity: "Employee", properties: ["age", "legacy", "name", "salary"])
        let layouts = RecordLayouts(catalog: catalog, models: ["Employee": layout])
        let written = StoreRow(
            objectID: StoreObjectID(entityName: "Employee", primaryKey: 9), version: 2,
            values: ["age": .integer(51), "legacy": .string("kept"), "name": .string("Bo"), "salary": .double(10)])
        var writer = ByteWriter()
        RecordCodec.encode(written, catalog: catalog, into: &writer)

        let decoded = try XCTUnwrap(RecordCodec.decode(writer.bytes, catalog: catalog, layouts: layouts).1)
        XCTAssertTrue(decoded.layout.extends(layout), "decoded into the model's layout, extended by the catalog's extra column")
        XCTAssertEqual(decoded[slot: try XCTUnwrap(layout.slot(of: "age"))], .integer(51))
        XCTAssertEqual(decoded[slot: try XCTUnwrap(layout.slot(of: "name"))], .string("Bo"))
        XCTAssertEqual(decoded["legacy"], .string("kept"))
        XCTAssertEqual(decoded, written)

        var encoder = RecordEncoder(layouts: layouts)
        var again = ByteWriter()
        XCTAssertTrue(encoder.encode(decoded, version: 2, into: &again))
        XCTAssertEqual(again.bytes, writer.bytes, "slot order is not column order; the encoder writes columns in increasing order")

        // A row in the bare model layout: encodes; a model property the catalog lacks needs registration.
        var modelRow = decoded.relaid(as: layout)
        XCTAssertEqual(modelRow["legacy"], .null, "the bare model layout has no slot for it")
        XCTAssertTrue(encoder.encode(modelRow, version: 3, into: &again))
        var narrow = Catalog()
        narrow.register(entity: "Employee", properties: ["name"])
        var narrowEncoder = RecordEncoder(layouts: RecordLayouts(catalog: narrow, models: ["Employee": layout]))
        var scratch = ByteWriter()
        modelRow.version = 3
        XCTAssertFalse(narrowEncoder.encode(modelRow, version: 3, into: &scratch), "age and salary are not in that catalog")
        XCTAssertTrue(scratch.bytes.isEmpty, "nothing is written when the catalog lacks a column")
    }

    /// Without a model (the CLI, fuzz targets) records decode into the catalog's own order.
    func testWithoutAModelRecordsDecodeInCatalogOrder() throws {
        var catalog = Catalog()
        catalog.register(entity: "Tag", properties: ["title", "rank"])
        let row = StoreRow(objectID: StoreObjectID(entityName: "Tag", primaryKey: 1), version: 1, values: ["rank": .integer(2), "title": .string("t")])
        var writer = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &writer)
        let decoded = try XCTUnwrap(RecordCodec.decode(writer.bytes, catalog: catalog, layouts: RecordLayouts(catalog: catalog)).1)
        XCTAssertEqual(decoded.layout.names, ["title", "rank"])
        XCTAssertEqual(decoded.slots, [.string("t"), .integer(2)])
    }

    /// The encoder stages a record in memory it bounds beforehand (`RawOutput`): every value
    /// kind, in a record staged on the stack and in one staged in the writer, writes the same
    /// bytes as the reference encoder in catalog order and decodes back; a row it cannot
    /// write leaves the writer as it was.
    func testEveryValueKindEncodesAsTheReferenceEncoderDoes() throws {
        let names = ["flag", "off", "count", "small", "ratio", "price", "title", "long", "at", "blob", "bigBlob", "id", "link", "owner", "members", "empty", "huge"]
        var catalog = Catalog()
        catalog.register(entity: "Item", properties: names)
        catalog.register(entity: "Member", properties: [])
        let members = (1...300).map { StoreObjectID(entityName: "Member", primaryKey: Int64($0) << 40) }
        let values: [String: StoreValue] = [
            "flag": .bool(true), "off": .bool(false), "count": .integer(.min), "small": .integer(-1), "ratio": .double(-0.0),
            "price": .decimal(Decimal(string: "-12345678901234567890.125") ?? 0), "title": .string("Zoë 🐧 \u{0}"),
            "long": .string(String(repeating: "é", count: 3000)), "at": .date(Date(timeIntervalSinceReferenceDate: 1e9)),
            "blob": .data(Data([0, 1, 2, 255])), "bigBlob": .data(Data((0..<5000).map { UInt8(truncatingIfNeeded: $0) })),
            "id": .uuid(try XCTUnwrap(UUID(uuidString: "01234567-89AB-CDEF-0123-456789ABCDEF"))),
            "link": .uri(try XCTUnwrap(URL(string: "x-coredata://store/Item/p1"))),
            "owner": .reference(StoreObjectID(entityName: "Member", primaryKey: .max >> 2)), "members": .references(members), "empty": .null,
            "huge": .data(Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })),
        ]
        // Under 1 KiB a record is staged on the stack, over it in the writer's own array.
        var small = values
        for name in ["huge", "long", "bigBlob", "members"] { small[name] = nil }
        let smallRow = StoreRow(objectID: StoreObjectID(entityName: "Item", primaryKey: 2), version: 7, values: small)
        var smallReference = ByteWriter()
        RecordCodec.encode(smallRow, catalog: catalog, into: &smallReference)
        var smallEncoder = RecordEncoder(catalog: catalog)
        var smallWriter = ByteWriter()
        XCTAssertTrue(smallEncoder.encode(smallRow, version: 7, into: &smallWriter))
        XCTAssertEqual(smallWriter.bytes, smallReference.bytes)

        let row = StoreRow(objectID: StoreObjectID(entityName: "Item", primaryKey: 1 << 62), version: 7, values: values)
        var reference = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &reference)

        var encoder = RecordEncoder(catalog: catalog)
        var writer = ByteWriter()
        writer.append([0xAA, 0xBB])
        XCTAssertTrue(encoder.encode(row, version: 7, into: &writer))
        XCTAssertEqual(Array(writer.bytes.dropFirst(2)), reference.bytes)
        let decoded = try XCTUnwrap(RecordCodec.decode(reference.bytes, catalog: catalog, layouts: RecordLayouts(catalog: catalog)).1)
        for name in names { XCTAssertEqual(decoded[name], row[name], name) }
        XCTAssertEqual(decoded.objectID, row.objectID)
        XCTAssertEqual(decoded.version, row.version)

        // An external reference in place of a value (§15): tag 13 and the reference, found again.
        let external = ExternalDataReference(length: 5000, checksum: 0x0123_4567_89AB_CDEF, digest: (0..<32).map { UInt8($0) })
        var withExternal = ByteWriter()
        let bigBlob = try XCTUnwrap(row.layout.slot(of: "bigBlob"))
        XCTAssertTrue(encoder.encode(row, version: 7, external: [bigBlob: external], into: &withExternal))
        XCTAssertEqual(try RecordCodec.externalReferences(in: withExternal.bytes, from: 0, to: withExternal.count, catalog: catalog), [external])

        // A reference to an entity the catalog lacks: nothing written, the writer unchanged.
        var stranger = row
        stranger["owner"] = .reference(StoreObjectID(entityName: "Stranger", primaryKey: 1))
        XCTAssertFalse(encoder.encode(stranger, version: 7, into: &writer))
        XCTAssertEqual(writer.count, 2 + reference.count)
    }

    /// The point-read path gives the values the checked decoder finds, every kind, once each;
    /// a tombstone gives none; damage throws as the decoder's does.
    func testVisitingARecordGivesTheValuesDecodingGives() throws {
        let names = ["flag", "count", "ratio", "price", "title", "at", "blob", "id", "link", "owner", "members", "empty"]
        var catalog = Catalog()
        catalog.register(entity: "Item", properties: names)
        let values: [String: StoreValue] = [
            "flag": .bool(true), "count": .integer(-7), "ratio": .double(0.5), "price": .decimal(Decimal(string: "12.25") ?? 0),
            "title": .string("Zoë 🐧"), "at": .date(Date(timeIntervalSinceReferenceDate: 1e9)), "blob": .data(Data([0, 1, 255])),
            "id": .uuid(try XCTUnwrap(UUID(uuidString: "01234567-89AB-CDEF-0123-456789ABCDEF"))),
            "link": .uri(try XCTUnwrap(URL(string: "x-coredata://store/Item/p1"))),
            "owner": .reference(StoreObjectID(entityName: "Item", primaryKey: 3)),
            "members": .references([StoreObjectID(entityName: "Item", primaryKey: 4)]), "empty": .null,
        ]
        let row = StoreRow(objectID: StoreObjectID(entityName: "Item", primaryKey: 2), version: 5, values: values)
        var writer = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &writer)
        let layouts = RecordLayouts(catalog: catalog)
        let decoded = try XCTUnwrap(RecordCodec.decode(writer.bytes, catalog: catalog, layouts: layouts).1)

        var visited: [Int: StoreValue] = [:]
        var calls = 0
        let (head, layout) = try RecordCodec.visit(writer.bytes, from: 0, to: writer.count, catalog: catalog, layouts: layouts) { slot, value in
            calls += 1
            visited[slot] = value
        }
        XCTAssertEqual(head.version, 5)
        XCTAssertEqual(head.primaryKey, 2)
        let visitedLayout = try XCTUnwrap(layout)
        XCTAssertTrue(visitedLayout === decoded.layout)
        // A null is not stored (§5): every other value is visited once.
        XCTAssertEqual(calls, names.count - 1)
        for name in names {
            let slot = try XCTUnwrap(visitedLayout.slot(of: name), name)
            XCTAssertEqual(visited[slot], decoded.slots[slot], name)
            XCTAssertEqual(visited[slot] ?? .null, row[name], name)
        }
        XCTAssertNil(visited[try XCTUnwrap(visitedLayout.slot(of: "empty"))])

        // A tombstone: no layout, nothing visited.
        var tombstone = ByteWriter()
        RecordCodec.encodeTombstone(StoreObjectID(entityName: "Item", primaryKey: 2), version: 6, catalog: catalog, into: &tombstone)
        calls = 0
        XCTAssertNil(try RecordCodec.visit(tombstone.bytes, from: 0, to: tombstone.count, catalog: catalog, layouts: layouts) { _, _ in calls += 1 }.1)
        XCTAssertEqual(calls, 0)

        // Cut short: the values before the cut may be visited, then the checked decoder's error.
        visited = [:]
        XCTAssertThrowsError(try RecordCodec.visit(writer.bytes, from: 0, to: writer.count - 3, catalog: catalog, layouts: layouts) { slot, value in
            visited[slot] = value
        })
        XCTAssertLessThan(visited.count, names.count - 1)
        // A trailing byte is damage too.
        XCTAssertThrowsError(try RecordCodec.visit(writer.bytes + [0], from: 0, to: writer.count + 1, catalog: catalog, layouts: layouts) { _, _ in })
        // Invalid UTF-8 inside the title: the error is the checked decoder's.
        let titleBytes = Array("Zoë 🐧".utf8)
        guard let at = Self.firstRange(of: titleBytes, in: writer.bytes) else { return XCTFail("the title's bytes are not in the record") }
        var damaged = writer.bytes
        damaged[at] = 0xFF
        XCTAssertThrowsError(try RecordCodec.visit(damaged, from: 0, to: damaged.count, catalog: catalog, layouts: layouts) { _, _ in }) { error in
            XCTAssertTrue("\(error)".contains("UTF-8"), "\(error)")
        }
    }

    /// Slot tables built from an older catalog (an entity or a property added since) do not
    /// cover the record: the checked decoder reads it into a layout of the catalog's names,
    /// and each value is still given once.
    func testVisitingARecordTheLayoutsDoNotCoverFallsBackToCatalogNames() throws {
        var catalog = Catalog()
        catalog.register(entity: "Item", properties: ["title"])
        let layouts = RecordLayouts(catalog: catalog)
        catalog.register(entity: "Item", properties: ["title", "count"])
        catalog.register(entity: "Late", properties: ["name"])
        for (entity, values) in [("Item", ["title": StoreValue.string("a"), "count": .integer(3)]), ("Late", ["name": .string("b")])] {
            let row = StoreRow(objectID: StoreObjectID(entityName: entity, primaryKey: 1), version: 2, values: values)
            var writer = ByteWriter()
            RecordCodec.encode(row, catalog: catalog, into: &writer)
            var visited: [Int: StoreValue] = [:]
            let (head, layout) = try RecordCodec.visit(writer.bytes, from: 0, to: writer.count, catalog: catalog, layouts: layouts) { slot, value in
                XCTAssertNil(visited.updateValue(value, forKey: slot), "slot \(slot) visited twice")
            }
            XCTAssertEqual(head.version, 2)
            let names = try XCTUnwrap(layout).names
            XCTAssertEqual(Set(names), Set(values.keys), entity)
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: visited.map { (names[$0.key], $0.value) }), values, entity)
        }
    }

    private static func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
