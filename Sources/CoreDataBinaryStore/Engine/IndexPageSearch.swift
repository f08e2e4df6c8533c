import CoreDataStorage

/// Finds the index page a key falls in from the pages' first keys (Formats/binary-store.md §7):
/// the last page whose first key is at or before the key.
///
/// Keys are handed out one after another, so an entity's keys are mostly dense and pages hold
/// about as many entries each: the key's place between two pages' first keys guesses its page.
/// A bisection over a million objects' 306 pages read 8 or 9 of them (64 KiB each, decoded)
/// for the first lookup after open; the guess reads the first, the last and the one it names.
/// Each page read narrows the range as a bisection's would, and its first key bounds the next
/// guess; after two guesses, or when the bounding pages belong to another entity, the search
/// bisects. The answer is the same either way; skewed keys cost at most the first and last
/// pages' reads more than a bisection. Pages are assumed not to overlap (each page's keys below
/// the next page's first key), which loading the whole index checks.
enum IndexPageSearch {
    /// The position of the last of `count` pages whose first key is at or before `target`; 0
    /// when there is none.
    ///
    /// - Parameters:
    ///   - firstKey: a page's first key (which may read the page). Keys come from checked
    ///     pages: 1 through 2^62 (§5), so differences between them cannot overflow.
    ///   - holds: asked of a page whose first key is at or before the target, whether its last
    ///     key is at or after the target, when that is known without another read: the page is
    ///     then the answer at once (the next page's first key is above its last).
    static func lastPage(
        count: Int, containing target: IndexKey,
        firstKey: (Int) throws(StoreError) -> IndexKey,
        holds: (Int) throws(StoreError) -> Bool = { _ in false }
    ) throws(StoreError) -> Int {
        guard count > 1 else { return 0 }
        var low = 0
        var lowKey = try firstKey(0)
        // The target may be any key a caller names (below every page, or above): these exits
        // also keep the differences below between two checked keys.
        guard lowKey <= target else { return 0 }
        if try holds(0) { return 0 }
        var upper = (position: count - 1, key: try firstKey(count - 1))
        guard target < upper.key else { return count - 1 }
        // The answer lies in low...high: first(low) <= target < first(upper.position).
        var high = upper.position - 1
        var guesses = 0
        while low < high {
            var mid = (low + high + 1) / 2
            if guesses < 2, lowKey.entityID == target.entityID, upper.key.entityID == target.entityID {
                guesses += 1
                let fraction = Double(target.primaryKey - lowKey.primaryKey) / Double(upper.key.primaryKey - lowKey.primaryKey)
                mid = min(high, max(low + 1, low + Int(fraction * Double(upper.position - low))))
            }
            let key = try firstKey(mid)
            if key <= target {
                low = mid
                lowKey = key
                if try holds(mid) { return mid }
            } else {
                high = mid - 1
                upper = (mid, key)
            }
        }
        return low
    }
}
