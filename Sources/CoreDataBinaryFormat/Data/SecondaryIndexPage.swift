import CoreDataStorage
import Foundation

/// The constants of persisted secondary indexes (Formats/binary-store.md §7.2).
public enum SecondaryIndexLayout {
    /// §2, §7.2: the first format version whose root slot may name a secondary-index directory.
    public static let firstFormatVersion: UInt32 = 3
    /// §7.2: a writer fills a secondary-index page up to this many decoded bytes of entries: a
    /// data page's size, so a checkpoint rewrites little around each change.
    public static let pageBytes = 16_384
    /// §7.2: the fixed part of a page: entity ID, property index, kind and entry count.
    static let pageHeaderBytes = 13
    /// §7.2: the fixed part of one index in the directory, before its page offsets.
    static let directoryEntryBytes = 21
    /// §7.2: the smallest entry (an empty string and its key).
    static let smallestEntryBytes = 9
}

/// What a secondary index orders (Formats/binary-store.md §7.1, §7.2); the raw value is the
/// kind byte of the directory and pages.
public enum SecondaryIndexKind: UInt8, Sendable, CaseIterable {
    case integer = 1, double = 2, date = 3, string = 4
}

/// One secondary index of a directory page (Formats/binary-store.md §7.2).
public struct SecondaryIndexListing: Sendable, Equatable {
    public var entityID: UInt32
    public var propertyIndex: UInt32
    public var kind: SecondaryIndexKind
    public var entryCount: UInt64
    /// In entry order; empty for an index with no entry.
    public var pageOffsets: [UInt64]

    public init(entityID: UInt32, propertyIndex: UInt32, kind: SecondaryIndexKind, entryCount: UInt64, pageOffsets: [UInt64]) {
        self.entityID = entityID
        self.propertyIndex = propertyIndex
        self.kind = kind
        self.entryCount = entryCount
        self.pageOffsets = pageOffsets
    }
}

/// The order a secondary index keeps (Formats/binary-store.md §7.1) and which values it holds.
public enum SecondaryIndexOrder {
    /// Whether `value` belongs in an index of `kind`: of that kind and not NaN.
    @inlinable
    public static func holds(_ value: StoreValue, _ kind: SecondaryIndexKind) -> Bool {
        switch (value, kind) {
        case (.integer, .integer), (.string, .string): return true
        case (.double(let v), .double): return !v.isNaN
        case (.date(let v), .date): return !v.timeIntervalSinceReferenceDate.isNaN
        default: return false
        }
    }

    /// Numbers by value, dates by time, strings by UTF-8 bytes (the Unicode scalar order that
    /// predicates compare strings in). Values of different kinds are unordered.
    @inlinable
    public static func less(_ a: StoreValue, _ b: StoreValue) -> Bool {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y
        case (.double(let x), .double(let y)): return x < y
        case (.date(let x), .date(let y)): return x.timeIntervalSinceReferenceDate < y.timeIntervalSinceReferenceDate
        case (.string(let x), .string(let y)): return x.utf8.lexicographicallyPrecedes(y.utf8)
        default: return false
        }
    }

    /// Index order: by value, then by key.
    @inlinable
    public static func entryLess(_ a: (value: StoreValue, key: Int64), _ b: (value: StoreValue, key: Int64)) -> Bool {
        less(a.value, b.value) || (!less(b.value, a.value) && a.key < b.key)
    }
}

/// Secondary-index pages and their directory (Formats/binary-store.md §7.2). Decoding does no
/// I/O and checks every count against the bytes that hold it.
public enum SecondaryIndexCodec {
    public typealias Entry = (value: StoreValue, key: Int64)

    /// The encoded bytes of one entry, which a writer adds up to fill a page.
    public static func entryBytes(_ value: StoreValue) -> Int {
        guard case .string(let text) = value else { return 16 }
        let length = text.utf8.count
        var varint = 1
        var rest = length >> 7
        while rest > 0 { varint += 1; rest >>= 7 }
        return varint + length + 8
    }

    /// One page of `entries`, which must be of `kind` and in index order.
    public static func encodePage(entityID: UInt32, propertyIndex: UInt32, kind: SecondaryIndexKind, entries: ArraySlice<Entry>) -> [UInt8] {
        var writer = ByteWriter(capacity: SecondaryIndexLayout.pageHeaderBytes + entries.reduce(0) { $0 + entryBytes($1.value) })
        writer.uint32(entityID)
        writer.uint32(propertyIndex)
        writer.uint8(kind.rawValue)
        writer.uint32(UInt32(entries.count))
        for entry in entries {
            switch entry.value {
            case .integer(let v): writer.uint64(UInt64(bitPattern: v))
            case .double(let v): writer.uint64(v.bitPattern)
            case .date(let v): writer.uint64(v.timeIntervalSinceReferenceDate.bitPattern)
            case .string(let v): writer.string(v)
            default: preconditionFailure("a secondary index holds only integers, doubles, dates and strings")
            }
            writer.uint64(UInt64(bitPattern: entry.key))
        }
        return writer.bytes
    }

