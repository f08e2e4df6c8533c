import CoreDataStorage

/// Encodes many rows into records (Formats/binary-store.md §5) without hashing property names
/// row after row: rows of one entity list their keys in the same order (equal dictionaries in one
/// process iterate alike), so the encoder remembers the last row's key order and property
/// indexes and only looks up a name that differs.
public struct RecordEncoder {
    public let catalog: Catalog
    private var entityName: String?
    private var entityID = 0
    private var keys: [String] = []
    private var indexes: [Int] = []
    private var scratch: [(index: Int, value: StoreValue)] = []
    private var referenceName: String?
    private var referenceID = 0

    public init(catalog: Catalog) { self.catalog = catalog }

    /// Appends the record of `row` at `version`; returns `false`, writing nothing, when the
    /// catalog lacks an entity or property the row uses (the caller registers and starts over).
    public mutating func encode(_ row: StoreRow, version: Int64, into writer: inout ByteWriter) -> Bool {
        let name = row.objectID.entityName
        if name != entityName {
            guard let id = catalog.entityID(of: name) else { return false }
            entityName = name
            entityID = id
            keys.removeAll(keepingCapacity: true)
            indexes.removeAll(keepingCapacity: true)
        }
        let entity = catalog.entities[entityID]
        scratch.removeAll(keepingCapacity: true)
        var position = 0
        for (key, value) in row.values {
            defer { position += 1 }
            let index: Int
            if position < keys.count, keys[position] == key {
                index = indexes[position]
            } else {
                guard let found = entity.index(of: key) else { return false }
                index = found
                if position < keys.count {
                    keys[position] = key
                    indexes[position] = found
                } else {
                    keys.append(key)
                    indexes.append(found)
                }
            }
            if !value.isNull { scratch.append((index, value)) }
        }
        // Property indexes must increase; rows have few values, so insertion sort.
        if scratch.count > 1 {
            for i in 1..<scratch.count {
                var j = i
                while j > 0, scratch[j - 1].index > scratch[j].index {
                    scratch.swapAt(j - 1, j)
                    j -= 1
                }
            }
        }
        let start = writer.count
        writer.uint8(RecordHeader.Kind.row.rawValue)
        writer.varint(UInt64(entityID))
        writer.varint(UInt64(bitPattern: row.objectID.primaryKey))
        writer.varint(UInt64(bitPattern: version))
        writer.varint(UInt64(scratch.count))
        for (index, value) in scratch {
            writer.varint(UInt64(index))
            guard write(value, into: &writer) else {
                writer.bytes.removeSubrange(start...)
                return false
            }
        }
        return true
    }

    private mutating func write(_ value: StoreValue, into writer: inout ByteWriter) -> Bool {
        switch value {
        case .reference(let id):
            writer.uint8(RecordCodec.Tag.reference.rawValue)
            return writeID(id, into: &writer)
        case .references(let ids):
            writer.uint8(RecordCodec.Tag.references.rawValue)
            writer.varint(UInt64(ids.count))
            for id in ids where !writeID(id, into: &writer) { return false }
            return true
        default:
            RecordCodec.encodeScalar(value, into: &writer)
            return true
        }
    }

    private mutating func writeID(_ id: StoreObjectID, into writer: inout ByteWriter) -> Bool {
        if id.entityName != referenceName {
            guard let found = catalog.entityID(of: id.entityName) else { return false }
            referenceName = id.entityName
            referenceID = found
        }
        writer.varint(UInt64(referenceID))
        writer.varint(UInt64(bitPattern: id.primaryKey))
        return true
    }
}
