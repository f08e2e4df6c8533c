/// A few columns of a record read where they lie (Formats/binary-store.md §5), for a scan that
/// decides from them whether the record is worth decoding: integers a filter tests and the
/// bytes of a string a sort orders by. Nothing is allocated per record.
///
/// A probe answers only for a row of the expected entity with a well-formed header whose wanted
/// columns are all present with the expected tags; for anything else (a tombstone, a missing or
/// null value, another kind of value, damage it meets) it answers `false` and the caller decodes
/// the record, which also words any error. It stops after the last wanted column, so damage
/// past it goes unseen in a record it answers for (pages and log frames are checksummed as a
/// whole, §4 and wal.md, so such damage is a bug, not a torn write).
public struct RecordProbe {
    /// The catalog columns (property indexes, §6) of the wanted integers, in increasing order.
    public let integerColumns: [Int]
    /// The catalog column of the wanted string, or -1 for none.
    public let stringColumn: Int
    /// After a successful ``probe(_:from:to:entityID:)``: the integers, by position in
    /// ``integerColumns``.
    public private(set) var integers: [Int64]
    /// After a successful probe: where the string's UTF-8 bytes lie in the probed buffer.
    public private(set) var string: Range<Int> = 0..<0

    /// The catalog's number of properties of the probed entity: a record with more values is damage.
    public let propertyCount: Int

    /// A probe of the columns `integerColumns` (increasing) and `stringColumn` (-1 for none) of
    /// records of an entity with `propertyCount` catalog properties.
    public init(integerColumns: [Int], stringColumn: Int, propertyCount: Int) {
        self.propertyCount = propertyCount
        precondition(zip(integerColumns, integerColumns.dropFirst()).allSatisfy { $0 < $1 }, "CoreData: a record probe's integer columns must increase")
        self.integerColumns = integerColumns
        self.stringColumn = stringColumn
        self.integers = Array(repeating: 0, count: integerColumns.count)
    }

    /// Reads the wanted columns of the record in `bytes[start..<end]`; `true` when it is a row
    /// of `entityID` holding every wanted column with the expected kind of value.
    public mutating func probe(_ bytes: [UInt8], from start: Int, to end: Int, entityID: Int) -> Bool {
        let limit = min(end, bytes.count)
        guard start >= 0, start < limit else { return false }
        return bytes.withUnsafeBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            var cursor = RawCursor(base: base, position: start, end: limit)
            guard cursor.byte() == RecordHeader.Kind.row.rawValue, cursor.varint() == UInt64(entityID),
                  let key = cursor.varint(), key >= 1, key <= UInt64(BinaryStoreLayout.largestPrimaryKey),
                  let version = cursor.varint(), version <= BinaryStoreLayout.largestCounter,
                  let count = cursor.varint(), count <= UInt64(propertyCount)
            else { return false }
            var nextInteger = 0
            var wantsString = stringColumn >= 0
            var previous = -1
            for _ in 0..<count {
                guard nextInteger < integerColumns.count || wantsString else { return true }
                guard let rawIndex = cursor.varint(), rawIndex < UInt64(propertyCount), Int(rawIndex) > previous,
                      let rawTag = cursor.byte(), let tag = RecordCodec.Tag(rawValue: rawTag)
                else { return false }
                let column = Int(rawIndex)
                previous = column
                // Columns increase, so a wanted column passed over is absent (null).
                if nextInteger < integerColumns.count, integerColumns[nextInteger] < column { return false }
                if wantsString, stringColumn < column { return false }
                if nextInteger < integerColumns.count, integerColumns[nextInteger] == column {
                    guard tag == .integer, let raw = cursor.varint() else { return false }
                    integers[nextInteger] = ZigZag.decode(raw)
                    nextInteger += 1
                } else if wantsString, stringColumn == column {
                    guard tag == .string, let length = cursor.varint(), length <= UInt64(cursor.remaining) else { return false }
                    string = cursor.position..<(cursor.position + Int(length))
                    cursor.position += Int(length)
                    wantsString = false
                } else {
                    guard RecordCodec.skipRaw(tag, &cursor) else { return false }
                }
            }
            return nextInteger == integerColumns.count && !wantsString
        }
    }
}
