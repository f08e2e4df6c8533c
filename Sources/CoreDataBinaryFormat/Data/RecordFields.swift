import Foundation
import CoreDataStorage

extension RecordCodec {
    /// Decodes only the properties a query reads (Formats/binary-store.md §5), skipping the rest
    /// without building their values: the scan path of fetches with a compiled predicate.
    ///
    /// - Parameters:
    ///   - slots: for each of the entity's catalog properties, the slot its value goes to, or -1
    ///     to skip it. Built once per entity per fetch.
    ///   - values: receives the values; slots the record does not set become `.null`.
    /// - Returns: the record's header; a tombstone leaves every slot `.null`.
    ///   - external: reads a wanted external data value (§15), as for ``decode(_:from:to:catalog:layouts:external:)``.
    /// - Throws: ``BinaryFormatError`` for any damage, as ``decode(_:from:to:catalog:layouts:external:)`` does.
    public static func decodeFields(
        _ bytes: [UInt8], from start: Int, to end: Int, catalog: Catalog, slots: [Int], into values: inout [StoreValue],
        external: ExternalDataLoader? = nil
    ) throws(BinaryFormatError) -> RecordHeader {
        for index in values.indices where !values[index].isNull { values[index] = .null }
        // The raw pass reads well-formed records over the bytes in place; anything it does not
        // accept at once (damage, or a tag it leaves to the full decoder) goes through the
        // checked decoder below, which also words the error.
        if let head = decodeFieldsRaw(bytes, from: start, to: end, catalog: catalog, slots: slots, into: &values) { return head }
        for index in values.indices where !values[index].isNull { values[index] = .null }
        var reader = ByteReader(bytes, from: start, to: end)
        let head = try header(&reader, catalog: catalog)
        let entity = catalog.entities[head.entityID]
        let count = try reader.count("value count", atMost: entity.properties.count)
        guard head.kind == .row else { return head }
        var previous = -1
        for _ in 0..<count {
            let index = try reader.count("property index", atMost: Int(Int32.max))
            guard index < entity.properties.count, index > previous else {
                throw BinaryFormatError("", "property index \(index) is out of order or not in \(entity.name)'s \(entity.properties.count) properties")
            }
            previous = index
            let slot = index < slots.count ? slots[index] : -1
            if slot >= 0, slot < values.count {
                values[slot] = try value(&reader, catalog: catalog, external: external)
            } else {
                try skipValue(&reader)
            }
        }
        return head
    }

