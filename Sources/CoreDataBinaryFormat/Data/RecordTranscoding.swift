import Foundation
import CoreDataStorage

/// How the records of one catalog become records of another: the record-level rewrite a schema
/// migration does when its mapping only renames, adds or removes properties and entities, widens
/// numbers and fills values (Formats/migration.md §5). Values are copied as their bytes; only
/// references are re-encoded (their entity IDs change with the catalog). No I/O.
///
/// Threading: immutable once built; safe from any thread.
public struct RecordTranscoding: Sendable {
    /// What becomes of the records of one source entity.
    public struct Entity: Sendable {
        /// The destination catalog's ID of the entity the records become.
        public var destinationEntityID: Int
        /// Per source column: the destination column its value moves to, or -1 to drop it.
        public var columns: [Int]
        /// Values for destination columns a record leaves empty (an added attribute's default,
        /// a constant, the default of an attribute that became mandatory): the column and the
        /// value's encoded bytes (tag and payload, §5).
        public var fills: [(column: Int, value: [UInt8])]
        /// Destination columns that must hold a value after the rewrite, with their names for
        /// the error (mandatory attributes and to-one relationships).
        public var mandatory: [(column: Int, name: String)]

        public init(destinationEntityID: Int, columns: [Int], fills: [(column: Int, value: [UInt8])] = [], mandatory: [(column: Int, name: String)] = []) {
            self.destinationEntityID = destinationEntityID
            self.columns = columns
            self.fills = fills.sorted { $0.column < $1.column }
            self.mandatory = mandatory
        }
    }

    /// A record that lacks a value its destination entity requires.
    public struct MissingValue: Error, Sendable, CustomStringConvertible {
        /// The source record's entity and key.
        public var sourceEntity: String
        public var primaryKey: Int64
        /// The destination entity and the property without a value.
        public var destinationEntity: String
        public var property: String
        public var description: String {
            "\(destinationEntity).\(property) is mandatory, and the object \(sourceEntity) \(primaryKey) has no value for it"
        }
    }

    /// The catalog the records are written against.
    public let destination: Catalog
    /// By source catalog entity ID; `nil` for an entity whose records are not migrated.
    public let entities: [Entity?]
    /// By source catalog entity ID: the destination entity ID references to its objects take,
    /// -1 where its objects are not migrated (references to them are dropped).
    public let referenceTargets: [Int]

    public init(destination: Catalog, entities: [Entity?], referenceTargets: [Int]) {
        self.destination = destination
        self.entities = entities
        self.referenceTargets = referenceTargets
    }

}

extension RecordCodec {
    /// The tag and payload of an attribute value (§5), for ``RecordTranscoding/Entity/fills``;
    /// `nil` for null and references.
    public static func encodedValue(_ value: StoreValue) -> [UInt8]? {
        switch value {
        case .null, .reference, .references: return nil
        default:
            var writer = ByteWriter()
            encodeScalar(value, into: &writer)
            return writer.bytes
        }
    }

