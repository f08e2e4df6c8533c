// Fuzz target: arbitrary bytes as one record of a data page or log entry, decoded against
// the fixed catalog of the golden store's model with RecordCodec.decode and, for several slot
// maps, RecordCodec.decodeFields. Where decode succeeds: decodeFields must agree with it, and the
// row must survive decode → encode → decode unchanged with both encoders (RecordCodec.encode and
// RecordEncoder). The same bytes are also a persistent-history change list
// (HistoryRecordCodec.decodeChanges, Formats/binary-store.md §14.2): where it decodes, it must
// survive encode → decode unchanged. Decoders must throw; any crash, hang, failed check or
// sanitizer report is a bug. The store's own read paths are checked against the same checked
// decode: the in-place decoder (RecordCodec.decode with the catalog's layouts) and the point-read
// visitor (RecordCodec.visit) must succeed exactly where it does, give the same header and values,
// and the visitor must give each value once.
import CoreDataBinaryFormat
import CoreDataStorage
import CoreDataTestModel
import Foundation
import FuzzBinarySupport

/// The body of the `FuzzBinaryRecord` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzBinaryRecord {
    /// Decodes `bytes` as a history change list and as a record, and checks the decoders agree
    /// and round-trip.
    ///
    /// Traps (`precondition`) on any disagreement or change in a round trip.
    public static func run(_ bytes: [UInt8]) {
        if let changes = try? HistoryRecordCodec.decodeChanges(bytes) {
            let again = try? HistoryRecordCodec.decodeChanges(HistoryRecordCodec.encodeChanges(changes))
            precondition(again.map { sameChanges($0, changes) } ?? false, "a change list does not survive encode → decode: \(describe(bytes))")
        }
        let catalog = BinaryTestModel.catalog
        let decoded = try? RecordCodec.decode(bytes, catalog: catalog)
        let header = try? RecordCodec.decodeHeader(bytes, catalog: catalog)
        if let decoded { precondition(header == decoded.0, "decodeHeader and decode disagree on \(describe(bytes))") }

        // decodeFields with every property, with none, and with every other one into fewer slots.
        for pattern in 0..<3 {
            let width = 16
            let slots: [Int] = (0..<width).map { index in
                switch pattern {
                case 0: return index
                case 1: return -1
                default: return index % 2 == 0 ? index / 2 : -1
                }
            }
            var values = [StoreValue](repeating: .integer(42), count: pattern == 2 ? width / 2 : width)
            guard let head = try? RecordCodec.decodeFields(bytes, from: 0, to: bytes.count, catalog: catalog, slots: slots, into: &values) else {
                precondition(decoded == nil, "decodeFields throws where decode succeeds: \(describe(bytes))")
                continue
            }
            guard let (decodedHead, row) = decoded else { continue }
            precondition(head == decodedHead, "decodeFields and decode disagree on the header of \(describe(bytes))")
            let properties = catalog.entities[head.entityID].properties
            for (index, slot) in slots.enumerated() where slot >= 0 && slot < values.count {
                let expected = index < properties.count ? (row?.values[properties[index]] ?? .null) : .null
                precondition(same(values[slot], expected), "decodeFields gives \(values[slot]) for property \(index), decode \(expected): \(describe(bytes))")
            }
        }

        checkReadPaths(bytes, against: decoded)

        guard let (head, row) = decoded else { return }
        guard let row else {
            var writer = ByteWriter()
            let id = StoreObjectID(entityName: catalog.entities[head.entityID].name, primaryKey: head.primaryKey)
            RecordCodec.encodeTombstone(id, version: head.version, catalog: catalog, into: &writer)
            precondition((try? RecordCodec.decode(writer.bytes, catalog: catalog))?.0 == head, "tombstone does not round-trip: \(describe(bytes))")
            return
        }
        var first = ByteWriter()
        RecordCodec.encode(row, catalog: catalog, into: &first)
        guard let (againHead, again) = try? RecordCodec.decode(first.bytes, catalog: catalog), let again else {
            preconditionFailure("re-encoded row does not decode: \(describe(bytes)) → \(describe(first.bytes))")
        }
        precondition(againHead == head, "re-encoded header differs: \(describe(bytes)) → \(describe(first.bytes))")
        precondition(same(again, row), "decode → encode → decode changed the row: \(row) became \(again) (\(describe(bytes)))")
        var encoder = RecordEncoder(catalog: catalog)
        var second = ByteWriter()
        precondition(encoder.encode(row, version: row.version, into: &second), "RecordEncoder refuses a decoded row: \(describe(bytes))")
        guard let (_, third) = try? RecordCodec.decode(second.bytes, catalog: catalog), let third, same(third, row) else {
            preconditionFailure("RecordEncoder's record does not decode to the row: \(describe(bytes)) → \(describe(second.bytes))")
        }
    }

    /// The layouts records decode into: the catalog's own (slot = column) and, as a store
    /// with its model has them, the model's (slots in the model's order, so slot ≠ column).
    private static let catalogLayouts = RecordLayouts(catalog: BinaryTestModel.catalog)
    private static let modelLayouts = RecordLayouts(catalog: BinaryTestModel.catalog, models: BinaryTestModel.model.entitiesByName.mapValues(\.propertyLayout))

    /// The in-place decode and the visitor, with both kinds of layouts, against the checked
    /// decode's result.
    private static func checkReadPaths(_ bytes: [UInt8], against decoded: (RecordHeader, StoreRow?)?) {
        checkReadPaths(bytes, against: decoded, layouts: catalogLayouts)
        checkReadPaths(bytes, against: decoded, layouts: modelLayouts)
    }

    private static func checkReadPaths(_ bytes: [UInt8], against decoded: (RecordHeader, StoreRow?)?, layouts: RecordLayouts) {
        let catalog = BinaryTestModel.catalog
        let inPlace = try? RecordCodec.decode(bytes, catalog: catalog, layouts: layouts)
        var visited: [Int: StoreValue] = [:]
        var twice = false
        let visit = try? RecordCodec.visit(bytes, from: 0, to: bytes.count, catalog: catalog, layouts: layouts) { slot, value in
            if visited.updateValue(value, forKey: slot) != nil { twice = true }
        }
        guard let (head, row) = decoded else {
            precondition(inPlace == nil, "the in-place decode accepts what the checked decode refuses: \(describe(bytes))")
            precondition(visit == nil, "the visitor accepts what the checked decode refuses: \(describe(bytes))")
            return
        }
        guard let (inPlaceHead, inPlaceRow) = inPlace, let (visitHead, visitLayout) = visit else {
            preconditionFailure("a read path refuses what the checked decode accepts: \(describe(bytes))")
        }
        precondition(inPlaceHead == head && visitHead == head, "the read paths disagree on the header of \(describe(bytes))")
        precondition(!twice, "the visitor gave a value twice: \(describe(bytes))")
        guard let row else {
            precondition(inPlaceRow == nil && visitLayout == nil && visited.isEmpty, "a tombstone read as a row: \(describe(bytes))")
            return
        }
        guard let inPlaceRow, let visitLayout else { preconditionFailure("a row read as a tombstone: \(describe(bytes))") }
        precondition(same(inPlaceRow, row), "the in-place decode gives \(inPlaceRow), the checked \(row): \(describe(bytes))")
        var byName: [String: StoreValue] = [:]
        for (slot, value) in visited {
            precondition(slot >= 0 && slot < visitLayout.count, "the visitor gave slot \(slot) outside its layout: \(describe(bytes))")
            byName[visitLayout.names[slot]] = value
        }
        let expected = row.values
        precondition(
            byName.count == expected.count && byName.allSatisfy { name, value in expected[name].map { same(value, $0) } ?? false },
            "the visitor gives \(byName), the checked decode \(expected): \(describe(bytes))")
    }

    /// Equality that treats a NaN double or date as equal to the same bit pattern.
    private static func same(_ a: StoreValue, _ b: StoreValue) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.date(let x), .date(let y)): return x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
        default: return a == b
        }
    }

    private static func same(_ a: StoreRow, _ b: StoreRow) -> Bool {
        a.objectID == b.objectID && a.version == b.version && a.values.count == b.values.count
            && a.values.allSatisfy { key, value in b.values[key].map { same(value, $0) } ?? false }
    }

    private static func sameChanges(_ a: [StoreHistoryChange], _ b: [StoreHistoryChange]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { x, y in
            x.kind == y.kind && x.objectID == y.objectID && x.updatedProperties == y.updatedProperties
                && x.tombstone.count == y.tombstone.count
                && x.tombstone.allSatisfy { key, value in y.tombstone[key].map { same(value, $0) } ?? false }
        }
    }

    private static func describe(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
