import Foundation

/// An `NSKeyedArchiver` archive read from a binary property list (Formats/keyed-archive.md §4):
/// the root dictionary's `$archiver`, `$version`, `$top` and `$objects`, with every object
/// reachable by its `$objects` index.
///
/// Opening an archive checks its frame and that every UID it holds points inside `$objects`;
/// objects are read on demand with ``object(at:)`` (a generic view of fields and class chain) and
/// decoded into Swift values by a ``KeyedUnarchiver`` or, for expressions and predicates, an
/// ``ArchivedExpressionDecoder``.
///
/// ```swift
/// let archive = try KeyedArchive(data: Data(contentsOf: url))
/// let root = try archive.object(at: archive.rootReference())
/// print(root.className)   // NSMappingModel
/// ```
///
/// Threading: an immutable value, `Sendable`; read it from any thread.
/// Complexity: opening is O(input bytes); ``object(at:)`` is O(fields of the object).
public struct KeyedArchive: Sendable {
    /// The `$archiver` value this reader accepts. Formats/keyed-archive.md §4.
    public static let archiverName = "NSKeyedArchiver"
    /// The `$version` value this reader accepts (every known archive has it). Formats/keyed-archive.md §4.
    public static let supportedVersion: Int64 = 100_000

    /// The property list the archive was read from.
    public let propertyList: BinaryPropertyList
    /// The property list object number of each `$objects` entry.
    let entries: [Int]
    /// `$top`: name → reference.
    let top: [String: ArchiveReference]

    /// Reads the archive in `data`.
    ///
    /// - Throws: ``KeyedArchiveError``: `.propertyList` for bytes that are not a valid binary
    ///   property list, `.notAnArchive` for a missing or wrong `$archiver`, `$version`, `$top` or
    ///   `$objects`, or a UID past the end of `$objects`.
    /// - Complexity: O(data.count).
    public init(data: Data) throws(KeyedArchiveError) {
        try self.init(bytes: [UInt8](data))
    }

    /// Reads the archive in `bytes`; see ``init(data:)``.
    public init(bytes: [UInt8]) throws(KeyedArchiveError) {
        let list: BinaryPropertyList
        do {
            list = try BinaryPropertyList(bytes: bytes)
        } catch {
            throw KeyedArchiveError(error)
        }
        try self.init(propertyList: list)
    }

    /// Reads the archive held by an already parsed property list; see ``init(data:)``.
    public init(propertyList list: BinaryPropertyList) throws(KeyedArchiveError) {
        guard case .dictionary(let keys, let values) = list.objects[list.top] else {
            throw KeyedArchiveError(.notAnArchive, "not a keyed archive: the top object of the property list is not a dictionary")
        }
        var root: [String: Int] = [:]
        for (key, value) in zip(keys, values) {
            if case .string(let name) = list.objects[key] { root[name] = value }
        }
        func missing(_ key: String) -> KeyedArchiveError {
            KeyedArchiveError(.notAnArchive, "not a keyed archive: the root dictionary has no \(key)")
        }
        guard let archiver = root["$archiver"] else { throw missing("$archiver") }
        guard case .string(let name) = list.objects[archiver], name == Self.archiverName else {
            throw KeyedArchiveError(.notAnArchive, "not a keyed archive: $archiver is \(Self.describe(list.objects[archiver])), not \"\(Self.archiverName)\"")
        }
        guard let version = root["$version"] else { throw missing("$version") }
        guard case .integer(let number) = list.objects[version], number == Self.supportedVersion else {
            throw KeyedArchiveError(.notAnArchive, "not a keyed archive: $version is \(Self.describe(list.objects[version])), not \(Self.supportedVersion)")
        }
        guard let objectsNumber = root["$objects"] else { throw missing("$objects") }
        guard case .array(let entries) = list.objects[objectsNumber] else {
            throw KeyedArchiveError(.notAnArchive, "not a keyed archive: $objects is \(Self.describe(list.objects[objectsNumber])), not an array")
        }
        guard let topNumber = root["$top"] else { throw missing("$top") }
        guard case .dictionary(let topKeys, let topValues) = list.objects[topNumber] else {
            throw KeyedArchiveError(.notAnArchive, "not a keyed archive: $top is \(Self.describe(list.objects[topNumber])), not a dictionary")
        }
        var top: [String: ArchiveReference] = [:]
        for (key, value) in zip(topKeys, topValues) {
            guard case .string(let name) = list.objects[key] else {
                throw KeyedArchiveError(.notAnArchive, "not a keyed archive: a key of $top is \(Self.describe(list.objects[key])), not a string")
            }
            guard case .uid(let uid) = list.objects[value] else {
                throw KeyedArchiveError(.notAnArchive, "not a keyed archive: $top[\"\(name)\"] is \(Self.describe(list.objects[value])), not a UID")
            }
            guard uid < UInt64(entries.count) else {
                throw KeyedArchiveError(.notAnArchive, "not a keyed archive: $top[\"\(name)\"] is UID \(uid), past the end of $objects (\(entries.count) entries)")
            }
            top[name] = ArchiveReference(Int(uid))
        }
        self.propertyList = list
        self.entries = entries
        self.top = top
        try validateReferences()
    }