    /// The checked rewrite: slower, but it words every error. The transcoder's raw pass hands
    /// it what it does not accept at once.
    static func transcodeChecked(
        _ bytes: [UInt8], from start: Int, to end: Int, source: Catalog, by plan: RecordTranscoding,
        isLive: (_ entityID: Int, _ key: Int64) -> Bool, into writer: inout ByteWriter
    ) throws -> (entityID: Int, key: Int64)? {
        var reader = ByteReader(bytes, from: start, to: end)
        let head = try header(&reader, catalog: source)
        guard head.kind == .row, head.entityID < plan.entities.count, let entity = plan.entities[head.entityID] else { return nil }
        let sourceEntity = source.entities[head.entityID]
        let count = try reader.count("value count", atMost: sourceEntity.properties.count)
        var fields: [(column: Int, value: ArraySlice<UInt8>)] = []
        fields.reserveCapacity(count + entity.fills.count)
        var rewritten: [[UInt8]] = []
        var previous = -1
        for _ in 0..<count {
            let index = try reader.count("property index", atMost: Int(Int32.max))
            guard index < sourceEntity.properties.count, index > previous else {
                throw BinaryFormatError("", "property index \(index) is out of order or not in \(sourceEntity.name)'s \(sourceEntity.properties.count) properties")
            }
            previous = index
            let valueStart = reader.position
            let rawTag = try reader.uint8("value tag")
            guard let tag = Tag(rawValue: rawTag) else { throw BinaryFormatError("", "unknown value tag \(rawTag)") }
            let column = index < entity.columns.count ? entity.columns[index] : -1
            switch tag {
            case .reference, .references:
                let targets = try references(tag, &reader, source: source)
                guard column >= 0 else { continue }
                // As the row path: a target that is not migrated, or not a live object (a
                // reference a No Action delete left behind), is dropped.
                let kept = targets.compactMap { target -> (Int, UInt64)? in
                    guard target.entityID < plan.referenceTargets.count, plan.referenceTargets[target.entityID] >= 0,
                          isLive(target.entityID, Int64(target.key))
                    else { return nil }
                    return (plan.referenceTargets[target.entityID], target.key)
                }
                if tag == .reference && kept.isEmpty { continue }
                var value = ByteWriter()
                value.uint8(rawTag)
                if tag == .references { value.varint(UInt64(kept.count)) }
                for (entityID, key) in kept {
                    value.varint(UInt64(entityID))
                    value.varint(key)
                }
                rewritten.append(value.bytes)
                fields.append((column, rewritten[rewritten.count - 1][...]))
            default:
                // Decoded as a fetch would decode it, so that damage is reported, not copied.
                var value = ByteReader(bytes, from: valueStart, to: end)
                // An external value's file stays where it is: only the reference is copied.
                _ = try RecordCodec.value(&value, catalog: source, external: { _ throws(BinaryFormatError) in Data() })
                try skipValue(tag, &reader)
                if column >= 0 { fields.append((column, bytes[valueStart..<reader.position])) }
            }
        }
        guard reader.isAtEnd else { throw BinaryFormatError("", "\(reader.remaining) bytes follow the record's last value") }
        let copied = fields.count
        for fill in entity.fills where !fields[0..<copied].contains(where: { $0.column == fill.column }) {
            fields.append((fill.column, fill.value[...]))
        }
        // Columns usually keep their order (a rename or an added property keeps or appends them).
        if !fields.isEmpty, !zip(fields, fields.dropFirst()).allSatisfy({ $0.column < $1.column }) { fields.sort { $0.column < $1.column } }
        for (column, name) in entity.mandatory where !fields.contains(where: { $0.column == column }) {
            throw RecordTranscoding.MissingValue(
                sourceEntity: sourceEntity.name, primaryKey: head.primaryKey,
                destinationEntity: plan.destination.entities[entity.destinationEntityID].name, property: name)
        }
        writer.uint8(RecordHeader.Kind.row.rawValue)
        writer.varint(UInt64(entity.destinationEntityID))
        writer.varint(UInt64(head.primaryKey))
        writer.varint(UInt64(head.version))
        writer.varint(UInt64(fields.count))
        for field in fields {
            writer.varint(UInt64(field.column))
            writer.append(field.value)
        }
        return (entity.destinationEntityID, head.primaryKey)
    }

    /// The (entity ID, key) pairs of a reference value whose tag was read.
    static func references(_ tag: Tag, _ reader: inout ByteReader, source: Catalog) throws(BinaryFormatError) -> [(entityID: Int, key: UInt64)] {
        let count = tag == .reference ? 1 : try reader.count("to-many count", atMost: reader.remaining / 2)
        var targets: [(entityID: Int, key: UInt64)] = []
        targets.reserveCapacity(count)
        for _ in 0..<count {
            let entityID = try reader.count("destination entity ID", atMost: Int(Int32.max))
            guard entityID < source.entities.count else { throw BinaryFormatError("", "destination entity ID \(entityID) is not in the catalog") }
            let key = try reader.varint("destination primary key")
            guard key >= 1, key <= UInt64(BinaryStoreLayout.largestPrimaryKey) else {
                throw BinaryFormatError("", "destination primary key \(key) is outside 1...2^62")
            }
            targets.append((entityID, key))
        }
        return targets
    }

