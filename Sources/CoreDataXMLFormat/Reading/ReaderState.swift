import Foundation

/// The element structure of an XML store (`Formats/xml-store.md §2–§7`) as a state machine over
/// SAX events: which element may appear where, and what each collects.
struct ReaderState {
    private enum Element {
        case database
        case info
        case infoField(String)
        case metadata
        case plist
        case plistContainer
        case plistLeaf(String)
        case object
        case attribute
        case relationship

        var name: String {
            switch self {
            case .database: return "database"
            case .info: return "databaseInfo"
            case .infoField(let name), .plistLeaf(let name): return name
            case .metadata: return "metadata"
            case .plist: return "plist"
            case .plistContainer: return "dict/array"
            case .object: return "object"
            case .attribute: return "attribute"
            case .relationship: return "relationship"
            }
        }
    }

    private enum PlistContainer {
        case array([PropertyListValue])
        case dictionary([String: PropertyListValue], key: String?)
    }

    private var stack: [Element] = []
    private var plist: [PlistContainer] = []
    private var infoFields: [String: String] = [:]
    private var metadata: [String: PropertyListValue]?
    private var metadataLine = 0
    private var object: XMLStoreObject?
    /// How many attributes the previous object had: the next one reserves as many (objects of a
    /// file mostly share an entity), so its array does not grow one step at a time.
    private var previousAttributeCount = 0
    private var attribute: XMLStoreAttribute?
    /// The line each id was first seen on, to name both places of a duplicate.
    private var idLines: [Int64: Int] = [:]

    private(set) var info: XMLStoreInfo?
    private(set) var objects: [XMLStoreObject] = []
    private(set) var sawDatabaseEnd = false
    /// The text of the element being read, when it is one that has text.
    var text: [UInt8] = []
    private(set) var isCapturingText = false

    var currentElementName: String { stack.last?.name ?? "document" }

    private static let infoFieldNames: Set<String> = ["version", "UUID", "nextObjectID"]
    private static let plistLeaves: Set<String> = ["key", "string", "integer", "real", "true", "false", "date", "data"]

    mutating func start(_ name: String, attributes: ElementAttributes, line: Int) throws(XMLStoreError) {
        let element: Element
        switch (stack.last, name) {
        case (nil, "database"):
            guard !sawDatabaseEnd else { throw XMLStoreError(line: line, "a second <database>") }
            element = .database
        case (nil, _):
            throw XMLStoreError(line: line, "the root element is <\(name)>, not <database>: not an XML store")
        case (.database?, "databaseInfo"):
            guard info == nil, objects.isEmpty, object == nil else {
                throw XMLStoreError(line: line, "<databaseInfo> must come once, before the objects")
            }
            element = .info
        case (.database?, "object"):
            guard info != nil else { throw XMLStoreError(line: line, "<object> before <databaseInfo>") }
            object = try Self.object(attributes, line: line)
            object?.attributes.reserveCapacity(previousAttributeCount)
            if let id = object?.id {
                if let first = idLines[id] {
                    throw XMLStoreError(line: line, "duplicate id z\(id) (first used on line \(first))")
                }
                idLines[id] = line
            }
            element = .object
        case (.info?, let field) where Self.infoFieldNames.contains(field):
            guard infoFields[field] == nil else { throw XMLStoreError(line: line, "a second <\(field)> in <databaseInfo>") }
            element = .infoField(field)
        case (.info?, "metadata"):
            guard metadata == nil else { throw XMLStoreError(line: line, "a second <metadata> in <databaseInfo>") }
            metadataLine = line
            element = .metadata
        case (.metadata?, "plist"):
            element = .plist
        case (.plist?, "dict"), (.plistContainer?, "dict"):
            try checkMetadataDepth(line: line)
            plist.append(.dictionary([:], key: nil))
            element = .plistContainer
        case (.plistContainer?, "array"):
            try checkMetadataDepth(line: line)
            plist.append(.array([]))
            element = .plistContainer
        case (.plistContainer?, let leaf) where Self.plistLeaves.contains(leaf):
            element = .plistLeaf(leaf)
        case (.object?, "attribute"):
            guard let attributeName = attributes["name"], let type = attributes["type"] else {
                throw XMLStoreError(line: line, "<attribute> needs name and type")
            }
            let encoding = attributes["encoding"]
            guard encoding == nil || encoding == "base64" else {
                throw XMLStoreError(line: line, "attribute '\(attributeName)' has unknown encoding '\(encoding ?? "")'")
            }
            attribute = XMLStoreAttribute(name: attributeName, type: type, text: "", isBase64: encoding != nil, line: line)
            element = .attribute
        case (.object?, "relationship"):
            object?.relationships.append(try Self.relationship(attributes, line: line))
            element = .relationship
        default:
            throw XMLStoreError(line: line, "unexpected <\(name)> inside <\(currentElementName)>")
        }
        stack.append(element)
        switch element {
        case .infoField, .plistLeaf, .attribute:
            isCapturingText = true
            text.removeAll(keepingCapacity: true)
        default:
            isCapturingText = false
        }
    }

