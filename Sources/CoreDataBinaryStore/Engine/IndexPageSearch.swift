import CoreDataStorage

/// Finds the index page a key falls in from the pages' first keys (Formats/binary-store.md §7):
/// the last page whose first key is at or before the key.
///
/// Keys are handed out one after another, so an entity's keys are mostly dense and pages hold
/// about as many entries each: the key's place between two pages' first keys guesses its page.
/// A bisection over a million objects' 245 pages read 8 of them (64 KiB each, decoded) for the
/// first lookup after open; the guess reads the first, the last and the one it names. Two
/// guesses at most, then the bisection, so skewed keys (gaps, a run far above the rest, another
/// entity's pages) cost no more than it; the answer is the same either way.
enum IndexPageSearch {
    /// The position of the last of `count` pages whose first key is at or before `target`; 0
    /// when there is none.
    ///
    /// - Parameters:
    ///   - firstKey: a page's first key (which may read the page).
    ///   - holds: asked after `firstKey` of a page at or before the target, whether that page's
    ///     last key is at or after the target, when that is known without another read: the
    ///     page is then the answer at once (the next page's first key is above its last).
    static func lastPage(
        count: Int, containing target: IndexKey,
        firstKey: (Int) throws(StoreError) -> IndexKey,
        holds: (Int) throws(StoreError) -> Bool = { _ in false }
    ) throws(StoreError) -> Int {
        var low = 0
        var high = count - 1
        var guesses = 0
        while low < high {
            var mid = (low + high + 1) / 2
            if guesses < 2 {
                guesses += 1
                let lowKey = try firstKey(low)
                let highKey = try firstKey(high)
                if lowKey.entityID == target.entityID, highKey.entityID == target.entityID, highKey.primaryKey > lowKey.primaryKey {
                    // Keys are at most 2^62 (§5), so the differences cannot overflow.
                    let fraction = Double(target.primaryKey - lowKey.primaryKey) / Double(highKey.primaryKey - lowKey.primaryKey)
                    let place = max(0, min(fraction, 1)) * Double(high - low)
                    mid = min(high, max(low + 1, low + Int(place)))
                }
            }
            if try firstKey(mid) <= target {
                low = mid
                if try holds(mid) { return mid }
            } else {
                high = mid - 1
            }
        }
        return low
    }
}
