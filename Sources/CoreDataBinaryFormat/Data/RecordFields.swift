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
    /// - Throws: ``BinaryFormatError`` for any damage, as ``decode(_:from:to:catalog:)`` does.
    public static func decodeFields(
        _ bytes: [UInt8], from start: Int, to end: Int, catalog: Catalog, slots: [Int], into values: inout [StoreValue]
    ) throws(BinaryFormatError) -> RecordHeader {
        for index in values.indices { values[index] = .null }
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
                values[slot] = try value(&reader, catalog: catalog)
            } else {
                try skipValue(&reader)
            }
        }
        return head
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
        }
    }
}
