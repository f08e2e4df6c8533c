import CoreDataArchive
import Foundation

/// The archiving behind Apple's unarchiving value transformers (`NSSecureUnarchiveFromData`,
/// `NSKeyedUnarchiveFromData`).
///
/// Writing goes through ``KeyedArchiveWriter``, which writes the binary property list Apple's
/// `NSKeyedArchiver` writes (Foundation's archiver on Linux is quadratic in the number of
/// collections, merges `1` with `true`, and traps on what it cannot archive), checking every
/// object against the allowed classes on the way.
///
/// Reading never uses Foundation's `NSKeyedUnarchiver`, which traps on damaged archives and on a
/// class that is not allowed: the package's bounded decoder (`KeyedArchive`, `KeyedUnarchiver`:
/// depth, cycle and object-count limits) reads the value classes, and objects of an app's own
/// classes are made through their `init?(coder:)` with ``ArchiveObjectCoder``, which reads from
/// the same decoder. Any problem throws a ``KeyedArchiveError`` naming it.
///
/// Threading: stateless; every call has its own writer or decoder.
enum KeyedArchiveCoding {
    /// What an archive may hold.
    struct Policy {
        /// The classes every object must be a kind of; nil for any class (`NSKeyedUnarchiveFromData`).
        var allowedClasses: [AnyClass]?
        /// Objects of an app's classes must support secure coding.
        var requiresSecureCoding: Bool
        /// The transformer's registered name, for messages.
        var transformerName: String
    }

    /// Classes Apple's unarchiver lets through inside a collection even when they are not among
    /// the allowed classes ("safe plist types"); the package does the same, both ways.
    static let plistClasses: [AnyClass] = [NSString.self, NSNumber.self, NSData.self, NSDate.self]

    // MARK: Archiving

    /// `value` archived under the root key `root` by ``KeyedArchiveWriter``.
    /// - Throws: ``KeyedArchiveError`` (`.wrongClass`) naming the first object that is not of an
    ///   allowed class or cannot be archived, (`.tooDeep`) for nesting the reader would refuse.
    static func archive(_ value: Any, _ policy: Policy) throws(KeyedArchiveError) -> Data {
        try KeyedArchiveWriter(policy: policy).archive(value)
    }

    /// The value inside an `Optional` (of any depth), or nil for `.none`.
    static func unwrapped(_ value: Any) -> Any? {
        guard let optional = value as? any OptionalValue else { return value }
        return optional.wrappedValue.flatMap(unwrapped)
    }

    // MARK: Unarchiving

    /// The object archived in `data` under the root key `root`.
    /// - Throws: ``KeyedArchiveError`` for bytes that are not a keyed archive, a damaged archive,
    ///   an object of a class that is not allowed, or an object whose `init?(coder:)` fails.
    static func unarchive(_ data: Data, _ policy: Policy) throws(KeyedArchiveError) -> Any? {
        let archive = try KeyedArchive(data: data)
        let root = try archive.rootReference()
        if root.isNull { return nil }
        // Every object of an archive without shared collections is visited once per reference to
        // it, and each reference takes at least two bytes: a budget of the archive's size lets
        // every such archive through and keeps one that expands shared references linear.
        let reader = ArchiveReader(archive: archive, policy: policy, objectBudget: max(KeyedUnarchiver.defaultObjectBudget, data.count))
        return try reader.value(at: root, allowed: policy.allowedClasses, foundationObjects: false)
    }

    // MARK: Classes

    /// Throws unless `cls` is a kind of one of `policy`'s classes (always true for a policy that
    /// allows any class; plist classes inside a collection pass too).
    static func allow(_ cls: AnyClass, _ policy: Policy, isElement: Bool, _ what: @autoclosure () -> String) throws(KeyedArchiveError) {
        try allow(cls, policy.allowedClasses, isElement: isElement, transformerName: policy.transformerName, what())
    }

    static func allow(_ cls: AnyClass, _ allowed: [AnyClass]?, isElement: Bool, transformerName: String, _ what: @autoclosure () -> String) throws(KeyedArchiveError) {
        guard let allowed else { return }
        if allowed.contains(where: { isKind(cls, of: $0) }) { return }
        if isElement, plistClasses.contains(where: { isKind(cls, of: $0) }) { return }
        throw notAllowed(what(), allowed, transformerName: transformerName)
    }

