import CoreDataModel
import CoreDataStorage

/// Encodes many rows into records (Formats/binary-store.md §5) by slot: for each row layout it
/// asks ``RecordLayouts`` once for the column of every slot and the slots in column order, so a
/// row's values are written without hashing a property name or sorting.
public struct RecordEncoder {
    public let layouts: RecordLayouts
    public var catalog: Catalog { layouts.catalog }
    private var entity: EntityNumber?
    private var entityID = 0
    private var layout: PropertyLayout?
    /// For `layout`: the slots that have a column, in increasing column order, with their column.
    private var ordered: [(slot: Int, column: Int)] = []
    /// For `layout`: the slots with no column in the catalog (a value there needs registration).
    private var unmapped: [Int] = []
    private var referenceEntity: EntityNumber?
    private var referenceID = 0

    public init(layouts: RecordLayouts) { self.layouts = layouts }

    /// An encoder with catalog-only layouts (for tools and tests; a store passes its own).
    public init(catalog: Catalog) { self.init(layouts: RecordLayouts(catalog: catalog)) }

    /// Appends the record of `row` at `version`; returns `false`, writing nothing, when the
    /// catalog lacks an entity or property the row uses (the caller registers and starts over).
    ///
    /// - Parameter external: by slot, the files that hold values of the row (§15): those slots
    ///   are written as external references (tag 13) instead of their bytes. The caller wrote
    ///   the files; only a store of format version 2 or later may hold such records.
    public mutating func encode(_ row: StoreRow, version: Int64, external: [Int: ExternalDataReference] = [:], into writer: inout ByteWriter) -> Bool {
        let number = row.objectID.entity
        if number != entity {
            guard let id = catalog.entityID(of: number) else { return false }
            entity = number
            entityID = id
            layout = nil
        }
        if layout !== row.layout { prepare(row.layout) }
        // Checked once here, since the reads below are unchecked (`slots` is a public var).
        precondition(row.slots.count >= row.layout.count, "\(row.objectID): a row of \(row.slots.count) slots for a layout of \(row.layout.count)")
        // The slots read in place, without the array subscript's index checks. Each pass binds
        // a present value once (a retain and a release of a string's storage); passing the
        // values borrowed instead was measured, and the compiler copied them anyway.
        return row.slots.withUnsafeBufferPointer { slots in
            for slot in unmapped where Self.holdsValue(slots[slot]) { return false }
            // One pass bounds the record, so the second writes it through a `RawOutput` and
            // appends it once; a value that cannot be written leaves `writer` as it was. The two
            // passes must skip and bound the same slots: the output traps past its bound.
            var present = 0
            var bound = Self.maximumHeaderSize
            for (slot, _) in ordered {
                guard case .some(let value) = slots[slot], Self.holdsValue(value) else { continue }
                present += 1
                bound += RawOutput.maximumVarintSize
                if !external.isEmpty, let reference = external[slot] {
                    bound += 1 + reference.maximumPayloadSize
                } else {
                    bound += Self.maximumSize(value)
                }
            }
            return writer.appendBounded(maximumCount: bound) { output in
                output.uint8(RecordHeader.Kind.row.rawValue)
                output.varint(UInt64(entityID))
                output.varint(UInt64(bitPattern: row.objectID.primaryKey))
                output.varint(UInt64(bitPattern: version))
                output.varint(UInt64(present))
                for (slot, column) in ordered {
                    guard case .some(let value) = slots[slot], Self.holdsValue(value) else { continue }
                    output.varint(UInt64(column))
                    if !external.isEmpty, let reference = external[slot] {
                        output.uint8(RecordCodec.Tag.externalData.rawValue)
                        reference.encode(into: &output)
                    } else if !write(value, into: &output) {
                        return false
                    }
                }
                return true
            }
        }
    }

    /// The kind byte and four varints (entity, key, version, value count).
    private static let maximumHeaderSize = 1 + 4 * RawOutput.maximumVarintSize

    /// The most bytes ``write(_:into:)`` takes for `value`, its tag included.
    private static func maximumSize(_ value: StoreValue) -> Int {
        let tag = 1, id = 2 * RawOutput.maximumVarintSize
        switch value {
        case .reference: return tag + id
        case .references(let ids): return tag + RawOutput.maximumVarintSize + ids.count * id
        default: return RecordCodec.maximumScalarSize(value)
        }
    }

    /// Whether a slot holds a value to write (null values are not written, §5).
    @inline(__always)
    private static func holdsValue(_ value: StoreValue?) -> Bool {
        switch value {
        case .none, .some(.null): return false
        default: return true
        }
    }

    private mutating func prepare(_ rowLayout: PropertyLayout) {
        let table = layouts.entities[entityID]
        if rowLayout === table.layout {
            (ordered, unmapped) = (table.slotsInColumnOrder, table.slotsWithoutColumn)
        } else {
            let columns = layouts.columns(of: rowLayout, entityID: entityID)
            (ordered, unmapped) = RecordLayouts.Entity.columnOrder(Array(columns.prefix(rowLayout.count)))
        }
        layout = rowLayout
    }

    private mutating func write(_ value: StoreValue, into output: inout RawOutput) -> Bool {
        switch value {
        case .reference(let id):
            output.uint8(RecordCodec.Tag.reference.rawValue)
            return writeID(id, into: &output)
        case .references(let ids):
            output.uint8(RecordCodec.Tag.references.rawValue)
            output.varint(UInt64(ids.count))
            for id in ids where !writeID(id, into: &output) { return false }
            return true
        default:
            RecordCodec.encodeScalar(value, into: &output)
            return true
        }
    }

    private mutating func writeID(_ id: StoreObjectID, into output: inout RawOutput) -> Bool {
        if id.entity != referenceEntity {
            guard let found = catalog.entityID(of: id.entity) else { return false }
            referenceEntity = id.entity
            referenceID = found
        }
        output.varint(UInt64(referenceID))
        output.varint(UInt64(bitPattern: id.primaryKey))
        return true
    }
}
