/// An XML store's contents as the file spells them, before they are matched against a model:
/// what the reader produces and the writer consumes (`Formats/xml-store.md §2–§7`).
///
/// Equality ignores line numbers, so a document equals itself after a write and a read.
public struct XMLStoreDocument: Sendable, Equatable {
    /// `<databaseInfo>` (`§3`).
    public var info: XMLStoreInfo
    /// Every `<object>`, in file order.
    public var objects: [XMLStoreObject]

    /// Creates the value from its parts.
    public init(info: XMLStoreInfo, objects: [XMLStoreObject]) {
        self.info = info
        self.objects = objects
    }
}

/// `<databaseInfo>`: version, UUID, the object counter and the metadata (`Formats/xml-store.md §3, §4`).
public struct XMLStoreInfo: Sendable, Equatable {
    /// The `<version>` number (§3); Apple writes 134481920, any integer is accepted.
    public var version: Int64
    /// The `<UUID>`: the store's `NSStoreUUIDKey` (§3).
    public var uuid: String
    /// The highest object number handed out so far.
    public var nextObjectID: Int64
    /// The metadata property list's top-level dictionary.
    public var metadata: [String: PropertyListValue]
    /// The line of `<metadata>`, for errors about it.
    public var metadataLine: Int

    /// Creates the value from its parts.
    public init(version: Int64 = XMLStoreLayout.storeVersion, uuid: String, nextObjectID: Int64,
                metadata: [String: PropertyListValue], metadataLine: Int = 0) {
        self.version = version
        self.uuid = uuid
        self.nextObjectID = nextObjectID
        self.metadata = metadata
        self.metadataLine = metadataLine
    }

    public static func == (lhs: XMLStoreInfo, rhs: XMLStoreInfo) -> Bool {
        lhs.version == rhs.version && lhs.uuid == rhs.uuid && lhs.nextObjectID == rhs.nextObjectID
            && lhs.metadata == rhs.metadata
    }
}

/// One `<object>` (`Formats/xml-store.md §5`).
public struct XMLStoreObject: Sendable, Equatable {
    /// The `type` attribute: the entity name as written (upper-cased by Apple).
    public var type: String
    /// The number of the `id` attribute (`z102` → 102).
    public var id: Int64
    /// How many times the object was saved: our `version` attribute, 1 when absent (`§10`).
    public var version: Int64
    /// The object's `<attribute>` elements in file order, one per non-nil attribute.
    public var attributes: [XMLStoreAttribute]
    /// The object's `<relationship>` elements in file order, one per relationship with a value.
    public var relationships: [XMLStoreRelationship]
    /// The line of the `<object>` element.
    public var line: Int

    /// Creates the value from its parts.
    public init(type: String, id: Int64, version: Int64 = 1, attributes: [XMLStoreAttribute] = [], relationships: [XMLStoreRelationship] = [], line: Int = 0) {
        self.type = type
        self.id = id
        self.version = version
        self.attributes = attributes
        self.relationships = relationships
        self.line = line
    }

    public static func == (lhs: XMLStoreObject, rhs: XMLStoreObject) -> Bool {
        lhs.type == rhs.type && lhs.id == rhs.id && lhs.version == rhs.version && lhs.attributes == rhs.attributes && lhs.relationships == rhs.relationships
    }
}

/// One `<attribute>` (`Formats/xml-store.md §6`): its text as read, not yet parsed as its type.
public struct XMLStoreAttribute: Sendable, Equatable {
    /// The property name as written (lower-cased by Apple's writer, §8).
    public var name: String
    /// `string`, `int16`, `date`, … (`§6`).
    public var type: String
    /// The element's text, unescaped.
    public var text: String
    /// Whether the text is base64 of the string's UTF-8 bytes (`encoding="base64"`, ours: `§10`).
    public var isBase64: Bool
    /// The line of the element in its file, for errors; 0 when made in code.
    public var line: Int

    /// Creates the value from its parts.
    public init(name: String, type: String, text: String, isBase64: Bool = false, line: Int = 0) {
        self.name = name
        self.type = type
        self.text = text
        self.isBase64 = isBase64
        self.line = line
    }

    public static func == (lhs: XMLStoreAttribute, rhs: XMLStoreAttribute) -> Bool {
        lhs.name == rhs.name && lhs.type == rhs.type && lhs.text == rhs.text && lhs.isBase64 == rhs.isBase64
    }
}

/// One `<relationship>` (`Formats/xml-store.md §7`).
public struct XMLStoreRelationship: Sendable, Equatable {
    /// The property name as written (lower-cased by Apple's writer, §8).
    public var name: String
    /// The minimum of the `type="MIN/MAX"` attribute.
    public var minCount: Int
    /// The maximum of the `type="MIN/MAX"` attribute: 1 for a to-one, 0 for an unbounded to-many.
    public var maxCount: Int
    /// The destination entity as written.
    public var destination: String
    /// The numbers of the ids in `idrefs`, in order.
    public var idrefs: [Int64]
    /// The line of the element in its file, for errors; 0 when made in code.
    public var line: Int

    /// Creates the value from its parts.
    public init(name: String, minCount: Int, maxCount: Int, destination: String, idrefs: [Int64], line: Int = 0) {
        self.name = name
        self.minCount = minCount
        self.maxCount = maxCount
        self.destination = destination
        self.idrefs = idrefs
        self.line = line
    }

    public static func == (lhs: XMLStoreRelationship, rhs: XMLStoreRelationship) -> Bool {
        lhs.name == rhs.name && lhs.minCount == rhs.minCount && lhs.maxCount == rhs.maxCount
            && lhs.destination == rhs.destination && lhs.idrefs == rhs.idrefs
    }
}
