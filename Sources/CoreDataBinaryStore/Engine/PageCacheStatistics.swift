/// How a binary store's page cache has served reads since the store opened: what to look at
/// before changing `BinaryStoreOptions.pageCacheBytes` (`NSBinaryStorePageCacheSizeOption`).
///
/// A miss reads the page from the file and decompresses it (a data page is up to 16 KiB
/// decoded); a hit costs a table lookup. Point lookups spread over more decoded pages than the
/// cache holds miss in proportion. `BinaryStoreStatistics.decodedDataPageBytes` is a lower bound
/// on the size that holds every data page: each entry is also charged 64 bytes, and index pages
/// and log blocks share the cache.
public struct PageCacheStatistics: Sendable, Equatable {
    /// Counters since open (they wrap rather than trap).
    public struct Counts: Sendable, Equatable {
        /// Reads answered from the cache. A cached log block found shorter than the read
        /// (cached before later saves were published) counts here, and is then read again.
        public var hits: UInt64 = 0
        /// Reads that found nothing cached and went to the file.
        public var misses: UInt64 = 0
        /// Entries dropped to make room.
        public var evictions: UInt64 = 0
    }

    public var counts: Counts
    /// Pages and log blocks held now.
    public var entries: Int
    /// The bytes they are charged (decoded payload plus a fixed overhead each).
    public var bytes: Int
    /// The bound the cache keeps to (`BinaryStoreOptions.pageCacheBytes`): an entry replaced by a
    /// larger one for the same key may pass it until the next insertion evicts.
    public var capacity: Int

    /// The share of reads answered from the cache, 0 when there were none.
    public var hitRate: Double {
        let total = counts.hits &+ counts.misses
        return total == 0 ? 0 : Double(counts.hits) / Double(total)
    }
}

extension BinaryStore {
    /// The page cache's counts since open.
    ///
    /// Threading: safe from any thread (one lock taken briefly); the counts of reads in flight
    /// may or may not be included.
    public var pageCacheStatistics: PageCacheStatistics { cache.statistics }
}
