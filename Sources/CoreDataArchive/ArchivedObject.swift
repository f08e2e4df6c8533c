import Foundation

/// One archived object: an `$objects` entry that is a dictionary with a `$class`, with its class
/// chain and its fields.
///
/// This is the generic view that per-class decoding code reads: the expression decoder here, and
/// later a compiled-model decoder. Fields are read by key; references to other objects stay
/// references (``reference(forKey:)``) so that callers decide what to decode, and how deep —
/// decode nested objects through a ``KeyedUnarchiver`` to get its depth, cycle and budget checks.
///
/// The typed accessors return nil for a missing key or `$null`, and throw a
/// ``KeyedArchiveError`` naming the object, the key, what was found and what was expected when
/// the field holds something else.
///
/// Threading: an immutable value, `Sendable`. Complexity: accessors are O(1) apart from the
/// values they copy.
public struct ArchivedObject: Sendable, Equatable {
    /// Where the object is in `$objects`.
    public let reference: ArchiveReference
    /// The object's class: `$classname` of its class entry (the first of ``classChain``).
    public let className: String
    /// `$classes` of its class entry: the class, then its superclasses (`NSKeyPathExpression`,
    /// `NSFunctionExpression`, `NSExpression`, `NSObject`).
    public let classChain: [String]
    /// The fields, without `$class`.
    public let fields: [String: ArchivedValue]
    /// The archive the object is in; references resolve against it.
    public let archive: KeyedArchive

    /// The field names, sorted.
    public var keys: [String] { fields.keys.sorted() }

    /// Whether `className` is the object's class or one of its superclasses.
    public func isKind(of className: String) -> Bool {
        classChain.contains(className)
    }

    /// The field `key` as stored, or nil when the object has no such field.
    public func value(forKey key: String) -> ArchivedValue? {
        fields[key]
    }

    /// `object 3 (NSFunctionExpression)`, as messages name it.
    public var label: String { "\(reference) (\(className))" }

    /// Two objects are equal when they are the same entry of archives with the same layout; use
    /// it to compare objects of one archive.
    public static func == (lhs: ArchivedObject, rhs: ArchivedObject) -> Bool {
        lhs.reference == rhs.reference && lhs.classChain == rhs.classChain && lhs.fields == rhs.fields
    }

    // MARK: - Typed fields

    /// The object the field `key` refers to; nil when the field is missing or `$null`.
    /// - Throws: ``KeyedArchiveError`` (`.malformed`) when the field is not a UID.
    public func reference(forKey key: String) throws(KeyedArchiveError) -> ArchiveReference? {
        guard let value = fields[key] else { return nil }
        switch value {
        case .reference(let reference): return reference.isNull ? nil : reference
        case .null: return nil
        default: throw fieldError(key, holds: value, expected: "a reference")
        }
    }

    /// The UIDs of the inline array in field `key` (`NS.objects`, `NS.keys`); empty when the field
    /// is missing. `$null` elements stay in the list (as references with ``ArchiveReference/isNull``).
    /// - Throws: ``KeyedArchiveError`` (`.malformed`) when the field is not an array of UIDs.
    public func references(forKey key: String) throws(KeyedArchiveError) -> [ArchiveReference] {
        guard let value = fields[key] else { return [] }
        guard case .array(let elements) = value else { throw fieldError(key, holds: value, expected: "an array of references") }
        var references: [ArchiveReference] = []
        references.reserveCapacity(elements.count)
        for (position, element) in elements.enumerated() {
            guard case .reference(let reference) = element else {
                throw KeyedArchiveError(.malformed, "\(label): element \(position) of \(key) is \(element.kindDescription), expected a reference", object: reference.index)
            }
            references.append(reference)
        }
        return references
    }

    /// The string in field `key`: inline, an `$objects` string, or an `NSString`/`NSMutableString`
    /// object (`NS.string`); nil when missing or `$null`.
    /// - Throws: ``KeyedArchiveError`` (`.wrongClass` or `.malformed`) for anything else.
    public func string(forKey key: String) throws(KeyedArchiveError) -> String? {
        guard let value = fields[key] else { return nil }
        switch value {
        case .null: return nil
        case .string(let string): return string
        case .reference(let target):
            switch try archive.entry(at: target) {
            case .null: return nil
            case .value(.string(let string)): return string
            case .value(let other): throw fieldError(key, holds: other, expected: "a string", via: target)
            case .object(let object):
                guard object.isKind(of: "NSString") else {
                    throw fieldError(key, found: object, expected: "an NSString")
                }
                guard case .string(let string)? = try object.plainValue("NS.string", expected: "a string") else {
                    throw KeyedArchiveError(.malformed, "\(object.label) has no NS.string", object: object.reference.index)
                }
                return string
            }
        default:
            throw fieldError(key, holds: value, expected: "a string")
        }
    }

