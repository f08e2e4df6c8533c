import CoreDataModel
import CoreDataStorage
import Foundation

/// A record's first fields (Formats/binary-store.md §5): enough to index it without decoding
/// its values.
public struct RecordHeader: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        case row = 1
        case tombstone = 2
    }

    public var kind: Kind
    public var entityID: Int
    public var primaryKey: Int64
    public var version: Int64

    public init(kind: Kind, entityID: Int, primaryKey: Int64, version: Int64) {
        self.kind = kind
        self.entityID = entityID
        self.primaryKey = primaryKey
        self.version = version
    }
}

/// Encodes rows into records and back (Formats/binary-store.md §5). No I/O.
public enum RecordCodec {
    /// §5: value tags.
    enum Tag: UInt8 {
        case `false` = 1, `true` = 2, integer = 3, double = 4, decimal = 5, string = 6, date = 7, data = 8, uuid = 9, uri = 10
        case reference = 11, references = 12
        /// §15: binary data in a file of the external-data folder (format version 2).
        case externalData = 13
    }

    /// Registers in `catalog` the entity and property names `row` uses, and every entity its
    /// references name; returns whether the catalog changed.
    @discardableResult
    public static func register(_ row: StoreRow, in catalog: inout Catalog) -> Bool {
        let names = row.slots.indices.filter { row.slots[$0] != nil }.map { row.layout.names[$0] }.sorted()
        var changed = catalog.register(entity: row.objectID.entityName, properties: names)
        for value in row.slots {
            switch value {
            case .reference(let id)?: changed = catalog.register(entity: id.entityName, properties: []) || changed
            case .references(let ids)?:
                for id in ids { changed = catalog.register(entity: id.entityName, properties: []) || changed }
            default: continue
            }
        }
        return changed
    }

    /// Appends the record of `row` to `writer`.
    ///
    /// - Precondition: ``register(_:in:)`` ran for the row (the engine always does).
    public static func encode(_ row: StoreRow, catalog: Catalog, into writer: inout ByteWriter) {
        encode(row, version: row.version, catalog: catalog, into: &writer)
    }

    /// Appends the record of `row` with `version` in place of the row's own.
    public static func encode(_ row: StoreRow, version: Int64, catalog: Catalog, into writer: inout ByteWriter) {
        guard let entityID = catalog.entityID(of: row.objectID.entity) else {
            preconditionFailure("entity \(row.objectID.entityName) is not in the store's catalog")
        }
        let entity = catalog.entities[entityID]
        writer.uint8(RecordHeader.Kind.row.rawValue)
        writer.varint(UInt64(entityID))
        writer.varint(UInt64(bitPattern: row.objectID.primaryKey))
        writer.varint(UInt64(bitPattern: version))
        // Walk the catalog's property order (so indexes increase with no sort); the count goes
        // first, in one byte when it fits, patched once known.
        let countAt = writer.count
        let present = row.slots.lazy.filter { $0 != nil && $0 != .null }.count
        let wide = entity.properties.count >= 128
        if wide {
            writer.varint(UInt64(present))
        } else {
            writer.uint8(0)
        }
        var written = 0
        for (index, name) in entity.properties.enumerated() {
            let value = row[name]
            guard !value.isNull else { continue }
            writer.varint(UInt64(index))
            encode(value, catalog: catalog, into: &writer)
            written += 1
        }
        assert(written == present, "a property of \(entity.name) is not in the store's catalog")
        if !wide { writer.bytes[countAt] = UInt8(written) }
    }

    /// Appends a tombstone: the object was deleted at `version`.
    public static func encodeTombstone(_ id: StoreObjectID, version: Int64, catalog: Catalog, into writer: inout ByteWriter) {
        guard let entityID = catalog.entityID(of: id.entity) else {
            preconditionFailure("entity \(id.entityName) is not in the store's catalog")
        }
        writer.uint8(RecordHeader.Kind.tombstone.rawValue)
        writer.varint(UInt64(entityID))
        writer.varint(UInt64(bitPattern: id.primaryKey))
        writer.varint(UInt64(bitPattern: version))
        writer.varint(0)
    }