    /// "an X is not among the allowed classes of …".
    static func notAllowed(_ what: String, _ allowed: [AnyClass], transformerName: String, object: Int? = nil) -> KeyedArchiveError {
        let names = allowed.map { NSStringFromClass($0) }.joined(separator: ", ")
        return KeyedArchiveError(
            .wrongClass,
            "\(what) is not among the allowed classes of \(transformerName) (\(names)); subclass NSSecureUnarchiveFromDataTransformer and override allowedTopLevelClasses to allow it",
            object: object)
    }

    /// The name an archive gives `cls`: the one `NSKeyedArchiver.classNameForClass(_:)` reports
    /// (swift-corelibs-foundation reports none, even after `setClassName(_:for:)`), else
    /// `NSStringFromClass` (`NSObject`, `MyApp.Color`).
    static func archiveName(of cls: AnyClass) -> String {
        NSKeyedArchiver.classNameForClass(cls) ?? NSStringFromClass(cls)
    }

    /// Modules whose classes are never archived or unarchived as objects of an app's class: the
    /// value classes are written and read by this package, and the others' coders need
    /// Foundation's own archiver and unarchiver (they trap with another coder).
    private static let foundationModules: Set<Substring> = [
        "Foundation", "FoundationEssentials", "FoundationInternationalization", "FoundationNetworking", "FoundationXML", "Swift",
    ]

    /// Whether `cls` is one of Foundation's (or the standard library's) classes.
    static func isFoundationClass(_ cls: AnyClass) -> Bool {
        foundationModules.contains(String(reflecting: cls).split(separator: ".").first ?? "")
    }

    /// Whether `cls` is `other` or a subclass of it.
    static func isKind(_ cls: AnyClass, of other: AnyClass) -> Bool {
        var current: AnyClass? = cls
        while let candidate = current {
            if candidate == other { return true }
            current = _getSuperclass(candidate)
        }
        return false
    }

    /// `a String (NSString)`, `an NSMutableArray`, `a MyApp.Color`: the value's type, and the
    /// class it archives as when that differs, for messages.
    static func describe(_ value: Any, as archivedClass: AnyClass? = nil) -> String {
        let name: String
        if let object = value as? NSObject, Swift.type(of: value) is AnyClass {
            name = NSStringFromClass(Swift.type(of: object))
        } else {
            name = String(describing: Swift.type(of: value))
        }
        guard let archivedClass, NSStringFromClass(archivedClass) != name else { return describe(name: name) }
        return "\(describe(name: name)) (\(NSStringFromClass(archivedClass)))"
    }
}

/// What ``KeyedArchiveCoding`` unwraps optionals through.
private protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrappedValue: Any? { self.map { $0 as Any } }
}

// MARK: - Reading

/// Reads one archive's objects as values: the value classes through the package's decoder, an
/// app's classes through their `init?(coder:)`.
///
/// Threading: not `Sendable`; one per unarchiving call.
final class ArchiveReader {
    let unarchiver: KeyedUnarchiver
    let policy: KeyedArchiveCoding.Policy

    init(archive: KeyedArchive, policy: KeyedArchiveCoding.Policy, objectBudget: Int) {
        unarchiver = KeyedUnarchiver(archive: archive, objectBudget: objectBudget)
        self.policy = policy
    }

    /// The object at `reference`, every node a kind of `allowed` (nil: any class).
    ///
    /// With `foundationObjects`, values come as Foundation objects (`NSString`, `NSArray`, …), as
    /// an object's `init?(coder:)` expects them; otherwise as Swift values (`String`, `[Any]`, …).
    func value(at reference: ArchiveReference, allowed: [AnyClass]?, foundationObjects: Bool) throws(KeyedArchiveError) -> Any? {
        if reference.isNull { return nil }
        return try convert(unarchiver.decode(reference), allowed: allowed, isElement: false, foundationObjects: foundationObjects)
    }

    /// A field of an archived object, decoded.
    func value(of field: ArchivedValue, allowed: [AnyClass]?, foundationObjects: Bool) throws(KeyedArchiveError) -> Any? {
        if case .reference(let reference) = field, reference.isNull { return nil }
        if case .null = field { return nil }
        return try convert(unarchiver.decode(field), allowed: allowed, isElement: false, foundationObjects: foundationObjects)
    }

