import CoreDataModel
import CoreDataStorage
import Foundation

/// Persistent-history transactions as records of the binary store (Formats/binary-store.md §14):
/// ordinary records of a reserved entity, so the log, checkpoints, compaction, recovery and
/// other processes' tailing keep them as they keep every object. No I/O.
public enum HistoryRecordCodec {
    /// §14.1: the reserved entity's name. Xcode entity names start with a letter, so no model
    /// entity can take it.
    public static let entityName = "_NSPersistentHistoryTransaction"
    /// §14.1: the reserved entity's properties, in the order its rows lay them out.
    public static let layout = PropertyLayout(
        entityName: entityName, names: ["timestamp", "author", "contextName", "processID", "bundleID", "changes"])
    /// §14.2: the version of the change list's encoding.
    static let changesFormat: UInt64 = 1
    /// §14.2: change kinds.
    enum ChangeKind: UInt8 {
        case insert = 1, update = 2, delete = 3
    }

    /// The record row of a transaction: its number is the primary key.
    public static func row(for transaction: StoreHistoryTransaction) -> StoreRow {
        StoreRow(objectID: StoreObjectID(entityName: entityName, primaryKey: transaction.number), version: 0, layout: layout, slots: [
            .date(transaction.timestamp),
            transaction.author.map(StoreValue.string) ?? .null,
            transaction.contextName.map(StoreValue.string) ?? .null,
            .integer(Int64(transaction.processID)),
            .string(transaction.bundleID),
            .data(Data(encodeChanges(transaction.changes))),
        ])
    }

    /// The transaction a record row holds.
    ///
    /// - Parameter includesChanges: decode the change list (skipped when a query asks for
    ///   transactions only).
    /// - Throws: ``BinaryFormatError`` for a row that is not a valid transaction.
    public static func transaction(from row: StoreRow, includesChanges: Bool = true) throws(BinaryFormatError) -> StoreHistoryTransaction {
        try transaction(number: row.objectID.primaryKey, values: layout.names.map { row[$0] }, includesChanges: includesChanges)
    }

    /// The transaction `number` from its values by slot of ``layout`` (a record decoded with
    /// `RecordCodec.decodeFields` and ``slots(for:)``, no row built).
    public static func transaction(number: Int64, values: [StoreValue], includesChanges: Bool) throws(BinaryFormatError) -> StoreHistoryTransaction {
        var changes: [StoreHistoryChange] = []
        if includesChanges {
            guard case .data(let bytes) = values[safe: 5] else { throw BinaryFormatError("history transaction \(number)", "has no change list") }
            do { changes = try decodeChanges([UInt8](bytes)) } catch { throw error.within("history transaction \(number)") }
        }
        return try transaction(number: number, values: values, changes: changes)
    }

    /// The transaction `number` from its values by slot of ``layout`` (the change list's slot
    /// not read) and its changes, decoded separately (``changeListRange(in:from:to:column:)``).
    public static func transaction(number: Int64, values: [StoreValue], changes: [StoreHistoryChange]) throws(BinaryFormatError) -> StoreHistoryTransaction {
        let location = "history transaction \(number)"
        guard values.count == layout.count else { throw BinaryFormatError(location, "has \(values.count) values, not \(layout.count)") }
        guard case .date(let timestamp) = values[0] else { throw BinaryFormatError(location, "has no timestamp") }
        func text(_ slot: Int) throws(BinaryFormatError) -> String? {
            switch values[slot] {
            case .null: return nil
            case .string(let value): return value
            default: throw BinaryFormatError(location, "\(layout.names[slot]) is not a string")
            }
        }
        guard case .integer(let process) = values[3], let processID = Int32(exactly: process) else {
            throw BinaryFormatError(location, "has no process ID in 32 bits")
        }
        return StoreHistoryTransaction(
            number: number, timestamp: timestamp, author: try text(1), contextName: try text(2),
            processID: processID, bundleID: try text(4) ?? "", changes: changes)
    }

    /// Where the change list's bytes lie in the record at `bytes[start..<end]`, whose catalog
    /// column `column` holds it; `nil` when the record has no such value. Reads no value.
    ///
    /// - Throws: ``BinaryFormatError`` for a damaged record, or a change list that is not
    ///   binary data.
    public static func changeListRange(in bytes: [UInt8], from start: Int, to end: Int, column: Int) throws(BinaryFormatError) -> Range<Int>? {
        var reader = ByteReader(bytes, from: start, to: end)
        _ = try reader.uint8("record kind")
        _ = try reader.varint("entity ID")
        _ = try reader.varint("primary key")
        _ = try reader.varint("version")
        let count = try reader.count("value count", atMost: reader.remaining)
        for _ in 0..<count {
            let index = try reader.count("property index", atMost: Int(Int32.max))
            guard index == column else {
                try RecordCodec.skipValue(&reader)
                continue
            }
            let tag = try reader.uint8("value tag")
            guard tag == RecordCodec.Tag.data.rawValue else { throw BinaryFormatError("", "the change list is not binary data (tag \(tag))") }
            let length = try reader.count("change list length", atMost: reader.remaining)
            return reader.position..<(reader.position + length)
        }
        return nil
    }

    /// For each catalog property of the history entity, its slot in ``layout`` (-1 for one the
    /// layout lacks; `includesChanges: false` skips the change list).
    public static func slots(for properties: [String], includesChanges: Bool) -> [Int] {
        properties.map { name in
            guard let slot = layout.slot(of: name), includesChanges || name != "changes" else { return -1 }
            return slot
        }
    }

