/// A snapshot of a store kept in a ``RowTable`` (the in-memory and XML stores): the table is a
/// copy-on-write value, so the snapshot is the table as it was, for the cost of a reference.
package final class RowTableSnapshot: StoreGenerationView, @unchecked Sendable {
    private let table: RowTable
    private let storedMetadata: StoreMetadata
    package let generation: String

    package init(table: RowTable, metadata: StoreMetadata, generation: String) {
        self.table = table
        self.storedMetadata = metadata
        self.generation = generation
    }

    package func metadata() throws(StoreError) -> StoreMetadata { storedMetadata }

    package func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        let matches = table.matching(request)
        switch request.resultType {
        case .count: return .count(matches.count)
        case .objectIDs: return .objectIDs(matches.map(\.objectID))
        case .rows: return .rows(matches)
        }
    }

    package func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? { table.rows[objectID] }

    package func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] { objectIDs.compactMap { table.rows[$0] } }
}
