import CoreDataStorage
import CoreDataTestSupport
import Foundation

/// The saves of the real-process test. Save `n` inserts item `n`, sets tag 1's label to
/// `save n` (so tag 1's version is `n`), and every fifth save deletes item `n - 3`: each save
/// touches several rows, so a partial save shows.
enum KillWorkload {
    static let counter = CrashTestModel.id("Tag", 1)

    static func changes(forSave n: Int64) -> StoreChangeSet {
        var counterRow = CrashTestModel.tag(1, "save \(n)")
        guard n > 1 else { return StoreChangeSet(inserted: [counterRow, CrashTestModel.item(1, owner: nil)]) }
        counterRow.version = n - 1
        let deleted: [(objectID: StoreObjectID, version: Int64)] = n % 5 == 0 ? [(CrashTestModel.id("Item", n - 3), Int64(1))] : []
        return StoreChangeSet(inserted: [CrashTestModel.item(n, owner: nil)], updated: [counterRow], deleted: deleted)
    }

    /// The store's contents after saves 1 through `n`.
    static func snapshot(after n: Int64) -> StoreSnapshot {
        var snapshot = StoreSnapshot()
        guard n > 0 else { return snapshot }
        var counterRow = StoreSnapshot.normalized(CrashTestModel.tag(1, "save \(n)"))
        counterRow.version = n
        snapshot.rows[counter] = counterRow
        for key in 1...n where !(key + 3 <= n && (key + 3) % 5 == 0) {
            var item = StoreSnapshot.normalized(CrashTestModel.item(key, owner: nil))
            item.version = 1
            snapshot.rows[item.objectID] = item
        }
        return snapshot
    }

    /// The number of the last save in a store's contents (0 for an empty store).
    static func lastSave(in snapshot: StoreSnapshot) -> Int64? {
        guard let row = snapshot.rows[counter] else { return snapshot.rows.isEmpty ? 0 : nil }
        guard case .string(let label)? = row.values["label"], label.hasPrefix("save ") else { return nil }
        return Int64(label.dropFirst(5))
    }
}
