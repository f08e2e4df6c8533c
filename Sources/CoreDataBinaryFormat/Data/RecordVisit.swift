import CoreDataModel
import CoreDataStorage

extension RecordCodec {
    /// Gives each value of the record in `bytes[start..<end]` to `visit`, by slot of the
    /// entity's layout in `layouts`, without building a ``StoreRow``: the point-read path
    /// (``PersistentStoreEngine/visitValues(of:_:)``), which spares the row's slot array and its
    /// teardown and hands each value over owned (a String moved, not copied).
    ///
    /// `visit` gets each stored value once, and nothing for a property the record leaves out.
    /// A record of an entity `layouts` does not cover is read by the checked decoder into a
    /// layout of the catalog's property names, which is the layout returned.
    ///
    /// - Returns: the record's header and the layout the slots index; `nil` as the layout for a
    ///   tombstone (nothing visited).
    /// - Throws: ``BinaryFormatError`` for any damage, as ``decode(_:from:to:catalog:layouts:external:)``
    ///   does, and whatever `external` throws; `visit` may already have seen some values then.
    public static func visit(
        _ bytes: [UInt8], from start: Int, to end: Int, catalog: Catalog, layouts: RecordLayouts, external: ExternalDataLoader? = nil,
        _ visit: (_ slot: Int, _ value: consuming StoreValue) -> Void
    ) throws(BinaryFormatError) -> (RecordHeader, PropertyLayout?) {
        switch visitRaw(bytes, from: start, to: end, catalog: catalog, layouts: layouts, external: external, visit) {
        case .visited(let head, let layout):
            return (head, layout)
        case .failed(let error):
            throw error
        case .declined:
            // Nothing visited yet: the checked decoder reads the record from the start.
            let (head, row) = try decode(bytes, from: start, to: end, catalog: catalog, layouts: layouts, external: external)
            guard let row else { return (head, nil) }
            for (slot, value) in row.slots.enumerated() {
                if let value { visit(slot, value) }
            }
            return (head, row.layout)
        case .damaged:
            // Values were visited: the checked decoder only words the damage. Should it accept
            // the record (the two decoders disagree, a bug), the values are not given twice.
            _ = try decode(bytes, from: start, to: end, catalog: catalog, layouts: layouts, external: external)
            throw BinaryFormatError("", "the record's in-place decoder refused a record the checked decoder accepts")
        }
    }

    private enum RawVisit {
        case visited(RecordHeader, PropertyLayout?)
        /// Nothing visited: the checked decoder takes the record from the start.
        case declined
        /// Some values visited before damage was found.
        case damaged
        /// The external-data loader failed: its error is the answer, not the checked decoder's
        /// second read of the file.
        case failed(BinaryFormatError)
    }

    /// The raw pass of ``visit(_:from:to:catalog:layouts:external:_:)``: one pass decoding in
    /// place, each value handed over as it is read. Every value is decoded and checked as the
    /// checked decoder does, those of columns without a slot too (then dropped), so the two
    /// accept the same records. No skim of the structure first: the record comes from a page or
    /// log frame whose checksum was verified, so damage inside it is a bug or a crafted file,
    /// and a skim cost a tenth of a lookup. Such damage is found on the way (`.damaged`).
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
                let value: StoreValue
                if tag == .externalData {
                    // Its bytes are in a file: read through the loader, as the checked decoder does.
                    guard let external else { return visited ? .damaged : .declined }
                    var reader = ByteReader(bytes, from: cursor.position - 1, to: cursor.end)
                    do throws(BinaryFormatError) {
                        value = try Self.value(&reader, catalog: catalog, external: external)
                    } catch {
                        return .failed(error)
                    }
                    cursor.position = reader.position
                } else {
                    guard let decoded = rawValue(tag, &cursor, bytes: bytes, catalog: catalog) else { return visited ? .damaged : .declined }
                    value = decoded
                }
                // The layout's own table: every slot it names is inside the layout.
                let slot = columns[previous]
                guard slot >= 0 else { continue }
                visited = true
                visit(slot, value)
            }
            guard cursor.remaining == 0 else { return visited ? .damaged : .declined }
            return .visited(head, layouts.entities[head.entityID].layout)
        }
    }
}