    /// The entries of one page, checked against what the directory says it holds.
    ///
    /// - Throws: when the page names another index, its count does not match its bytes, a key
    ///   is outside 1...2^62, a value is NaN, or the entries are out of index order.
    public static func decodePage(
        _ payload: [UInt8], pageOffset: UInt64, entityID: UInt32, propertyIndex: UInt32, kind: SecondaryIndexKind
    ) throws(BinaryFormatError) -> [Entry] {
        let location = "data file offset \(pageOffset) (secondary-index page)"
        var reader = ByteReader(payload)
        do throws(BinaryFormatError) {
            let pageEntity = try reader.uint32("entity ID")
            let pageProperty = try reader.uint32("property index")
            let pageKind = try reader.uint8("kind")
            guard pageEntity == entityID, pageProperty == propertyIndex, pageKind == kind.rawValue else {
                throw BinaryFormatError(location, "the page holds entity \(pageEntity), property \(pageProperty), kind \(pageKind); the directory says entity \(entityID), property \(propertyIndex), kind \(kind.rawValue)")
            }
            let count = Int(try reader.uint32("entry count"))
            guard count >= 1, count <= reader.remaining / SecondaryIndexLayout.smallestEntryBytes else {
                throw BinaryFormatError(location, "entry count \(count) does not fit the page's \(payload.count) bytes")
            }
            var entries: [Entry] = []
            entries.reserveCapacity(count)
            for number in 0..<count {
                let value: StoreValue
                switch kind {
                case .integer: value = .integer(Int64(bitPattern: try reader.uint64("value")))
                case .double: value = .double(Double(bitPattern: try reader.uint64("value")))
                case .date: value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.uint64("value"))))
                case .string: value = .string(try reader.string("value"))
                }
                let key = Int64(bitPattern: try reader.uint64("primary key"))
                guard key >= 1, key <= BinaryStoreLayout.largestPrimaryKey else {
                    throw BinaryFormatError(location, "entry \(number) has primary key \(key), outside 1...2^62")
                }
                guard SecondaryIndexOrder.holds(value, kind) else { throw BinaryFormatError(location, "entry \(number) holds NaN") }
                let entry = (value: value, key: key)
                if let last = entries.last, !SecondaryIndexOrder.entryLess(last, entry) {
                    throw BinaryFormatError(location, "entry \(number) is out of order")
                }
                entries.append(entry)
            }
            guard reader.isAtEnd else { throw BinaryFormatError(location, "\(reader.remaining) bytes follow the last entry") }
            return entries
        } catch {
            // A reader's error names only the byte: the page it is in goes first.
            throw error.location.hasPrefix("byte ") ? error.within(location) : error
        }
    }

    /// The directory page's payload; `listings` must be ordered by entity ID, then property index.
    public static func encodeDirectory(_ listings: [SecondaryIndexListing]) -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + listings.reduce(0) { $0 + SecondaryIndexLayout.directoryEntryBytes + 8 * $1.pageOffsets.count })
        writer.uint32(UInt32(listings.count))
        for listing in listings {
            writer.uint32(listing.entityID)
            writer.uint32(listing.propertyIndex)
            writer.uint8(listing.kind.rawValue)
            writer.uint64(listing.entryCount)
            writer.uint32(UInt32(listing.pageOffsets.count))
            for offset in listing.pageOffsets { writer.uint64(offset) }
        }
        return writer.bytes
    }

    /// The indexes a directory page lists.
    ///
    /// - Throws: when a count does not fit the bytes, a kind is unknown, the indexes are out of
    ///   order or listed twice, or an index has pages but no entry (or entries but no page, or
    ///   fewer entries than pages).
    public static func decodeDirectory(_ payload: [UInt8], pageOffset: UInt64) throws(BinaryFormatError) -> [SecondaryIndexListing] {
        let location = "data file offset \(pageOffset) (secondary-index directory page)"
        var reader = ByteReader(payload)
        do throws(BinaryFormatError) {
            let count = Int(try reader.uint32("index count"))
            guard count <= reader.remaining / SecondaryIndexLayout.directoryEntryBytes else {
                throw BinaryFormatError(location, "index count \(count) does not fit the page's \(payload.count) bytes")
            }
            var listings: [SecondaryIndexListing] = []
            listings.reserveCapacity(count)
            for number in 0..<count {
                let entityID = try reader.uint32("entity ID")
                let propertyIndex = try reader.uint32("property index")
                let rawKind = try reader.uint8("kind")
                guard let kind = SecondaryIndexKind(rawValue: rawKind) else {
                    throw BinaryFormatError(location, "index \(number) has unknown kind \(rawKind)")
                }
                let entries = try reader.uint64("entry count")
                let pages = Int(try reader.uint32("page count"))
                guard pages <= reader.remaining / 8 else {
                    throw BinaryFormatError(location, "index \(number) lists \(pages) pages in \(reader.remaining) bytes")
                }
                guard (pages == 0) == (entries == 0), UInt64(pages) <= entries else {
                    throw BinaryFormatError(location, "index \(number) lists \(pages) pages for \(entries) entries")
                }
                if let last = listings.last, (last.entityID, last.propertyIndex) >= (entityID, propertyIndex) {
                    throw BinaryFormatError(location, "index \(number) is out of order or listed twice")
                }
                var offsets: [UInt64] = []
                offsets.reserveCapacity(pages)
                for _ in 0..<pages { offsets.append(try reader.uint64("page offset")) }
                listings.append(SecondaryIndexListing(entityID: entityID, propertyIndex: propertyIndex, kind: kind, entryCount: entries, pageOffsets: offsets))
            }
            guard reader.isAtEnd else { throw BinaryFormatError(location, "\(reader.remaining) bytes follow the last index") }
            return listings
        } catch {
            // A reader's error names only the byte: the page it is in goes first.
            throw error.location.hasPrefix("byte ") ? error.within(location) : error
        }
    }
}