    /// Checks every UID an object can reach through ``ArchivedObject`` (fields and their inline
    /// arrays), so that later reads never meet a reference out of range.
    private func validateReferences() throws(KeyedArchiveError) {
        func check(_ number: Int, in index: Int, key: String) throws(KeyedArchiveError) {
            switch propertyList.objects[number] {
            case .uid(let uid):
                guard uid < UInt64(entries.count) else {
                    throw KeyedArchiveError(.notAnArchive, "object \(index): \(key) is UID \(uid), past the end of $objects (\(entries.count) entries)", object: index)
                }
            case .array(let elements):
                for element in elements {
                    if case .uid(let uid) = propertyList.objects[element], uid >= UInt64(entries.count) {
                        throw KeyedArchiveError(.notAnArchive, "object \(index): an element of \(key) is UID \(uid), past the end of $objects (\(entries.count) entries)", object: index)
                    }
                }
            default:
                break
            }
        }
        for (index, number) in entries.enumerated() {
            switch propertyList.objects[number] {
            case .dictionary(let keys, let values):
                for (key, value) in zip(keys, values) {
                    let name: String
                    if case .string(let string) = propertyList.objects[key] { name = string } else { name = "a field" }
                    try check(value, in: index, key: name)
                }
            case .array, .uid:
                try check(number, in: index, key: "the entry")
            default:
                break
            }
        }
    }

    // MARK: - Reading

    /// The number of `$objects` entries (including `$null` at 0).
    public var objectCount: Int { entries.count }

    /// The names in `$top`, sorted (`root` for `archivedData(withRootObject:)`).
    public var topKeys: [String] { top.keys.sorted() }