    private func allow(_ cls: AnyClass, _ allowed: [AnyClass]?, _ isElement: Bool, _ what: @autoclosure () -> String) throws(KeyedArchiveError) {
        try KeyedArchiveCoding.allow(cls, allowed, isElement: isElement, transformerName: policy.transformerName, what())
    }

    private func convert(_ value: UnarchivedValue, allowed: [AnyClass]?, isElement: Bool, foundationObjects: Bool) throws(KeyedArchiveError) -> Any {
        func elements(_ values: [UnarchivedValue]) throws(KeyedArchiveError) -> [Any] {
            var result: [Any] = []
            result.reserveCapacity(values.count)
            for element in values { result.append(try convert(element, allowed: allowed, isElement: true, foundationObjects: foundationObjects)) }
            return result
        }
        switch value {
        case .null:
            try allow(NSNull.self, allowed, isElement, "an NSNull")
            return NSNull()
        case .bool(let bool):
            try allow(NSNumber.self, allowed, isElement, "an NSNumber")
            return NSNumber(value: bool)
        case .integer(let integer):
            try allow(NSNumber.self, allowed, isElement, "an NSNumber")
            return NSNumber(value: integer)
        case .unsignedInteger(let integer):
            try allow(NSNumber.self, allowed, isElement, "an NSNumber")
            return NSNumber(value: integer)
        case .real(let real):
            try allow(NSNumber.self, allowed, isElement, "an NSNumber")
            return NSNumber(value: real)
        case .string(let string):
            try allow(NSString.self, allowed, isElement, "an NSString")
            return foundationObjects ? NSString(string: string) : string
        case .data(let data):
            try allow(NSData.self, allowed, isElement, "an NSData")
            return foundationObjects ? NSData(data: data) : data
        case .date(let date):
            try allow(NSDate.self, allowed, isElement, "an NSDate")
            return foundationObjects ? NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate) : date
        case .uuid(let uuid):
            try allow(NSUUID.self, allowed, isElement, "an NSUUID")
            return foundationObjects ? uuid as NSUUID : uuid
        case .url(let url):
            try allow(NSURL.self, allowed, isElement, "an NSURL")
            return foundationObjects ? url as NSURL : url
        case .array(let values):
            try allow(NSArray.self, allowed, isElement, "an NSArray")
            let array = try elements(values)
            return foundationObjects ? NSArray(array: array) : array
        case .orderedSet(let values):
            try allow(NSOrderedSet.self, allowed, isElement, "an NSOrderedSet")
            return NSOrderedSet(array: try elements(values))
        case .set(let values):
            try allow(NSSet.self, allowed, isElement, "an NSSet")
            let members = try elements(values)
            if foundationObjects { return NSSet(array: members) }
            return Set(members.map(Self.hashable))
        case .dictionary(let keys, let values):
            try allow(NSDictionary.self, allowed, isElement, "an NSDictionary")
            let keyObjects = try elements(keys)
            let valueObjects = try elements(values)
            var dictionary: [AnyHashable: Any] = [:]
            for (key, value) in zip(keyObjects, valueObjects) { dictionary[Self.hashable(key)] = value }
            return foundationObjects ? NSDictionary(dictionary: dictionary) : dictionary
        case .object(let object):
            return try instantiate(object, allowed: allowed, isElement: isElement)
        }
    }

    /// A decoded value as a set element or dictionary key: collections as their Foundation objects.
    private static func hashable(_ value: Any) -> AnyHashable {
        switch value {
        case let hashable as AnyHashable: return hashable
        case let array as [Any]: return AnyHashable(NSArray(array: array))
        case let dictionary as [AnyHashable: Any]: return AnyHashable(NSDictionary(dictionary: dictionary))
        default: return AnyHashable(String(describing: value))
        }
    }

    // MARK: Objects of an app's classes

    private func instantiate(_ object: ArchivedObject, allowed: [AnyClass]?, isElement: Bool) throws(KeyedArchiveError) -> Any {
        let name = object.className
        guard let cls = resolveClass(name, allowed: allowed) else {
            if let allowed {
                // An allowed class would have been found by its name.
                throw KeyedArchiveCoding.notAllowed(
                    "\(object.label): \(KeyedArchiveCoding.describe(name: name))", allowed, transformerName: policy.transformerName, object: object.reference.index)
            }
            throw KeyedArchiveError(.unknownClass, "\(object.label): no class named \(name) is known (register it with NSKeyedUnarchiver.setClass(_:forClassName:))", object: object.reference.index)
        }
        try allow(cls, allowed, isElement, KeyedArchiveCoding.describe(name: NSStringFromClass(cls)))
        guard !KeyedArchiveCoding.isFoundationClass(cls) else {
            throw KeyedArchiveError(
                .unknownClass,
                "\(object.label): \(name) is one of Foundation's classes that cannot be unarchived on Linux without Foundation's unarchiver (only its value classes can)",
                object: object.reference.index)
        }
        if policy.requiresSecureCoding {
            guard let secure = cls as? NSSecureCoding.Type, secure.supportsSecureCoding else {
                throw KeyedArchiveError(.wrongClass, "\(object.label): \(name) does not support secure coding, which \(policy.transformerName) requires", object: object.reference.index)
            }
        }
        guard let coding = cls as? NSCoding.Type else {
            throw KeyedArchiveError(.wrongClass, "\(object.label): \(name) does not conform to NSCoding", object: object.reference.index)
        }
        return try unarchiver.withObject(object.reference) { (entered) throws(KeyedArchiveError) -> Any in
            let coder = ArchiveObjectCoder(reader: self, object: entered, allowed: allowed)
            let made = coding.init(coder: coder)
            if let failure = coder.failure {
                throw failure as? KeyedArchiveError
                    ?? KeyedArchiveError(.malformed, "\(entered.label): \(name)'s init(coder:) failed: \(failure)", object: entered.reference.index)
            }
            guard let made else {
                throw KeyedArchiveError(.malformed, "\(entered.label): \(name)'s init(coder:) returned nil", object: entered.reference.index)
            }
            return made
        }
    }

    /// The class an archive's class name stands for: `NSKeyedUnarchiver.setClass(_:forClassName:)`,
    /// an allowed class archived under that name (module-qualified, as `NSKeyedArchiver` writes it,
    /// or bare, as an Apple app's `@objc` class is archived), or the class Swift's runtime knows by
    /// that name. Names that are not dotted identifiers are never looked up.
    private func resolveClass(_ name: String, allowed: [AnyClass]?) -> AnyClass? {
        guard Self.isIdentifierPath(name) else { return nil }
        if let mapped = NSKeyedUnarchiver.class(forClassName: name) { return mapped }
        for cls in allowed ?? [] {
            let full = KeyedArchiveCoding.archiveName(of: cls)
            if full == name || NSStringFromClass(cls) == name { return cls }
            if let dot = full.lastIndex(of: "."), full[full.index(after: dot)...] == name { return cls }
        }
        return NSClassFromString(name)
    }

    private static func isIdentifierPath(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 256 else { return false }
        var atStart = true
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "_"):
                atStart = false
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if atStart { return false }
            case UInt8(ascii: "."):
                if atStart { return false }
                atStart = true
            default:
                return false
            }
        }
        return !atStart
    }
}