    mutating func end(line: Int) throws(XMLStoreError) {
        guard let element = stack.popLast() else { return }
        let content = isCapturingText ? String(decoding: text, as: UTF8.self) : ""
        isCapturingText = false
        switch element {
        case .database:
            guard info != nil else { throw XMLStoreError(line: line, "the store has no <databaseInfo>") }
            sawDatabaseEnd = true
        case .info:
            info = try makeInfo(line: line)
        case .infoField(let field):
            infoFields[field] = content
        case .metadata:
            guard metadata != nil else { throw XMLStoreError(line: line, "<metadata> holds no property list dictionary") }
        case .plist:
            break
        case .plistContainer:
            guard let container = plist.popLast() else { return }
            switch container {
            case .array(let items): try addPlistValue(.array(items), line: line)
            case .dictionary(let entries, let key):
                if let key { throw XMLStoreError(line: line, "metadata key '\(key)' has no value") }
                try addPlistValue(.dictionary(entries), line: line)
            }
        case .plistLeaf(let leaf):
            if leaf == "key" {
                guard case .dictionary(let entries, nil)? = plist.last else {
                    throw XMLStoreError(line: line, "a metadata <key> outside a dictionary or after another key")
                }
                plist[plist.count - 1] = .dictionary(entries, key: content)
            } else {
                try addPlistValue(try Self.plistLeaf(leaf, content, line: line), line: line)
            }
        case .object:
            if let object {
                previousAttributeCount = object.attributes.count
                objects.append(object)
            }
            object = nil
        case .attribute:
            if var attribute {
                attribute.text = content
                object?.attributes.append(attribute)
            }
            attribute = nil
        case .relationship:
            break
        }
    }

    private mutating func addPlistValue(_ value: PropertyListValue, line: Int) throws(XMLStoreError) {
        guard let top = plist.popLast() else {
            guard case .dictionary(let entries) = value else {
                throw XMLStoreError(line: line, "the metadata property list is not a dictionary")
            }
            metadata = entries
            return
        }
        switch top {
        case .array(var items):
            items.append(value)
            plist.append(.array(items))
        case .dictionary(var entries, let key):
            guard let key else { throw XMLStoreError(line: line, "a metadata value without a <key>") }
            entries[key] = value
            plist.append(.dictionary(entries, key: nil))
        }
    }

    private func makeInfo(line: Int) throws(XMLStoreError) -> XMLStoreInfo {
        guard let versionText = infoFields["version"], let version = Int64(versionText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw XMLStoreError(line: line, "<databaseInfo> needs an integer <version>")
        }
        guard let uuidText = infoFields["UUID"]?.trimmingCharacters(in: .whitespacesAndNewlines), !uuidText.isEmpty else {
            throw XMLStoreError(line: line, "<databaseInfo> needs a <UUID>")
        }
        guard let nextText = infoFields["nextObjectID"], let next = Int64(nextText.trimmingCharacters(in: .whitespacesAndNewlines)),
              next >= 0, next <= XMLStoreLayout.largestObjectNumber else {
            throw XMLStoreError(line: line, "<databaseInfo> needs an integer <nextObjectID> from 0 to 2^62")
        }
        return XMLStoreInfo(version: version, uuid: uuidText, nextObjectID: next, metadata: metadata ?? [:], metadataLine: metadataLine)
    }

