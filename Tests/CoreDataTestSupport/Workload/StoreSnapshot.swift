import CoreDataStorage
import Foundation

/// A store's whole contents as the suites compare them: every row with its version and non-null
/// values, and the metadata marker the workloads set.
package struct StoreSnapshot: Equatable, Sendable, CustomStringConvertible {
    package static let markerKey = "CrashSuiteMarker"

    package var rows: [StoreObjectID: StoreRow] = [:]
    package var marker: String?

    package init() {}

    /// `row` without its null values (a store may keep or drop them).
    package static func normalized(_ row: StoreRow) -> StoreRow {
        var copy = row
        copy.values = row.values.filter { !$0.value.isNull }
        return copy
    }

    /// Reads every row of every entity and the marker through the store protocol.
    package static func read(_ store: any PersistentStoreEngine) throws -> StoreSnapshot {
        var snapshot = StoreSnapshot()
        for name in CrashTestModel.entityNames {
            guard let entity = CrashTestModel.model.entitiesByName[name] else { continue }
            guard case .rows(let rows) = try store.execute(StoreFetchRequest(entity: entity, resultType: .rows)) else {
                throw StoreError.io(detail: "a fetch of rows returned something else")
            }
            for row in rows { snapshot.rows[row.objectID] = normalized(row) }
        }
        snapshot.marker = try store.metadata()[markerKey] as? String
        return snapshot
    }

    /// The snapshot with its rows renamed (see ``CrashWorkload/renumbered(_:)``).
    func renumbered(_ rename: (StoreObjectID) -> StoreObjectID, _ row: (StoreRow) -> StoreRow) -> StoreSnapshot {
        var copy = self
        copy.rows = Dictionary(uniqueKeysWithValues: rows.values.map { (rename($0.objectID), row($0)) })
        return copy
    }

    package var description: String {
        let counts = Dictionary(grouping: rows.keys, by: \.entityName).mapValues(\.count).sorted { $0.key < $1.key }
        return "\(counts.map { "\($0.key): \($0.value)" }.joined(separator: ", ")), marker \(marker ?? "none")"
    }

    /// What differs from `expected`, for failure messages.
    package func difference(from expected: StoreSnapshot) -> String {
        var lines: [String] = []
        for id in Set(rows.keys).union(expected.rows.keys).sorted() {
            switch (rows[id], expected.rows[id]) {
            case (nil, _?): lines.append("missing \(id)")
            case (_?, nil): lines.append("unexpected \(id)")
            case (let found?, let wanted?) where found != wanted:
                let properties = Set(found.values.keys).union(wanted.values.keys).filter { found.values[$0] != wanted.values[$0] }
                lines.append("\(id): version \(found.version) (expected \(wanted.version)), differs in \(properties.sorted())")
            default: continue
            }
        }
        if marker != expected.marker { lines.append("marker \(marker ?? "none") (expected \(expected.marker ?? "none"))") }
        return lines.prefix(8).joined(separator: "; ")
    }
}
