import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// What a checkpoint gathers about persisted secondary indexes while it copies the log's records
/// (§7.2): which entities changed, and the new values of the indexes that are in the file but not
/// in memory, which it must read, update and write anew.
struct CheckpointSecondaryPlan {
    let persisted: [SecondaryIndexID: SecondaryIndexListing]
    /// Per entity ID, the persisted indexes not in memory that the model still indexes.
    let unloaded: [Int: [(id: SecondaryIndexID, attribute: String)]]
    /// By entity ID, a reader of the values of its unloaded indexes (nil for other entities), so
    /// a copied record costs an array lookup unless its entity has one.
    private var readers: [IndexedValueReader?]
    private(set) var changes: [SecondaryIndexID: [(key: Int64, value: StoreValue)]] = [:]
    /// The entities with unloaded indexes that the checkpoint copied a record of.
    private(set) var changedEntities: Set<Int> = []
    /// Whether any record needs a look: some persisted index is not in memory.
    var watchesRecords: Bool { !unloaded.isEmpty }

    init(
        persisted: [SecondaryIndexID: SecondaryIndexListing], unloaded: [Int: [(id: SecondaryIndexID, attribute: String)]], catalog: Catalog,
        external: ExternalDataLoader?
    ) {
        self.persisted = persisted
        self.unloaded = unloaded
        readers = Array(repeating: nil, count: catalog.entities.count)
        for (entityID, indexes) in unloaded where entityID < readers.count {
            readers[entityID] = IndexedValueReader(propertyCount: catalog.entities[entityID].properties.count, propertyIndexes: indexes.map(\.id.propertyIndex), external: external)
        }
    }

    /// A record the checkpoint copies (a row or a tombstone).
    mutating func note(entityID: Int, key: Int64, _ bytes: [UInt8], _ range: Range<Int>, catalog: Catalog) throws(BinaryFormatError) {
        guard entityID < readers.count, var reader = readers[entityID], let indexes = unloaded[entityID] else { return }
        changedEntities.insert(entityID)
        let values = try reader.read(bytes, range, catalog: catalog)
        readers[entityID] = reader
        for (number, index) in indexes.enumerated() { changes[index.id, default: []].append((key, values?[number] ?? .null)) }
    }
}