    /// The object `$top[key]` refers to.
    /// - Throws: ``KeyedArchiveError`` (`.notAnArchive`) when `$top` has no such key.
    public func rootReference(_ key: String = "root") throws(KeyedArchiveError) -> ArchiveReference {
        guard let reference = top[key] else {
            throw KeyedArchiveError(.notAnArchive, "$top has no key \"\(key)\" (it has \(topKeys.map { "\"\($0)\"" }.joined(separator: ", ")))")
        }
        return reference
    }

    /// What `$objects[reference]` holds: `$null`, a plain value, or an archived object.
    /// - Throws: ``KeyedArchiveError`` (`.malformed`) for a reference past `$objects`, a dictionary
    ///   without a valid `$class`, or an entry that is neither a value nor an object.
    public func entry(at reference: ArchiveReference) throws(KeyedArchiveError) -> ArchiveEntry {
        guard entries.indices.contains(reference.index) else {
            throw KeyedArchiveError(.malformed, "\(reference) is past the end of $objects (\(entries.count) entries)", object: reference.index)
        }
        if reference.isNull { return .null }
        let number = entries[reference.index]
        switch propertyList.objects[number] {
        case .dictionary(let keys, let values):
            return .object(try object(reference, keys: keys, values: values))
        case .string("$null"):
            return .null
        case .set:
            throw KeyedArchiveError(.malformed, "\(reference) is a property list set, which keyed archives do not hold", object: reference.index)
        default:
            guard let value = ArchivedValue.shallow(number, in: propertyList) else {
                throw KeyedArchiveError(.malformed, "\(reference) is an array holding containers, which keyed archives do not hold", object: reference.index)
            }
            return .value(value)
        }
    }

    /// The archived object at `reference`.
    /// - Throws: ``KeyedArchiveError``: `.malformed` when the entry is `$null`, a plain value, or a
    ///   dictionary without a valid `$class`.
    public func object(at reference: ArchiveReference) throws(KeyedArchiveError) -> ArchivedObject {
        switch try entry(at: reference) {
        case .object(let object): return object
        case .null: throw KeyedArchiveError(.malformed, "\(reference) is $null, expected an archived object", object: reference.index)
        case .value(let value): throw KeyedArchiveError(.malformed, "\(reference) is \(value.kindDescription), expected an archived object", object: reference.index)
        }
    }

    private func object(_ reference: ArchiveReference, keys: [Int], values: [Int]) throws(KeyedArchiveError) -> ArchivedObject {
        var fields: [String: ArchivedValue] = [:]
        var classReference: ArchiveReference?
        for (key, value) in zip(keys, values) {
            guard case .string(let name) = propertyList.objects[key] else {
                throw KeyedArchiveError(.malformed, "\(reference): a key is \(Self.describe(propertyList.objects[key])), not a string", object: reference.index)
            }
            guard let field = ArchivedValue.shallow(value, in: propertyList) else {
                throw KeyedArchiveError(.malformed, "\(reference): \(name) is \(Self.describe(propertyList.objects[value])) holding containers, which keyed archives do not hold", object: reference.index)
            }
            if name == "$class" {
                guard case .reference(let target) = field else {
                    throw KeyedArchiveError(.malformed, "\(reference): $class is \(field.kindDescription), not a reference", object: reference.index)
                }
                classReference = target
            } else {
                fields[name] = field
            }
        }
        guard let classReference else {
            throw KeyedArchiveError(.malformed, "\(reference) is a dictionary without $class", object: reference.index)
        }
        let (className, chain) = try classInfo(classReference, of: reference)
        return ArchivedObject(reference: reference, className: className, classChain: chain, fields: fields, archive: self)
    }

    /// `$classname` and `$classes` of a class entry.
    private func classInfo(_ classReference: ArchiveReference, of reference: ArchiveReference) throws(KeyedArchiveError) -> (String, [String]) {
        func bad(_ problem: String) -> KeyedArchiveError {
            KeyedArchiveError(.malformed, "\(reference): its $class \(classReference) \(problem)", object: reference.index)
        }
        guard !classReference.isNull, entries.indices.contains(classReference.index),
              case .dictionary(let keys, let values) = propertyList.objects[entries[classReference.index]]
        else { throw bad("is not a class dictionary") }
        var className: String?
        var chain: [String] = []
        for (key, value) in zip(keys, values) {
            guard case .string(let name) = propertyList.objects[key] else { continue }
            switch name {
            case "$classname":
                guard case .string(let string) = propertyList.objects[value] else { throw bad("has a $classname that is not a string") }
                className = string
            case "$classes":
                guard case .array(let elements) = propertyList.objects[value] else { throw bad("has $classes that are not an array") }
                for element in elements {
                    guard case .string(let string) = propertyList.objects[element] else { throw bad("has $classes that are not all strings") }
                    chain.append(string)
                }
            default:
                break
            }
        }
        guard let name = className ?? chain.first else { throw bad("has neither $classname nor $classes") }
        if chain.first != name { chain.insert(name, at: 0) }
        return (name, chain)
    }

    // MARK: - Messages

    static func describe(_ object: BinaryPropertyList.Object) -> String {
        switch object {
        case .null: return "null"
        case .bool(let value): return "the boolean \(value)"
        case .integer(let value): return "the integer \(value)"
        case .unsignedInteger(let value): return "the integer \(value)"
        case .real(let value): return "the real \(value)"
        case .date: return "a date"
        case .data(let bytes): return "\(bytes.count) bytes of data"
        case .string(let value): return "the string \"\(value.count > 60 ? String(value.prefix(60)) + "…" : value)\""
        case .uid(let value): return "UID \(value)"
        case .array(let elements): return "an array of \(elements.count)"
        case .set(let elements): return "a set of \(elements.count)"
        case .dictionary(let keys, _): return "a dictionary of \(keys.count)"
        }
    }

    /// `an NSArray`, `a Book`.
    static func withArticle(_ className: String) -> String {
        let vowels: Set<Character> = ["A", "E", "I", "O", "U", "a", "e", "i", "o", "u"]
        let an = className.hasPrefix("NS") || className.first.map { vowels.contains($0) } == true
        return (an ? "an " : "a ") + className
    }
}

/// What one `$objects` entry holds.
public enum ArchiveEntry: Sendable, Equatable {
    /// `$null` (UID 0, or the string `"$null"`).
    case null
    /// A plain property list value: a string, a number, data.
    case value(ArchivedValue)
    /// An archived object (a dictionary with `$class`).
    case object(ArchivedObject)
}
