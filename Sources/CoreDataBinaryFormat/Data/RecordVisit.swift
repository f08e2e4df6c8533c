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
        _ visit: (_ slot: Int, _ value: StoreValue) -> Void
    ) throws(BinaryFormatError) -> (RecordHeader, PropertyLayout?) {
        switch visitRaw(bytes, from: start, to: end, catalog: catalog, layouts: layouts, visit) {
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

    /// The raw pass of ``visit(_:from:to:catalog:layouts:external:_:)``: a skim that checks the
    /// record's structure first (so damage it can see, and external data it leaves to the
    /// checked decoder, decline before anything is visited), then one pass decoding in place.
    private static func visitRaw(
        _ bytes: [UInt8], from start: Int, to end: Int, catalog: Catalog, layouts: RecordLayouts, _ visit: (Int, StoreValue) -> Void
    ) -> RawVisit {
        let limit = min(end, bytes.count)
        guard start >= 0, start < limit else { return .declined }
        return bytes.withUnsafeBufferPointer { buffer -> RawVisit in
            guard let base = buffer.baseAddress else { return .declined }
            var cursor = RawCursor(base: base, position: start, end: limit)
            guard let head = RecordCodec.rawHeader(&cursor, entityCount: catalog.entities.count),
                  head.entityID < layouts.entities.count, let count = cursor.varint()
            else { return .declined }
            let entity = layouts.entities[head.entityID]
            let columns = entity.slotOfColumn
            guard columns.count == catalog.entities[head.entityID].properties.count, count <= UInt64(columns.count) else { return .declined }
            guard head.kind == .row else { return count == 0 && cursor.remaining == 0 ? .visited(head, nil) : .declined }
            var skim = cursor
            var previous = -1
            for _ in 0..<Int(count) {
                guard let rawIndex = skim.varint(), rawIndex < UInt64(columns.count), Int(rawIndex) > previous,
                      let rawTag = skim.byte(), let tag = Tag(rawValue: rawTag), tag != .externalData, skipRaw(tag, &skim)
                else { return .declined }
                previous = Int(rawIndex)
            }
            guard skim.remaining == 0 else { return .declined }
            // The skim vouched for the indexes and tags; what is left to fail is a value's own
            // content (UTF-8, a decimal's text, a reference's entity).
            for _ in 0..<Int(count) {
                guard let rawIndex = cursor.varint(), let rawTag = cursor.byte(), let tag = Tag(rawValue: rawTag) else { return .damaged }
                // The layout's own table: every slot it names is inside the layout.
                let slot = columns[Int(rawIndex)]
                if slot < 0 {
                    guard skipRaw(tag, &cursor) else { return .damaged }
                    continue
                }
                guard let value = rawValue(tag, &cursor, bytes: bytes, catalog: catalog) else { return .damaged }
                visit(slot, value)
            }
            return .visited(head, entity.layout)
        }
    }
}
