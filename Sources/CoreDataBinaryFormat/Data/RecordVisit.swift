import CoreDataModel
import CoreDataStorage

extension RecordCodec {
    /// Gives each value of the record in `bytes[start..<end]` to `visit`, by slot of the
    /// entity's layout in `layouts`, without building a ``StoreRow``: the point-read path
    /// (``PersistentStoreEngine/visitValues(of:_:)``), where the row's slot array and its
    /// teardown cost as much as finding and decoding the record.
    ///
    /// `visit` gets each stored value once, in column order, and nothing for a property the
    /// record leaves out. When this throws, `visit` may already have seen some of the values.
    ///
    /// - Returns: the record's header and the layout the slots index; `nil` as the layout for a
    ///   tombstone (nothing visited).
    /// - Throws: ``BinaryFormatError`` for any damage, as ``decode(_:from:to:catalog:layouts:external:)`` does.
    public static func visit(
        _ bytes: [UInt8], from start: Int, to end: Int, catalog: Catalog, layouts: RecordLayouts, external: ExternalDataLoader? = nil,
        _ visit: (_ slot: Int, _ value: consuming StoreValue) -> Void
    ) throws(BinaryFormatError) -> (RecordHeader, PropertyLayout?) {
        switch visitRaw(bytes, from: start, to: end, catalog: catalog, layouts: layouts, external: external, visit) {
        case .visited(let head, let layout):
            return (head, layout)
        case .declined, .damaged:
            // The checked decoder words the damage. Should it accept what the raw pass refused
            // after visiting (the two disagree only through a bug), its complete row is given
            // again, so the caller ends with every value either way.
            let (head, row) = try decode(bytes, from: start, to: end, catalog: catalog, layouts: layouts, external: external)
            guard let row else { return (head, nil) }
            for (slot, value) in row.slots.enumerated() {
                if let value { visit(slot, value) }
            }
            return (head, row.layout)
        }
    }

    private enum RawVisit {
        case visited(RecordHeader, PropertyLayout?)
        /// Nothing visited: the checked decoder takes the record from the start.
        case declined
        /// Some values visited before damage was found.
        case damaged
    }

    /// The raw pass of ``visit(_:from:to:catalog:layouts:external:_:)``: one pass decoding in
    /// place, each value handed over as it is read. No skim of the structure first: the record
    /// comes from a page or log frame whose checksum was verified, so damage inside it is a bug
    /// or a crafted file, and a skim cost a tenth of a lookup. Such damage is found on the way
    /// (`.damaged`) and the checked decoder words it.
    private static func visitRaw(
        _ bytes: [UInt8], from start: Int, to end: Int, catalog: Catalog, layouts: RecordLayouts, external: ExternalDataLoader?,
        _ visit: (Int, consuming StoreValue) -> Void
    ) -> RawVisit {
        let limit = min(end, bytes.count)
        guard start >= 0, start < limit else { return .declined }
        return bytes.withUnsafeBufferPointer { buffer -> RawVisit in
            guard let base = buffer.baseAddress else { return .declined }
            var cursor = RawCursor(base: base, position: start, end: limit)
            guard let head = RecordCodec.rawHeader(&cursor, entityCount: catalog.entities.count),
                  head.entityID < layouts.entities.count, let count = cursor.varint()
            else { return .declined }
            // The table alone, not the entity's whole entry: a copy of the entry retains each
            // of its six arrays and its layouts.
            let columns = layouts.entities[head.entityID].slotOfColumn
            guard columns.count == catalog.entities[head.entityID].properties.count, count <= UInt64(columns.count) else { return .declined }
            guard head.kind == .row else { return count == 0 && cursor.remaining == 0 ? .visited(head, nil) : .declined }
            var previous = -1
            var visited = false
            for _ in 0..<Int(count) {
                guard let rawIndex = cursor.varint(), rawIndex < UInt64(columns.count), Int(rawIndex) > previous,
                      let rawTag = cursor.byte(), let tag = Tag(rawValue: rawTag)
                else { return visited ? .damaged : .declined }
                previous = Int(rawIndex)
                // The layout's own table: every slot it names is inside the layout.
                let slot = columns[previous]
                if slot < 0 {
                    guard skipRaw(tag, &cursor) else { return visited ? .damaged : .declined }
                    continue
                }
                let value: StoreValue
                if tag == .externalData {
                    // Its bytes are in a file: read through the loader, as the checked decoder does.
                    guard let external else { return visited ? .damaged : .declined }
                    var reader = ByteReader(bytes, from: cursor.position - 1, to: cursor.end)
                    guard let loaded = try? Self.value(&reader, catalog: catalog, external: external) else { return visited ? .damaged : .declined }
                    cursor.position = reader.position
                    value = loaded
                } else {
                    guard let decoded = rawValue(tag, &cursor, bytes: bytes, catalog: catalog) else { return visited ? .damaged : .declined }
                    value = decoded
                }
                visited = true
                visit(slot, value)
            }
            guard cursor.remaining == 0 else { return .damaged }
            return .visited(head, layouts.entities[head.entityID].layout)
        }
    }
}