    /// §14.2: a change list: the names it uses once, then each change by name index.
    public static func encodeChanges(_ changes: [StoreHistoryChange]) -> [UInt8] {
        var names: [String] = []
        var indexes: [String: Int] = [:]
        func index(_ name: String) -> Int {
            if let known = indexes[name] { return known }
            indexes[name] = names.count
            names.append(name)
            return names.count - 1
        }
        var body = ByteWriter()
        body.varint(UInt64(changes.count))
        for change in changes {
            switch change.kind {
            case .insert: body.uint8(ChangeKind.insert.rawValue)
            case .update: body.uint8(ChangeKind.update.rawValue)
            case .delete: body.uint8(ChangeKind.delete.rawValue)
            }
            body.varint(UInt64(index(change.objectID.entityName)))
            body.varint(UInt64(bitPattern: change.objectID.primaryKey))
            switch change.kind {
            case .insert: break
            case .update:
                body.varint(UInt64(change.updatedProperties.count))
                for name in change.updatedProperties { body.varint(UInt64(index(name))) }
            case .delete:
                let values = change.tombstone.filter { !$0.value.isNull && !$0.value.isRelationship }.sorted { $0.key < $1.key }
                body.varint(UInt64(values.count))
                for (name, value) in values {
                    body.varint(UInt64(index(name)))
                    RecordCodec.encodeScalar(value, into: &body)
                }
            }
        }
        var writer = ByteWriter()
        writer.varint(changesFormat)
        writer.varint(UInt64(names.count))
        for name in names { writer.string(name) }
        writer.append(body.bytes)
        return writer.bytes
    }

    /// Decodes a change list; every count and index is checked against the bytes left.
    public static func decodeChanges(_ bytes: [UInt8]) throws(BinaryFormatError) -> [StoreHistoryChange] {
        try decodeChanges(bytes, in: 0..<bytes.count)
    }

    /// The change list held by `bytes[range]`, read in place.
    public static func decodeChanges(_ bytes: [UInt8], in range: Range<Int>) throws(BinaryFormatError) -> [StoreHistoryChange] {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { throw BinaryFormatError("", "the change list lies outside the record") }
        var reader = ByteReader(bytes, from: range.lowerBound, to: range.upperBound)
        let format = try reader.varint("change list format")
        guard format == changesFormat else { throw BinaryFormatError("", "unknown change list format \(format)") }
        // Each name takes at least one byte, each change at least three.
        let nameCount = try reader.count("name count", atMost: reader.remaining)
        var names: [String] = []
        names.reserveCapacity(nameCount)
        for _ in 0..<nameCount { names.append(try reader.string("name")) }
        func nameIndex(_ what: String) throws(BinaryFormatError) -> Int {
            let index = try reader.count(what, atMost: Int(Int32.max))
            guard index < names.count else { throw BinaryFormatError("", "\(what) \(index) is not among the list's \(names.count) names") }
            return index
        }
        func name(_ what: String) throws(BinaryFormatError) -> String { names[try nameIndex(what)] }
        // Entity numbers made once per name of the list, not per change (each takes a lock).
        var numbers = [EntityNumber?](repeating: nil, count: names.count)
        func entityNumber(_ what: String) throws(BinaryFormatError) -> EntityNumber {
            let index = try nameIndex(what)
            if let number = numbers[index] { return number }
            let number = EntityNumber(names[index])
            numbers[index] = number
            return number
        }
        let count = try reader.count("change count", atMost: reader.remaining / 3)
        var changes: [StoreHistoryChange] = []
        changes.reserveCapacity(count)
        for _ in 0..<count {
            let rawKind = try reader.uint8("change kind")
            guard let kind = ChangeKind(rawValue: rawKind) else { throw BinaryFormatError("", "unknown change kind \(rawKind)") }
            let entity = try entityNumber("entity name index")
            let key = try reader.varint("primary key")
            guard key >= 1, key <= UInt64(BinaryStoreLayout.largestPrimaryKey) else {
                throw BinaryFormatError("", "primary key \(key) is outside 1...2^62")
            }
            let id = StoreObjectID(entity: entity, primaryKey: Int64(key))
            switch kind {
            case .insert:
                changes.append(StoreHistoryChange(kind: .insert, objectID: id))
            case .update:
                let propertyCount = try reader.count("updated property count", atMost: reader.remaining)
                var properties: [String] = []
                properties.reserveCapacity(propertyCount)
                for _ in 0..<propertyCount { properties.append(try name("property name index")) }
                changes.append(StoreHistoryChange(kind: .update, objectID: id, updatedProperties: properties))
            case .delete:
                let valueCount = try reader.count("tombstone value count", atMost: reader.remaining / 2)
                var tombstone: [String: StoreValue] = [:]
                for _ in 0..<valueCount {
                    let property = try name("tombstone property index")
                    let value = try RecordCodec.value(&reader, catalog: Catalog())
                    guard !value.isRelationship else { throw BinaryFormatError("", "tombstone value of \(property) is a relationship") }
                    tombstone[property] = value
                }
                changes.append(StoreHistoryChange(kind: .delete, objectID: id, tombstone: tombstone))
            }
        }
        guard reader.isAtEnd else { throw BinaryFormatError("", "\(reader.remaining) bytes follow the change list") }
        return changes
    }
}

extension StoreValue {
    /// Whether the value is a relationship's (a tombstone keeps attributes only).
    fileprivate var isRelationship: Bool {
        switch self {
        case .reference, .references: return true
        default: return false
        }
    }
}

extension Array {
    /// The element at `index`, `nil` outside the array.
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