    private static func encode(_ value: StoreValue, catalog: Catalog, into writer: inout ByteWriter) {
        switch value {
        case .reference(let id):
            writer.uint8(Tag.reference.rawValue)
            writeID(id, catalog: catalog, into: &writer)
        case .references(let ids):
            writer.uint8(Tag.references.rawValue)
            writer.varint(UInt64(ids.count))
            for id in ids { writeID(id, catalog: catalog, into: &writer) }
        default:
            encodeScalar(value, into: &writer)
        }
    }

    /// Appends an attribute value: its tag and payload.
    static func encodeScalar(_ value: StoreValue, into writer: inout ByteWriter) {
        writer.appendBounded(maximumCount: maximumScalarSize(value)) { output in
            encodeScalar(value, into: &output)
            return true
        }
    }

    /// Writes an attribute value: its tag and payload, at most ``maximumScalarSize(_:)`` bytes.
    static func encodeScalar(_ value: StoreValue, into output: inout RawOutput) {
        switch value {
        case .null, .reference, .references: preconditionFailure("\(value) is not an attribute value")
        case .bool(let v): output.uint8(v ? Tag.true.rawValue : Tag.false.rawValue)
        case .integer(let v):
            output.uint8(Tag.integer.rawValue)
            output.signedVarint(v)
        case .double(let v):
            output.uint8(Tag.double.rawValue)
            output.uint64(v.bitPattern)
        case .decimal(let v):
            output.uint8(Tag.decimal.rawValue)
            output.string(v.description)
        case .string(let v):
            output.uint8(Tag.string.rawValue)
            output.string(v)
        case .date(let v):
            output.uint8(Tag.date.rawValue)
            output.uint64(v.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let v):
            output.uint8(Tag.data.rawValue)
            output.varint(UInt64(v.count))
            v.withUnsafeBytes { output.bytes($0) }
        case .uuid(let v):
            output.uint8(Tag.uuid.rawValue)
            withUnsafeBytes(of: v.uuid) { output.bytes($0) }
        case .uri(let v):
            output.uint8(Tag.uri.rawValue)
            output.string(v.absoluteString)
        }
    }

    /// The most bytes ``encodeScalar(_:into:)`` writes for `value`. A decimal's or a URI's text
    /// is made here and again when written: cheaper than carrying it between the passes for
    /// the strings, integers and dates most records hold.
    static func maximumScalarSize(_ value: StoreValue) -> Int {
        let tag = 1
        switch value {
        case .null, .reference, .references: preconditionFailure("\(value) is not an attribute value")
        case .bool: return tag
        case .integer: return tag + RawOutput.maximumVarintSize
        case .double, .date: return tag + 8
        case .decimal(let v): return tag + RawOutput.maximumStringSize(v.description)
        case .string(let v): return tag + RawOutput.maximumStringSize(v)
        case .data(let v): return tag + RawOutput.maximumVarintSize + v.count
        case .uuid: return tag + 16
        case .uri(let v): return tag + RawOutput.maximumStringSize(v.absoluteString)
        }
    }

    private static func writeID(_ id: StoreObjectID, catalog: Catalog, into writer: inout ByteWriter) {
        guard let entityID = catalog.entityID(of: id.entity) else {
            preconditionFailure("entity \(id.entityName) is not in the store's catalog")
        }
        writer.varint(UInt64(entityID))
        writer.varint(UInt64(bitPattern: id.primaryKey))
    }

    /// Decodes the header of the record in `bytes[start..<end]`.
    public static func decodeHeader(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil, catalog: Catalog) throws(BinaryFormatError) -> RecordHeader {
        if let header = wellFormedHeader(bytes, from: start, to: end ?? bytes.count, entityCount: catalog.entities.count) { return header }
        // Anything unusual, damage included, takes the checked reader, which words the error.
        var reader = ByteReader(bytes, from: start, to: end)
        return try header(&reader, catalog: catalog)
    }

