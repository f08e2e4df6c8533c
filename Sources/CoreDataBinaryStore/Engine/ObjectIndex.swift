/// The in-memory object-ID index (Formats/binary-store.md §7): per entity ID, primary keys in
/// increasing order beside the location of each object's current record; 16 bytes per object.
///
/// Deleting an object marks its location 0 (no record lives at offset 0) instead of shifting the
/// arrays, so deleting 10% of a million objects stays linear; ``compact()`` drops the marks.
package struct ObjectIndex: Sendable {
    struct Table: Sendable {
        var keys: [Int64] = []
        var locations: [UInt64] = []
        var liveCount = 0
        var deadCount = 0

        func position(of key: Int64) -> Int? {
            keys.withUnsafeBufferPointer { keys in
                var low = 0
                var high = keys.count
                // Keys are distinct, increasing and mostly dense (handed out one after another),
                // so a guess from the key's place between the ends lands on it or next to it:
                // one or two cache misses where a binary search over a million keys takes twenty.
                // A few guesses at most, then the binary search, so skewed keys cost no more.
                for _ in 0..<3 where low < high {
                    let first = keys[low]
                    let last = keys[high - 1]
                    guard key >= first, key <= last else { return nil }
                    // Keys are at most 2^62 (§5), so the differences cannot overflow.
                    let fraction = last == first ? 0 : Double(key - first) / Double(last - first)
                    let guess = min(high - 1, low + Int(fraction * Double(high - 1 - low)))
                    if keys[guess] == key { return guess }
                    if keys[guess] < key { low = guess + 1 } else { high = guess }
                }
                while low < high {
                    let mid = (low + high) / 2
                    if keys[mid] < key { low = mid + 1 } else { high = mid }
                }
                return low < keys.count && keys[low] == key ? low : nil
            }
        }

        func location(of key: Int64) -> UInt64? {
            guard let position = position(of: key) else { return nil }
            let location = locations[position]
            return location == 0 ? nil : location
        }

        /// Sets or adds the location of `key`. Increasing keys append in O(1).
        mutating func set(_ key: Int64, _ location: UInt64) {
            if let last = keys.last, key > last {
                keys.append(key)
                locations.append(location)
                liveCount += 1
            } else if keys.isEmpty {
                keys.append(key)
                locations.append(location)
                liveCount += 1
            } else if let position = position(of: key) {
                if locations[position] == 0 {
                    liveCount += 1
                    deadCount -= 1
                }
                locations[position] = location
            } else {
                let low = firstPosition(notBelow: key)
                keys.insert(key, at: low)
                locations.insert(location, at: low)
                liveCount += 1
            }
        }

        /// The position of the first key not below `key` (`keys.count` when there is none).
        func firstPosition(notBelow key: Int64) -> Int {
            var low = 0
            var high = keys.count
            while low < high {
                let mid = (low + high) / 2
                if keys[mid] < key { low = mid + 1 } else { high = mid }
            }
            return low
        }

        mutating func remove(_ key: Int64) {
            guard let position = position(of: key), locations[position] != 0 else { return }
            locations[position] = 0
            liveCount -= 1
            deadCount += 1
        }

        mutating func compact() {
            guard deadCount > 0 else { return }
            var newKeys: [Int64] = []
            var newLocations: [UInt64] = []
            newKeys.reserveCapacity(liveCount)
            newLocations.reserveCapacity(liveCount)
            for index in keys.indices where locations[index] != 0 {
                newKeys.append(keys[index])
                newLocations.append(locations[index])
            }
            keys = newKeys
            locations = newLocations
            deadCount = 0
        }

        /// Live (key, location) pairs in key order.
        func forEachLive(_ body: (Int64, UInt64) throws -> Void) rethrows {
            for index in keys.indices where locations[index] != 0 {
                try body(keys[index], locations[index])
            }
        }
    }

    var tables: [Table] = []

    package init() {}

    package func location(entityID: Int, key: Int64) -> UInt64? {
        guard entityID < tables.count else { return nil }
        return tables[entityID].location(of: key)
    }

    package mutating func set(entityID: Int, key: Int64, location: UInt64) {
        if entityID >= tables.count { tables.append(contentsOf: repeatElement(Table(), count: entityID + 1 - tables.count)) }
        tables[entityID].set(key, location)
    }

    package mutating func remove(entityID: Int, key: Int64) {
        guard entityID < tables.count else { return }
        tables[entityID].remove(key)
    }

    package mutating func compact() {
        for index in tables.indices { tables[index].compact() }
    }

    /// Every live entry in (entity ID, key) order: the order index pages store them in (§7).
    package func forEachLiveEntry(_ body: (_ entityID: Int, _ key: Int64, _ location: UInt64) throws -> Void) rethrows {
        for entityID in tables.indices {
            try tables[entityID].forEachLive { key, location in try body(entityID, key, location) }
        }
    }

    package var liveCount: Int { tables.reduce(0) { $0 + $1.liveCount } }

    /// Every entry, deleted marks included: as an overlay, the number of keys it records.
    package var entryCount: Int { tables.reduce(0) { $0 + $1.keys.count } }

    // MARK: As an overlay (changes over a persisted index not yet in memory)

    /// Records the latest location of `key`, 0 for "deleted" (unlike ``remove(entityID:key:)``,
    /// which can only mark a key already present). Live counts are not kept in this use.
    package mutating func record(entityID: Int, key: Int64, location: UInt64) {
        if entityID >= tables.count { tables.append(contentsOf: repeatElement(Table(), count: entityID + 1 - tables.count)) }
        if let position = tables[entityID].position(of: key) {
            tables[entityID].locations[position] = location
        } else {
            tables[entityID].set(key, location)
        }
    }

    /// Applies an overlay's changes: each recorded location set, each key recorded deleted
    /// removed.
    package mutating func apply(overlay: ObjectIndex) {
        for (entityID, table) in overlay.tables.enumerated() {
            for position in table.keys.indices {
                let location = table.locations[position]
                if location == 0 {
                    remove(entityID: entityID, key: table.keys[position])
                } else {
                    set(entityID: entityID, key: table.keys[position], location: location)
                }
            }
        }
    }

    /// The recorded location of `key`: 0 when recorded deleted, `nil` when not recorded.
    package func recorded(entityID: Int, key: Int64) -> UInt64? {
        guard entityID < tables.count, let position = tables[entityID].position(of: key) else { return nil }
        return tables[entityID].locations[position]
    }

    package func liveCount(entityID: Int) -> Int { entityID < tables.count ? tables[entityID].liveCount : 0 }
}