    /// Skips the payload of a value whose tag was read, checking it as the decoder would.
    static func skipValue(_ tag: Tag, _ reader: inout ByteReader) throws(BinaryFormatError) {
        switch tag {
        case .false, .true: return
        case .integer: _ = try reader.signedVarint()
        case .double, .date: _ = try reader.uint64("8-byte value")
        case .decimal, .string, .uri: _ = try reader.string()
        case .data:
            let length = try reader.count("data length", atMost: reader.remaining)
            _ = try reader.bytes(length, "data")
        case .uuid: _ = try reader.bytes(16, "UUID")
        case .externalData: _ = try ExternalDataReference.decode(&reader)
        case .reference, .references: preconditionFailure("references are rewritten, not skipped")
        }
    }
}

/// Rewrites records by a ``RecordTranscoding`` one after another, reusing its buffers: the hot
/// loop of a migration's record rewrite. Well-formed records are rewritten in one pass over their
/// bytes in place; anything else goes through the checked path, which words the error.
///
/// Threading: one transcoder per thread.
public struct RecordTranscoder {
    public let plan: RecordTranscoding
    public let source: Catalog
    /// Per value of the record being rewritten: its destination column and where its bytes are:
    /// in the record (`from` ≥ 0), in ``scratch`` (`from` = -1), or a fill (`from` = -2 - index).
    private var fields: [(column: Int, from: Int, start: Int, end: Int)] = []
    /// Rewritten references.
    private var scratch: [UInt8] = []

    public init(plan: RecordTranscoding, source: Catalog) {
        self.plan = plan
        self.source = source
    }

    /// Rewrites the row record in `bytes[start..<end]` (written against ``source``) by ``plan``
    /// into `writer`; returns the destination entity ID and the key, or `nil` (nothing written)
    /// for a record whose entity is not migrated or a tombstone.
    ///
    /// - Throws: ``BinaryFormatError`` for a damaged record (as `RecordCodec.decode` words it);
    ///   ``RecordTranscoding/MissingValue`` for a record that leaves a mandatory destination
    ///   property empty.
    /// Complexity: O(record bytes + destination columns filled).
    /// - Parameter isLive: whether the source object a reference names (source entity ID, key)
    ///   exists: references to others are dropped.
    public mutating func transcode(
        _ bytes: [UInt8], from start: Int, to end: Int, isLive: (_ entityID: Int, _ key: Int64) -> Bool, into writer: inout ByteWriter
    ) throws -> (entityID: Int, key: Int64)? {
        let mark = writer.bytes.count
        switch raw(bytes, from: start, to: end, isLive: isLive, into: &writer) {
        case .written(let entityID, let key): return (entityID, key)
        case .skipped: return nil
        case .declined:
            writer.bytes.removeSubrange(mark...)
            return try RecordCodec.transcodeChecked(bytes, from: start, to: end, source: source, by: plan, isLive: isLive, into: &writer)
        }
    }

    private enum Outcome {
        case written(Int, Int64)
        case skipped
        /// Damage, a missing mandatory value, or anything the raw pass leaves to the checked one.
        case declined
    }

