import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// Decodes the indexed attributes of one entity's records, and nothing else of them.
struct IndexedValueReader {
    private let slots: [Int]
    private var values: [StoreValue]
    private let external: ExternalDataLoader?

    /// Values come back in the order of `propertyIndexes`. `external` reads values kept in files
    /// (§15), should a record need it.
    init(propertyCount: Int, propertyIndexes: [Int], external: ExternalDataLoader?) {
        self.external = external
        var slots = Array(repeating: -1, count: propertyCount)
        for (slot, property) in propertyIndexes.enumerated() where property < propertyCount { slots[property] = slot }
        self.slots = slots
        values = Array(repeating: .null, count: propertyIndexes.count)
    }

    /// The values of the record in `bytes[range]`; nil for a tombstone.
    mutating func read(_ bytes: [UInt8], _ range: Range<Int>, catalog: Catalog) throws(BinaryFormatError) -> [StoreValue]? {
        let head = try RecordCodec.decodeFields(bytes, from: range.lowerBound, to: range.upperBound, catalog: catalog, slots: slots, into: &values, external: external)
        return head.kind == .row ? values : nil
    }
}