    /// ``decodeFields(_:from:to:catalog:slots:into:)`` over the bytes in place, one pass with
    /// no per-field error labels: `nil` for anything but a well-formed record whose wanted values
    /// are booleans, integers, doubles, dates or strings.
    private static func decodeFieldsRaw(
        _ bytes: [UInt8], from start: Int, to end: Int, catalog: Catalog, slots: [Int], into values: inout [StoreValue]
    ) -> RecordHeader? {
        let limit = min(end, bytes.count)
        guard start >= 0, start < limit else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> RecordHeader? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor = RawCursor(base: base, position: start, end: limit)
            guard let head = RecordCodec.rawHeader(&cursor, entityCount: catalog.entities.count), let count = cursor.varint() else { return nil }
            let propertyCount = catalog.entities[head.entityID].properties.count
            guard count <= UInt64(propertyCount) else { return nil }
            guard head.kind == .row else { return head }
            var previous = -1
            for _ in 0..<Int(count) {
                guard let rawIndex = cursor.varint(), rawIndex < UInt64(propertyCount), Int(rawIndex) > previous,
                      let rawTag = cursor.byte(), let tag = Tag(rawValue: rawTag)
                else { return nil }
                let index = Int(rawIndex)
                previous = index
                let slot = index < slots.count ? slots[index] : -1
                let wanted = slot >= 0 && slot < values.count
                if wanted {
                    guard let value = rawValue(tag, &cursor, bytes: bytes, catalog: catalog) else { return nil }
                    values[slot] = value
                } else {
                    guard skipRaw(tag, &cursor) else { return nil }
                }
            }
            return head
        }
    }

    /// ``decode(_:from:to:catalog:layouts:external:)`` over the bytes in place for a record of an entity
    /// `layouts` covers: `nil` for anything else, and for any damage (the checked decoder then
    /// words the error).
    static func decodeRaw(_ bytes: [UInt8], from start: Int, to end: Int, catalog: Catalog, layouts: RecordLayouts) -> (RecordHeader, StoreRow?)? {
        let limit = min(end, bytes.count)
        guard start >= 0, start < limit else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> (RecordHeader, StoreRow?)? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor = RawCursor(base: base, position: start, end: limit)
            guard let head = RecordCodec.rawHeader(&cursor, entityCount: catalog.entities.count),
                  head.entityID < layouts.entities.count, let count = cursor.varint()
            else { return nil }
            let entity = head.entityID
            let columns = layouts.entities[entity].slotOfColumn
            guard columns.count == catalog.entities[entity].properties.count, count <= UInt64(columns.count) else { return nil }
            guard head.kind == .row else { return count == 0 && cursor.remaining == 0 ? (head, nil) : nil }
            let layout = layouts.entities[entity].layout
            var slots: [StoreValue?] = .emptySlots(layout.count)
            // Written through the buffer: a subscript write to the array checks its uniqueness
            // and copies the old value out, per field (about 100 instructions a point lookup).
            let complete = slots.withUnsafeMutableBufferPointer { slots -> Bool in
                var previous = -1
                for _ in 0..<Int(count) {
                    guard let rawIndex = cursor.varint(), rawIndex < UInt64(columns.count), Int(rawIndex) > previous,
                          let rawTag = cursor.byte(), let tag = Tag(rawValue: rawTag),
                          let value = rawValue(tag, &cursor, bytes: bytes, catalog: catalog)
                    else { return false }
                    previous = Int(rawIndex)
                    // The layout's own table: every slot it names is inside the layout.
                    let slot = columns[previous]
                    if slot >= 0 { slots[slot] = value }
                }
                return cursor.remaining == 0
            }
            guard complete else { return nil }
            let id = StoreObjectID(entity: catalog.entities[entity].number, primaryKey: head.primaryKey)
            return (head, StoreRow(objectID: id, version: head.version, layout: layout, slots: slots))
        }
    }

    /// The value after `tag` at the cursor, `nil` on damage. The common kinds are read in place;
    /// the rest through the checked reader from the tag on.
    @inline(__always)
    static func rawValue(_ tag: Tag, _ cursor: inout RawCursor, bytes: [UInt8], catalog: Catalog) -> StoreValue? {
        switch tag {
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .integer:
            guard let raw = cursor.varint() else { return nil }
            return .integer(ZigZag.decode(raw))
        case .double:
            guard let bits = cursor.uint64() else { return nil }
            return .double(Double(bitPattern: bits))
        case .date:
            guard let bits = cursor.uint64() else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
        case .string:
            guard let length = cursor.varint(), length <= UInt64(cursor.remaining) else { return nil }
            let text = UnsafeBufferPointer(start: cursor.base + cursor.position, count: Int(length))
            cursor.position += Int(length)
            var high: UInt8 = 0
            for byte in text { high |= byte }
            if high < 0x80 { return .string(String(decoding: text, as: UTF8.self)) }
            return String(validating: text, as: UTF8.self).map { .string($0) }
        case .externalData:
            // Its bytes are in a file: the checked decoder reads them through its loader.
            return nil
        case .decimal, .data, .uuid, .uri, .reference, .references:
            var reader = ByteReader(bytes, from: cursor.position - 1, to: cursor.end)
            guard let value = try? value(&reader, catalog: catalog) else { return nil }
            cursor.position = reader.position
            return value
        }
    }

    /// Moves the cursor past the value after `tag`; `false` on damage.
    @inline(__always)
    static func skipRaw(_ tag: Tag, _ cursor: inout RawCursor) -> Bool {
        switch tag {
        case .false, .true: return true
        case .integer: return cursor.varint() != nil
        case .double, .date: return cursor.skip(8)
        case .uuid: return cursor.skip(16)
        case .decimal, .string, .uri, .data:
            guard let length = cursor.varint(), length <= UInt64(cursor.remaining) else { return false }
            cursor.position += Int(length)
            return true
        case .reference:
            return cursor.varint() != nil && cursor.varint() != nil
        case .references:
            guard let count = cursor.varint(), count <= UInt64(cursor.remaining / 2) else { return false }
            for _ in 0..<Int(count) {
                guard cursor.varint() != nil, cursor.varint() != nil else { return false }
            }
            return true
        case .externalData:
            return cursor.varint() != nil && cursor.skip(8 + ExternalDataLayout.digestSize)
        }
    }

    /// Moves past one value (tag and payload) without decoding it.
    static func skipValue(_ reader: inout ByteReader) throws(BinaryFormatError) {
        let rawTag = try reader.uint8("value tag")
        guard let tag = Tag(rawValue: rawTag) else { throw BinaryFormatError("", "unknown value tag \(rawTag)") }
        switch tag {
        case .false, .true: return
        case .integer: _ = try reader.varint("integer")
        case .double, .date: try reader.skip(8, "8-byte value")
        case .uuid: try reader.skip(16, "UUID")
        case .decimal, .string, .uri, .data:
            // Literal labels: an interpolated one would be built for every value skipped.
            let length = try reader.count("value length", atMost: reader.remaining)
            try reader.skip(length, "value bytes")
        case .reference:
            _ = try reader.varint("destination entity ID")
            _ = try reader.varint("destination primary key")
        case .references:
            let count = try reader.count("to-many count", atMost: reader.remaining / 2)
            for _ in 0..<count {
                _ = try reader.varint("destination entity ID")
                _ = try reader.varint("destination primary key")
            }
        case .externalData:
            _ = try ExternalDataReference.decode(&reader)
        }
    }
}

/// A position in bytes held in place, for the raw pass: every read checks the end and gives
/// `nil` instead of an error.
struct RawCursor {
    let base: UnsafePointer<UInt8>
    var position: Int
    let end: Int

    var remaining: Int { end - position }

    @inline(__always)
    mutating func skip(_ count: Int) -> Bool {
        guard end - position >= count else { return false }
        position += count
        return true
    }

    @inline(__always)
    mutating func byte() -> UInt8? {
        guard position < end else { return nil }
        defer { position += 1 }
        return base[position]
    }

    @inline(__always)
    mutating func uint64() -> UInt64? {
        guard end - position >= 8 else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(base[position + index]) << (8 * UInt64(index)) }
        position += 8
        return value
    }

    /// An unsigned LEB128 varint of at most 10 bytes that fits 64 bits.
    @inline(__always)
    mutating func varint() -> UInt64? {
        guard position < end else { return nil }
        let first = base[position]
        if first < 0x80 {
            position += 1
            return UInt64(first)
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var at = position
        while at < end {
            let byte = base[at]
            at += 1
            let payload = UInt64(byte & 0x7F)
            if shift == 63, payload > 1 { return nil }
            value |= payload << shift
            if byte < 0x80 {
                position = at
                return value
            }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }
}