extension KeyedArchiveCoding {
    /// `a MyApp.Color`, for an archived class name.
    static func describe(name: String) -> String {
        let vowels: Set<Character> = ["A", "E", "I", "O", "U"]
        let an = name.hasPrefix("NS") || name.first.map { vowels.contains($0) } == true
        return (an ? "an " : "a ") + name
    }
}

// MARK: - The coder an app's objects are decoded with

/// An `NSCoder` over one archived object, for the `init?(coder:)` of an app's class: the keyed
/// `decode…(forKey:)` methods read the object's fields through the package's decoder, within its
/// limits, and report a missing or mistyped field with `failWithError(_:)` (the
/// `.setErrorAndReturn` policy) rather than trapping. Unkeyed decoding is not supported.
///
/// Threading: not `Sendable`; lives for one `init?(coder:)` call.
final class ArchiveObjectCoder: NSCoder {
    private let reader: ArchiveReader
    private let object: ArchivedObject
    private let classes: [AnyClass]?
    /// The first failure reported.
    private(set) var failure: Error?

    init(reader: ArchiveReader, object: ArchivedObject, allowed: [AnyClass]?) {
        self.reader = reader
        self.object = object
        self.classes = allowed
        super.init()
    }

    override var allowsKeyedCoding: Bool { true }
    override var requiresSecureCoding: Bool { reader.policy.requiresSecureCoding }
    override var allowedClasses: [AnyClass]? { classes }
    override var decodingFailurePolicy: NSCoder.DecodingFailurePolicy { .setErrorAndReturn }
    override var error: Error? { failure }

