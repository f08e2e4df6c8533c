import CoreDataModel
import CoreDataPredicate

/// The reference execution of a fetch over candidate rows: the predicate through the reference
/// evaluator, then the sort, offset and limit. Every store that cannot answer a request from its
/// own indexes ends here, so predicates mean the same on every store.
package enum StoreQuery {
    /// The rows of `candidates` that match `request`, in its order, paged.
    ///
    /// Rows without a sort come in object-ID order so that results are stable from call to call.
    /// With a limit and a sort, only the first `offset + limit` rows are kept while sorting.
    /// Complexity: O(n) evaluations plus O(n log k) comparisons for k kept rows.
    package static func run(
        _ request: StoreFetchRequest, candidates: [StoreRow],
        resolve: @escaping (StoreObjectID) -> StoreRow?, entities: [String: NSEntityDescription]
    ) -> [StoreRow] {
        var rows = candidates
        if let predicate = request.predicate {
            rows = rows.filter { row in
                predicate.evaluate(with: RowObject(row: row, resolve: resolve, entities: entities))
            }
        }
        if request.sortDescriptors.isEmpty {
            rows.sort { $0.objectID < $1.objectID }
        } else {
            let wrapped = rows.map { RowObject(row: $0, resolve: resolve, entities: entities) }
            let ordered = { (lhs: RowObject, rhs: RowObject) -> Bool in
                for descriptor in request.sortDescriptors {
                    switch descriptor.compare(lhs, to: rhs) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return lhs.row.objectID < rhs.row.objectID
            }
            let keep = request.limit > 0 ? max(0, request.offset) + request.limit : 0
            if keep > 0, keep < wrapped.count / 4 {
                rows = topK(wrapped, keep, by: ordered).map(\.row)
            } else {
                rows = wrapped.sorted(by: ordered).map(\.row)
            }
        }
        let start = min(max(0, request.offset), rows.count)
        let end = request.limit > 0 ? min(rows.count, start + request.limit) : rows.count
        return Array(rows[start..<end])
    }

    /// The first `k` elements in order, keeping a sorted buffer of at most `k`: a row that does
    /// not beat the current k-th costs one comparison.
    private static func topK(_ items: [RowObject], _ k: Int, by ordered: (RowObject, RowObject) -> Bool) -> [RowObject] {
        var kept: [RowObject] = []
        kept.reserveCapacity(k + 1)
        for item in items {
            if kept.count == k, let last = kept.last, !ordered(item, last) { continue }
            var low = 0
            var high = kept.count
            while low < high {
                let mid = (low + high) / 2
                if ordered(kept[mid], item) { low = mid + 1 } else { high = mid }
            }
            kept.insert(item, at: low)
            if kept.count > k { kept.removeLast() }
        }
        return kept
    }
}