    private mutating func raw(_ bytes: [UInt8], from start: Int, to end: Int, isLive: (Int, Int64) -> Bool, into writer: inout ByteWriter) -> Outcome {
        let limit = min(end, bytes.count)
        guard start >= 0, start < limit else { return .declined }
        fields.removeAll(keepingCapacity: true)
        scratch.removeAll(keepingCapacity: true)
        return bytes.withUnsafeBufferPointer { buffer -> Outcome in
            guard let base = buffer.baseAddress else { return .declined }
            var cursor = RawCursor(base: base, position: start, end: limit)
            guard let kindByte = cursor.byte(), let kind = RecordHeader.Kind(rawValue: kindByte),
                  let entityID = cursor.varint(), entityID < UInt64(source.entities.count),
                  let key = cursor.varint(), key >= 1, key <= UInt64(BinaryStoreLayout.largestPrimaryKey),
                  let version = cursor.varint(), version <= BinaryStoreLayout.largestCounter,
                  let count = cursor.varint()
            else { return .declined }
            guard kind == .row else { return .skipped }
            guard Int(entityID) < plan.entities.count, let entity = plan.entities[Int(entityID)] else { return .skipped }
            let propertyCount = source.entities[Int(entityID)].properties.count
            guard count <= UInt64(propertyCount) else { return .declined }
            var previous = -1
            for _ in 0..<Int(count) {
                guard let rawIndex = cursor.varint(), rawIndex < UInt64(propertyCount), Int(rawIndex) > previous else { return .declined }
                previous = Int(rawIndex)
                let valueStart = cursor.position
                guard let rawTag = cursor.byte(), let tag = RecordCodec.Tag(rawValue: rawTag) else { return .declined }
                let column = previous < entity.columns.count ? entity.columns[previous] : -1
                switch tag {
                case .reference, .references:
                    let scratchStart = scratch.count
                    let countAt = scratchStart + 1
                    scratch.append(rawTag)
                    var total: UInt64 = 1
                    if tag == .references {
                        guard let listed = cursor.varint(), listed <= UInt64(cursor.remaining / 2) else { return .declined }
                        total = listed
                        scratch.append(0)  // the kept count, patched below (one byte while it is < 128)
                    }
                    var kept: UInt64 = 0
                    for _ in 0..<Int(total) {
                        guard let target = cursor.varint(), target < UInt64(source.entities.count),
                              let targetKey = cursor.varint(), targetKey >= 1, targetKey <= UInt64(BinaryStoreLayout.largestPrimaryKey)
                        else { return .declined }
                        guard Int(target) < plan.referenceTargets.count else { return .declined }
                        let mapped = plan.referenceTargets[Int(target)]
                        guard mapped >= 0, isLive(Int(target), Int64(targetKey)) else { continue }
                        kept += 1
                        Self.varint(UInt64(mapped), into: &scratch)
                        Self.varint(targetKey, into: &scratch)
                    }
                    if tag == .references {
                        guard kept < 0x80 else { return .declined }
                        scratch[countAt] = UInt8(kept)
                    }
                    guard column >= 0, tag == .references || kept > 0 else {
                        scratch.removeSubrange(scratchStart...)
                        continue
                    }
                    fields.append((column, -1, scratchStart, scratch.count))
                case .decimal, .uri:
                    // Rare: the checked pass parses them as the decoder does.
                    return .declined
                case .string:
                    guard RecordCodec.skipRaw(tag, &cursor) else { return .declined }
                    // The text is copied, not decoded: check it is UTF-8 as a fetch would.
                    guard Self.isUTF8(base, from: valueStart + 1, to: cursor.position) else { return .declined }
                    if column >= 0 { fields.append((column, 0, valueStart, cursor.position)) }
                default:
                    guard RecordCodec.skipRaw(tag, &cursor) else { return .declined }
                    if column >= 0 { fields.append((column, 0, valueStart, cursor.position)) }
                }
            }
            guard cursor.position == limit else { return .declined }
            let copied = fields.count
            for (index, fill) in entity.fills.enumerated() where !fields[0..<copied].contains(where: { $0.column == fill.column }) {
                fields.append((fill.column, -2 - index, 0, fill.value.count))
            }
            if !fields.isEmpty, !zip(fields, fields.dropFirst()).allSatisfy({ $0.column < $1.column }) { fields.sort { $0.column < $1.column } }
            for (column, _) in entity.mandatory where !fields.contains(where: { $0.column == column }) { return .declined }
            writer.uint8(RecordHeader.Kind.row.rawValue)
            writer.varint(UInt64(entity.destinationEntityID))
            writer.varint(key)
            writer.varint(version)
            writer.varint(UInt64(fields.count))
            for field in fields {
                writer.varint(UInt64(field.column))
                switch field.from {
                case 0: writer.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[field.start..<field.end]))
                case -1: writer.bytes.append(contentsOf: scratch[field.start..<field.end])
                default: writer.bytes.append(contentsOf: entity.fills[-2 - field.from].value)
                }
            }
            return .written(entity.destinationEntityID, Int64(key))
        }
    }

    /// Whether the string value at `start` (its length varint, then its bytes) is valid UTF-8.
    private static func isUTF8(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Bool {
        var cursor = RawCursor(base: base, position: start, end: end)
        guard let length = cursor.varint(), length == UInt64(end - cursor.position) else { return false }
        let text = UnsafeBufferPointer(start: base + cursor.position, count: end - cursor.position)
        if text.allSatisfy({ $0 < 0x80 }) { return true }
        return !Swift.transcode(text.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true, into: { _ in })
    }

    private static func varint(_ value: UInt64, into bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