    /// The header of a record whose fields are well formed and in range, read through a
    /// ``RawCursor``; `nil` for anything else. Replay reads every record's header in the log,
    /// and a reader per record cost a third of it.
    private static func wellFormedHeader(_ bytes: [UInt8], from start: Int, to end: Int, entityCount: Int) -> RecordHeader? {
        let limit = min(end, bytes.count)
        guard start >= 0, start < limit else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> RecordHeader? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor = RawCursor(base: base, position: start, end: limit)
            return rawHeader(&cursor, entityCount: entityCount)
        }
    }

    /// The header at `cursor` with the checks of ``header(_:catalog:)`` and no error words:
    /// `nil` for anything they would reject, which the caller then reads with the checked reader.
    @inline(__always)
    static func rawHeader(_ cursor: inout RawCursor, entityCount: Int) -> RecordHeader? {
        guard let rawKind = cursor.byte(), let kind = RecordHeader.Kind(rawValue: rawKind),
              let entity = cursor.varint(), entity < UInt64(max(0, entityCount)),
              let key = cursor.varint(), key >= 1, key <= UInt64(BinaryStoreLayout.largestPrimaryKey),
              let version = cursor.varint(), version <= BinaryStoreLayout.largestCounter
        else { return nil }
        return RecordHeader(kind: kind, entityID: Int(entity), primaryKey: Int64(key), version: Int64(version))
    }

    static func header(_ reader: inout ByteReader, catalog: Catalog) throws(BinaryFormatError) -> RecordHeader {
        let rawKind = try reader.uint8("record kind")
        guard let kind = RecordHeader.Kind(rawValue: rawKind) else {
            throw BinaryFormatError("", "unknown record kind \(rawKind)")
        }
        let entityID = try reader.count("entity ID", atMost: Int(Int32.max))
        guard entityID < catalog.entities.count else {
            throw BinaryFormatError("", "entity ID \(entityID) is not in the catalog (\(catalog.entities.count) entities)")
        }
        let key = try reader.varint("primary key")
        guard key >= 1, key <= UInt64(BinaryStoreLayout.largestPrimaryKey) else {
            throw BinaryFormatError("", "primary key \(key) is outside 1...2^62")
        }
        let version = try reader.varint("version")
        guard version <= BinaryStoreLayout.largestCounter else { throw BinaryFormatError("", "version \(version) is above 2^62") }
        return RecordHeader(kind: kind, entityID: entityID, primaryKey: Int64(key), version: Int64(version))
    }

    /// Decodes the record in `bytes[start..<end]`: its header and, for a row, the row.
    ///
    /// The row is laid out as `layouts` says for its entity (the model's layout in a store);
    /// without `layouts`, or when they were built for an older catalog that lacks the entity or
    /// a column, in a layout of the entity's catalog names made for this row (slow: for tools).
    ///
    /// An external data value (§15) becomes the bytes `external` reads; without `external` it is
    /// an error, since this module does no I/O.
    ///
    /// - Throws: ``BinaryFormatError`` for any damage; the location is relative to the record
    ///   (callers prepend the page or log offset). Errors `external` throws pass through.
    public static func decode(
        _ bytes: [UInt8], from start: Int = 0, to end: Int? = nil, catalog: Catalog, layouts: RecordLayouts? = nil,
        external: ExternalDataLoader? = nil
    ) throws(BinaryFormatError) -> (RecordHeader, StoreRow?) {
        // Well-formed records of a known layout decode in one pass over the bytes in place;
        // the checked reader below handles the rest and words every error.
        if let layouts, let decoded = decodeRaw(bytes, from: start, to: end ?? bytes.count, catalog: catalog, layouts: layouts) { return decoded }
        var reader = ByteReader(bytes, from: start, to: end)
        let head = try header(&reader, catalog: catalog)
        let entity = catalog.entities[head.entityID]
        let id = StoreObjectID(entity: entity.number, primaryKey: head.primaryKey)
        let count = try reader.count("value count", atMost: entity.properties.count)
        guard head.kind == .row else {
            guard count == 0, reader.isAtEnd else { throw BinaryFormatError("", "a tombstone carries values") }
            return (head, nil)
        }
        let layout: PropertyLayout
        let slotOfColumn: [Int]?
        if let layouts, head.entityID < layouts.entities.count, layouts.entities[head.entityID].slotOfColumn.count == entity.properties.count {
            layout = layouts.entities[head.entityID].layout
            slotOfColumn = layouts.entities[head.entityID].slotOfColumn
        } else {
            layout = PropertyLayout(entityName: entity.name, names: entity.properties)
            slotOfColumn = nil
        }
        var slots: [StoreValue?] = .emptySlots(layout.count)
        var previous = -1
        for _ in 0..<count {
            let index = try reader.count("property index", atMost: Int(Int32.max))
            guard index < entity.properties.count, index > previous else {
                throw BinaryFormatError("", "property index \(index) is out of order or not in \(entity.name)'s \(entity.properties.count) properties")
            }
            previous = index
            let decoded = try value(&reader, catalog: catalog, external: external)
            if let slotOfColumn {
                let slot = slotOfColumn[index]
                if slot >= 0 { slots[slot] = decoded }
            } else {
                slots[index] = decoded
            }
        }
        guard reader.isAtEnd else { throw BinaryFormatError("", "\(reader.remaining) bytes follow the record's last value") }
        return (head, StoreRow(objectID: id, version: head.version, layout: layout, slots: slots))
    }

    static func value(_ reader: inout ByteReader, catalog: Catalog, external: ExternalDataLoader? = nil) throws(BinaryFormatError) -> StoreValue {
        let rawTag = try reader.uint8("value tag")
        guard let tag = Tag(rawValue: rawTag) else { throw BinaryFormatError("", "unknown value tag \(rawTag)") }
        switch tag {
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .integer: return .integer(try reader.signedVarint())
        case .double: return .double(Double(bitPattern: try reader.uint64("double")))
        case .decimal:
            let text = try reader.string("decimal")
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw BinaryFormatError("", "'\(text)' is not a decimal number")
            }
            return .decimal(decimal)
        case .string: return .string(try reader.string())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.uint64("date"))))
        case .data:
            let length = try reader.count("data length", atMost: reader.remaining)
            return .data(Data(try reader.bytes(length, "data")))
        case .uuid: return .uuid(uuid(from: try reader.bytes(16, "UUID")))
        case .uri:
            let text = try reader.string("URI")
            guard let url = URL(string: text) else { throw BinaryFormatError("", "'\(text)' is not a URI") }
            return .uri(url)
        case .reference: return .reference(try objectID(&reader, catalog: catalog))
        case .references:
            // Each ID takes at least 2 bytes, which bounds the count by what is left.
            let count = try reader.count("to-many count", atMost: reader.remaining / 2)
            var ids: [StoreObjectID] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(try objectID(&reader, catalog: catalog)) }
            return .references(ids)
        case .externalData:
            let reference = try ExternalDataReference.decode(&reader)
            guard let external else { throw BinaryFormatError("", "\(reference) is read from the store's external-data folder, which this decoder was not given") }
            return .data(try external(reference))
        }
    }

    private static func objectID(_ reader: inout ByteReader, catalog: Catalog) throws(BinaryFormatError) -> StoreObjectID {
        let entityID = try reader.count("destination entity ID", atMost: Int(Int32.max))
        guard entityID < catalog.entities.count else {
            throw BinaryFormatError("", "destination entity ID \(entityID) is not in the catalog")
        }
        let key = try reader.varint("destination primary key")
        guard key >= 1, key <= UInt64(BinaryStoreLayout.largestPrimaryKey) else {
            throw BinaryFormatError("", "destination primary key \(key) is outside 1...2^62")
        }
        return StoreObjectID(entity: catalog.entities[entityID].number, primaryKey: Int64(key))
    }
}
