/// The page bounds of one data page, computed from its records (Formats/binary-store.md §7.3):
/// what a writer persists for the page and what `verify` compares the persisted entries with.
///
/// Every record is walked once where it lies; nothing is allocated per record. A record that
/// does not read as a row (damage) counts as a row of its entity, when that much of it reads,
/// holding no string, so the entity's properties in the page are unbounded. A page whose rows
/// span more than ``PageBoundsLayout/mostEntitiesPerPage`` entities, or an entity more than
/// ``PageBoundsLayout/mostStringPropertiesPerEntity`` string properties, gets no entry: entities
/// and properties are looked up one by one, which a hostile page must not make quadratic.
///
/// Threading: a value; a page writer computes one per page on any thread.
public enum PageBoundsSummary {
    /// A string property of one entity being accumulated.
    private struct Column {
        var propertyIndex: Int
        var strings = 0
        var bounds = PageSortBounds.empty
    }

    private struct Entity {
        var entityID: Int
        var rows = 0
        var columns: [Column] = []

        /// The position of `propertyIndex`'s column, added if new; nil past the limit.
        mutating func column(_ propertyIndex: Int) -> Int? {
            for index in columns.indices where columns[index].propertyIndex == propertyIndex { return index }
            guard columns.count < PageBoundsLayout.mostStringPropertiesPerEntity else { return nil }
            columns.append(Column(propertyIndex: propertyIndex))
            return columns.count - 1
        }
    }

    /// The entries of the data page with `payload` (decoded) at `pageOffset`, in stored order;
    /// empty when the payload is not a data page's.
    public static func entries(ofDataPage payload: [UInt8], at pageOffset: UInt64) -> [PageBoundsEntry] {
        // Every checkpoint and compaction runs this over each record it writes: the walk is a
        // function of its own over the bytes, so that its state lives in registers, not in the
        // boxes a closure's captured variables would be.
        guard let page = try? DataPage(payload: payload, pageOffset: pageOffset),
              let entities = payload.withUnsafeBufferPointer({ accumulate(page, $0) }) else { return [] }
        var entries: [PageBoundsEntry] = []
        for entity in entities.sorted(by: { $0.entityID < $1.entityID }) {
            for column in entity.columns.sorted(by: { $0.propertyIndex < $1.propertyIndex }) {
                // A row without a string in the property (null, another tag, unreadable) leaves
                // nothing to bound it by.
                let bounds = column.strings == entity.rows ? column.bounds : .unbounded
                entries.append(PageBoundsEntry(pageOffset: pageOffset, entityID: UInt32(entity.entityID), propertyIndex: UInt32(column.propertyIndex), bounds: bounds))
            }
        }
        return entries
    }

    /// The entities of `page`, whose payload `buffer` holds, with their rows and string columns;
    /// nil past the limits.
    private static func accumulate(_ page: DataPage, _ buffer: UnsafeBufferPointer<UInt8>) -> [Entity]? {
        guard let base = buffer.baseAddress else { return nil }
        var entities: [Entity] = []
        // The entity of the last row, out of `entities` while it is accumulated.
        var current = Entity(entityID: -1)
        var currentIndex = -1
        // One record's strings, kept until the whole record has read.
        var found: [(propertyIndex: Int, prefix: UInt64?)] = []
        for slot in 0..<page.count {
            // The slot table was checked when the page was made.
            guard let range = page.range(of: slot), range.upperBound <= buffer.count else { return nil }
            var cursor = RawCursor(base: base, position: range.lowerBound, end: range.upperBound)
            guard cursor.byte() == RecordHeader.Kind.row.rawValue, let rawEntity = cursor.varint(), rawEntity <= UInt64(UInt32.max) else { continue }
            let entityID = Int(rawEntity)
            if entityID != current.entityID {
                if currentIndex >= 0 { entities[currentIndex] = current }
                if let known = entities.firstIndex(where: { $0.entityID == entityID }) {
                    currentIndex = known
                } else {
                    guard entities.count < PageBoundsLayout.mostEntitiesPerPage else { return nil }
                    entities.append(Entity(entityID: entityID))
                    currentIndex = entities.count - 1
                }
                current = entities[currentIndex]
                // One owner of the columns, so that adding to them copies nothing.
                entities[currentIndex].columns = []
            }
            current.rows += 1
            found.removeAll(keepingCapacity: true)
            guard readStrings(&cursor, into: &found) else { continue }
            for (propertyIndex, prefix) in found {
                guard let column = current.column(propertyIndex) else { return nil }
                current.columns[column].strings += 1
                current.columns[column].bounds.include(prefix)
            }
        }
        if currentIndex >= 0 { entities[currentIndex] = current }
        return entities
    }

    /// Reads a row's key, version and values after its entity ID, collecting the prefix of each
    /// string (nil: not ASCII); `false` when the record does not read.
    private static func readStrings(_ cursor: inout RawCursor, into found: inout [(propertyIndex: Int, prefix: UInt64?)]) -> Bool {
        guard let key = cursor.varint(), key >= 1, key <= UInt64(BinaryStoreLayout.largestPrimaryKey),
              let version = cursor.varint(), version <= BinaryStoreLayout.largestCounter,
              let count = cursor.varint(), count <= UInt64(cursor.remaining / 2)
        else { return false }
        var previous = -1
        for _ in 0..<Int(count) {
            guard let rawIndex = cursor.varint(), rawIndex <= UInt64(UInt32.max), Int(rawIndex) > previous,
                  let rawTag = cursor.byte(), let tag = RecordCodec.Tag(rawValue: rawTag)
            else { return false }
            previous = Int(rawIndex)
            if tag == .string {
                guard let length = cursor.varint(), length <= UInt64(cursor.remaining) else { return false }
                let bytes = UnsafeBufferPointer(start: cursor.base + cursor.position, count: Int(length))
                found.append((previous, PageSortBounds.prefix(bytes)))
                cursor.position += Int(length)
            } else if !RecordCodec.skipRaw(tag, &cursor) {
                return false
            }
        }
        return true
    }
}