    override func failWithError(_ error: Error) {
        if failure == nil { failure = error }
    }

    override func containsValue(forKey key: String) -> Bool { object.value(forKey: key) != nil }

    override func decodeObject(forKey key: String) -> Any? {
        decodeObject(of: classes, forKey: key)
    }

    override func decodeObject(of classes: [AnyClass]?, forKey key: String) -> Any? {
        guard failure == nil, let field = object.value(forKey: key) else { return nil }
        // With secure coding the classes asked for are the ones allowed; without, any class.
        let allowed = reader.policy.requiresSecureCoding ? (classes ?? self.classes) : classes
        do {
            return try reader.value(of: field, allowed: allowed, foundationObjects: true)
        } catch {
            failWithError(error)
            return nil
        }
    }

    override func decodePropertyList(forKey key: String) -> Any? {
        decodeObject(of: KeyedArchiveCoding.plistClasses + [NSArray.self, NSDictionary.self], forKey: key)
    }

    override func decodeBool(forKey key: String) -> Bool {
        scalar(key) { (object, key) throws(KeyedArchiveError) in try object.bool(forKey: key) } ?? false
    }

    override func decodeInteger(forKey key: String) -> Int {
        scalar(key) { (object, key) throws(KeyedArchiveError) in try object.integer(forKey: key) } ?? 0
    }

    override func decodeInt64(forKey key: String) -> Int64 {
        Int64(decodeInteger(forKey: key))
    }

    override func decodeInt32(forKey key: String) -> Int32 {
        let value = decodeInteger(forKey: key)
        guard let narrow = Int32(exactly: value) else {
            failWithError(KeyedArchiveError(.malformed, "\(object.label): \(key) is \(value), too large for decodeInt32(forKey:)", object: object.reference.index))
            return 0
        }
        return narrow
    }

    override func decodeCInt(forKey key: String) -> Int32 {
        decodeInt32(forKey: key)
    }

    override func decodeDouble(forKey key: String) -> Double {
        scalar(key) { (object, key) throws(KeyedArchiveError) in try object.double(forKey: key) } ?? 0
    }

    override func decodeFloat(forKey key: String) -> Float {
        Float(decodeDouble(forKey: key))
    }

    override func withDecodedUnsafeBufferPointer<ResultType>(
        forKey key: String, body: (UnsafeBufferPointer<UInt8>?) throws -> ResultType
    ) rethrows -> ResultType {
        guard let data = bytes(key) else { return try body(nil) }
        return try data.withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
    }

    override func withDecodedUnsafeBytes<ResultType>(
        forKey key: String, body: (UnsafeRawBufferPointer?) throws -> ResultType
    ) rethrows -> ResultType {
        guard let data = bytes(key) else { return try body(nil) }
        return try data.withUnsafeBytes { try body($0) }
    }

    override func decodeObject() -> Any? {
        unkeyed()
        return nil
    }

    override func decodeData() -> Data? {
        unkeyed()
        return nil
    }

    override func decodePropertyList() -> Any? {
        unkeyed()
        return nil
    }

    override func decodeValue(ofObjCType type: UnsafePointer<Int8>, at data: UnsafeMutableRawPointer) {
        unkeyed()
    }

    private func unkeyed() {
        failWithError(KeyedArchiveError(.malformed, "\(object.label): unkeyed decoding is not supported in a keyed archive", object: object.reference.index))
    }

    private func scalar<T>(_ key: String, _ read: (ArchivedObject, String) throws(KeyedArchiveError) -> T?) -> T? {
        guard failure == nil else { return nil }
        do {
            return try read(object, key)
        } catch {
            failWithError(error)
            return nil
        }
    }

    private func bytes(_ key: String) -> Data? {
        scalar(key) { (object, key) throws(KeyedArchiveError) in try object.data(forKey: key) }
    }
}