    /// The integer in field `key` (inline, a boolean as 0 or 1, or an `$objects` number); nil when
    /// missing or `$null`.
    /// - Throws: ``KeyedArchiveError`` (`.malformed`) for anything else or a value beyond `Int`.
    public func integer(forKey key: String) throws(KeyedArchiveError) -> Int? {
        guard let value = try scalar(key) else { return nil }
        switch value {
        case .integer(let integer):
            guard let result = Int(exactly: integer) else { throw fieldError(key, holds: value, expected: "an integer that fits in Int") }
            return result
        case .bool(let bool): return bool ? 1 : 0
        default: throw fieldError(key, holds: value, expected: "an integer")
        }
    }

    /// The boolean in field `key` (inline, or an integer: nonzero is true); nil when missing.
    /// - Throws: ``KeyedArchiveError`` (`.malformed`) for anything else.
    public func bool(forKey key: String) throws(KeyedArchiveError) -> Bool? {
        guard let value = try scalar(key) else { return nil }
        switch value {
        case .bool(let bool): return bool
        case .integer(let integer): return integer != 0
        case .unsignedInteger: return true
        default: throw fieldError(key, holds: value, expected: "a boolean")
        }
    }

    /// The real in field `key` (inline or an integer, widened); nil when missing.
    /// - Throws: ``KeyedArchiveError`` (`.malformed`) for anything else.
    public func double(forKey key: String) throws(KeyedArchiveError) -> Double? {
        guard let value = try scalar(key) else { return nil }
        switch value {
        case .real(let real): return real
        case .integer(let integer): return Double(integer)
        case .unsignedInteger(let integer): return Double(integer)
        default: throw fieldError(key, holds: value, expected: "a real")
        }
    }

    /// The bytes in field `key`: inline data, an `$objects` data entry, or an `NSData`/`NSMutableData`
    /// object (`NS.data` or `NS.bytes`); nil when missing or `$null`.
    /// - Throws: ``KeyedArchiveError`` (`.wrongClass` or `.malformed`) for anything else.
    public func data(forKey key: String) throws(KeyedArchiveError) -> Data? {
        guard let value = fields[key] else { return nil }
        switch value {
        case .null: return nil
        case .data(let data): return data
        case .reference(let target):
            switch try archive.entry(at: target) {
            case .null: return nil
            case .value(.data(let data)): return data
            case .value(let other): throw fieldError(key, holds: other, expected: "data", via: target)
            case .object(let object):
                guard object.isKind(of: "NSData") else { throw fieldError(key, found: object, expected: "an NSData") }
                if case .data(let data)? = try object.plainValue("NS.data", expected: "data") { return data }
                if case .data(let data)? = try object.plainValue("NS.bytes", expected: "data") { return data }
                throw KeyedArchiveError(.malformed, "\(object.label) has neither NS.data nor NS.bytes", object: object.reference.index)
            }
        default:
            throw fieldError(key, holds: value, expected: "data")
        }
    }

    /// A number or boolean field, following one reference to a plain `$objects` value (how an
    /// `NSNumber` passed to `encodeObject:forKey:` is stored).
    private func scalar(_ key: String) throws(KeyedArchiveError) -> ArchivedValue? {
        try plainValue(key, expected: "a number")
    }

    /// The field `key` as a plain value: inline, or through one reference to a plain `$objects`
    /// entry; nil when missing or `$null`. An object there is an error, never read: the string
    /// inside an `NSString` (or the bytes inside an `NSData`) are read through this, so an
    /// archive whose `NSString` refers to itself cannot make reading recurse.
    func plainValue(_ key: String, expected: String) throws(KeyedArchiveError) -> ArchivedValue? {
        guard let value = fields[key] else { return nil }
        switch value {
        case .null: return nil
        case .reference(let target):
            switch try archive.entry(at: target) {
            case .null: return nil
            case .value(let plain): return plain
            case .object(let object): throw fieldError(key, found: object, expected: expected)
            }
        default:
            return value
        }
    }

    // MARK: - Errors

    func fieldError(_ key: String, holds value: ArchivedValue, expected: String, via target: ArchiveReference? = nil) -> KeyedArchiveError {
        let found = target.map { "refers to \($0), \(value.kindDescription)" } ?? "is \(value.kindDescription)"
        return KeyedArchiveError(.malformed, "\(label): \(key) \(found), expected \(expected)", object: reference.index)
    }

    func fieldError(_ key: String, found object: ArchivedObject, expected: String) -> KeyedArchiveError {
        KeyedArchiveError(
            .wrongClass,
            "\(label): \(key) refers to \(object.reference), \(KeyedArchive.withArticle(object.className)), expected \(expected)",
            object: object.reference.index)
    }
}