    /// The number of an `id` or `idrefs` entry: `z` and a decimal number ≥ 1 (§5).
    static func idNumber(_ text: Substring) -> Int64? {
        // Byte by byte: this runs once per object of the file, and Character-level checks
        // (grapheme breaking, Unicode `isNumber`) cost more than the rest of the object's start.
        let prefix = XMLStoreLayout.idPrefix.utf8
        let bytes = text.utf8
        guard bytes.starts(with: prefix) else { return nil }
        var number: Int64 = 0
        var digitCount = 0
        for byte in bytes.dropFirst(prefix.count) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            // Stop before the value could pass the limit, so the arithmetic never overflows.
            guard number <= XMLStoreLayout.largestObjectNumber / 10 else { return nil }
            number = number * 10 + Int64(byte - UInt8(ascii: "0"))
            digitCount += 1
        }
        guard digitCount > 0, number >= 1, number <= XMLStoreLayout.largestObjectNumber else { return nil }
        return number
    }

    private static func object(_ attributes: ElementAttributes, line: Int) throws(XMLStoreError) -> XMLStoreObject {
        guard let type = attributes["type"], !type.isEmpty else { throw XMLStoreError(line: line, "<object> without a type") }
        guard let idText = attributes["id"] else { throw XMLStoreError(line: line, "<object type=\"\(type)\"> without an id") }
        guard let id = idNumber(Substring(idText)) else {
            throw XMLStoreError(line: line, "object id '\(idText)' is not z followed by a number from 1 to 2^62")
        }
        var version: Int64 = 1
        if let versionText = attributes["version"] {
            // Bounded like ids, so that saving the object again can never overflow.
            guard let number = Int64(versionText), number >= 1, number <= XMLStoreLayout.largestObjectNumber else {
                throw XMLStoreError(line: line, "object z\(id) has version '\(versionText)', not a number from 1 to 2^62")
            }
            version = number
        }
        return XMLStoreObject(type: type, id: id, version: version, line: line)
    }

    private static func relationship(_ attributes: ElementAttributes, line: Int) throws(XMLStoreError) -> XMLStoreRelationship {
        guard let name = attributes["name"], let type = attributes["type"], let destination = attributes["destination"] else {
            throw XMLStoreError(line: line, "<relationship> needs name, type and destination")
        }
        let counts = type.split(separator: "/", omittingEmptySubsequences: false)
        guard counts.count == 2, let minCount = Int(counts[0]), let maxCount = Int(counts[1]), minCount >= 0, maxCount >= 0 else {
            throw XMLStoreError(line: line, "relationship '\(name)' has type '\(type)', not MIN/MAX")
        }
        var idrefs: [Int64] = []
        for token in (attributes["idrefs"] ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }) {
            guard let id = idNumber(token) else {
                throw XMLStoreError(line: line, "relationship '\(name)' refers to '\(token)', which is not z followed by a number from 1 to 2^62")
            }
            idrefs.append(id)
        }
        return XMLStoreRelationship(name: name, minCount: minCount, maxCount: maxCount, destination: destination, idrefs: idrefs, line: line)
    }

    private static func plistLeaf(_ leaf: String, _ text: String, line: Int) throws(XMLStoreError) -> PropertyListValue {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch leaf {
        case "string": return .string(text)
        case "integer":
            guard let value = Int64(trimmed) else { throw XMLStoreError(line: line, "metadata <integer> '\(trimmed)' is not a 64-bit integer") }
            return .integer(value)
        case "real":
            guard let value = Double(trimmed) else { throw XMLStoreError(line: line, "metadata <real> '\(trimmed)' is not a number") }
            return .real(value)
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "date":
            guard let value = PlistDate.parse(trimmed) else { throw XMLStoreError(line: line, "metadata <date> '\(trimmed)' is not an ISO 8601 date") }
            return .date(value)
        default:
            guard let value = Base64Text.decode(text) else { throw XMLStoreError(line: line, "metadata <data> is not base64") }
            return .data(value)
        }
    }

    /// Refuses metadata nested deeper than ``XMLStoreLayout/maximumMetadataDepth`` (§4).
    private func checkMetadataDepth(line: Int) throws(XMLStoreError) {
        guard plist.count < XMLStoreLayout.maximumMetadataDepth else {
            throw XMLStoreError(line: line, "the metadata nests <dict> and <array> more than \(XMLStoreLayout.maximumMetadataDepth) levels deep")
        }
    }
}
