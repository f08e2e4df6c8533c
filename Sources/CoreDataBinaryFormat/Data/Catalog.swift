import CoreDataModel

/// The names behind the small integers in records (Formats/binary-store.md §6): entity IDs and,
/// per entity, property indexes. Append-only: a name keeps its number forever.
public struct Catalog: Sendable, Equatable {
    /// One entity: its name and its properties in index order.
    public struct Entity: Sendable, Equatable {
        public private(set) var name: String
        /// The process-wide number of ``name``, made once so records decode to IDs without a lock.
        public private(set) var number: EntityNumber
        /// At least one more than every primary key ever saved for the entity, deleted ones
        /// included, as of the checkpoint that wrote the catalog (§6): keys are never reused.
        public var nextPrimaryKey: Int64 = 1
        public private(set) var properties: [String]
        fileprivate var indexes: [String: Int]

        init(name: String) {
            self.name = name
            self.number = EntityNumber(name)
            self.properties = []
            self.indexes = [:]
        }

        /// The index of a property, or `nil` when no record of the entity ever used it.
        public func index(of property: String) -> Int? { indexes[property] }

        fileprivate mutating func add(_ property: String) -> Bool {
            guard indexes[property] == nil else { return false }
            indexes[property] = properties.count
            properties.append(property)
            return true
        }
    }

    public private(set) var entities: [Entity] = []
    private var ids: [String: Int] = [:]
    /// The entity names by ID: most models have a handful of entities, and comparing a short
    /// name with each costs less than hashing it (every point lookup asks).
    private var names: [String] = []

    public init() {}

    /// The ID of an entity, or `nil` when the catalog does not name it.
    public func entityID(of name: String) -> Int? {
        guard names.count <= 8 else { return ids[name] }
        for id in names.indices where names[id] == name { return id }
        return nil
    }

    /// The ID of the entity an object ID names, or `nil` when the catalog does not name it.
    public func entityID(of entity: EntityNumber) -> Int? {
        // No table by number: every field of the catalog is retained when a store copies it
        // for a lookup, and one more field cost a point lookup more than the name's hash saves.
        guard entities.count <= 8 else { return ids[entity.name] }
        for id in entities.indices where entities[id].number == entity { return id }
        return nil
    }

    /// Adds an entity and properties the catalog does not yet name; returns whether it changed.
    @discardableResult
    public mutating func register(entity name: String, properties: some Sequence<String>) -> Bool {
        var changed = false
        let id: Int
        if let existing = ids[name] {
            id = existing
        } else {
            id = entities.count
            ids[name] = id
            names.append(name)
            entities.append(Entity(name: name))
            changed = true
        }
        for property in properties where entities[id].add(property) { changed = true }
        return changed
    }

    /// Records the next primary key of an entity the catalog names.
    public mutating func setNextPrimaryKey(_ key: Int64, of name: String) {
        guard let id = ids[name] else { return }
        entities[id].nextPrimaryKey = max(entities[id].nextPrimaryKey, key)
    }

    /// Whether this catalog keeps every name of `base` under the same number: the same entities
    /// first, in order, each with `base`'s properties first, in order (§6: append-only). A catalog
    /// that does not is damage: records decoded against `base` would name the wrong entity or one
    /// past the end.
    public func extends(_ base: Catalog) -> Bool {
        guard entities.count >= base.entities.count else { return false }
        for (entity, old) in zip(entities, base.entities) {
            guard entity.name == old.name, entity.properties.starts(with: old.properties) else { return false }
        }
        return true
    }

    /// The catalog page payload.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.varint(UInt64(entities.count))
        for entity in entities {
            writer.string(entity.name)
            writer.varint(UInt64(max(1, entity.nextPrimaryKey)))
            writer.varint(UInt64(entity.properties.count))
            for property in entity.properties { writer.string(property) }
        }
        return writer.bytes
    }

    /// Decodes a catalog payload; duplicate names are damage.
    public init(decoding bytes: [UInt8]) throws(BinaryFormatError) {
        var reader = ByteReader(bytes)
        let count = try reader.count("entity count", atMost: reader.remaining)
        for _ in 0..<count {
            let name = try reader.string("entity name")
            guard ids[name] == nil else { throw BinaryFormatError("catalog", "entity '\(name)' appears twice") }
            let nextKey = try reader.varint("next primary key of \(name)")
            guard nextKey >= 1, nextKey <= UInt64(BinaryStoreLayout.largestPrimaryKey) + 1 else {
                throw BinaryFormatError("catalog", "next primary key \(nextKey) of '\(name)' is outside 1...2^62 + 1")
            }
            let propertyCount = try reader.count("property count of \(name)", atMost: reader.remaining)
            var properties: [String] = []
            for _ in 0..<propertyCount { properties.append(try reader.string("property name of \(name)")) }
            guard Set(properties).count == properties.count else {
                throw BinaryFormatError("catalog", "entity '\(name)' names a property twice")
            }
            register(entity: name, properties: properties)
            entities[entities.count - 1].nextPrimaryKey = Int64(nextKey)
        }
        guard reader.isAtEnd else { throw BinaryFormatError("catalog", "\(reader.remaining) bytes follow the last entity") }
    }
}
