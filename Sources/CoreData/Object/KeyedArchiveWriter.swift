import CoreDataArchive
import Foundation

/// Writes `NSKeyedArchiver` archives (Formats/keyed-archive.md §4) of values and of an app's
/// `NSCoding` objects, in the layout Apple's archiver uses: a binary property list whose root
/// dictionary holds `$version` (100000), `$archiver` (`NSKeyedArchiver`), `$top` (`root` → the
/// value) and `$objects`, where strings, numbers and data are plain entries and every other object
/// is a dictionary of its fields with a `$class` reference to `{$classname, $classes}`.
///
/// Foundation's `NSKeyedArchiver` on Linux is not used: it takes time quadratic in the number of
/// arrays and dictionaries of a value (its object table hashes `NSArray` by count, so they all
/// collide: 1,000 small arrays take seconds), it merges `1` and `true` into one entry, and it traps
/// on an object it cannot archive instead of throwing.
///
/// Threading: not `Sendable`; one per archive.
final class KeyedArchiveWriter {
    private let policy: KeyedArchiveCoding.Policy
    private var objects: [ArchivePlistValue] = [.string("$null")]
    /// Plain entries (strings, numbers, data) written once, as Apple's archiver writes a string once.
    private var plainUIDs: [ArchivePlistValue: Int] = [:]
    /// `$classes` entries by class chain.
    private var classUIDs: [[String]: Int] = [:]
    /// An app's objects by identity: one entry however often they are referred to.
    private var instanceUIDs: [ObjectIdentifier: Int] = [:]

    init(policy: KeyedArchiveCoding.Policy) {
        self.policy = policy
    }

    /// The archive of `value` under the root key `root`.
    /// - Throws: ``KeyedArchiveError`` (`.wrongClass`) naming the first object that is not of an
    ///   allowed class or cannot be archived; (`.tooDeep`) past ``KeyedUnarchiver/maximumDepth``.
    func archive(_ value: Any) throws(KeyedArchiveError) -> Data {
        let root = try encode(value, allowed: policy.allowedClasses, isElement: false, depth: 0)
        let top = ArchivePlistValue.dictionary([
            (.string("$version"), .integer(KeyedArchive.supportedVersion)),
            (.string("$archiver"), .string(KeyedArchive.archiverName)),
            (.string("$top"), .dictionary([(.string("root"), root)])),
            (.string("$objects"), .array(objects)),
        ])
        return BinaryPropertyListWriter.write(top)
    }

    // MARK: Values

    /// `value` written to `$objects`, its reference returned. `allowed` nil: any archivable class
    /// (the fields of an app's object, whose decoder names the classes it accepts).
    func encode(_ value: Any, allowed: [AnyClass]?, isElement: Bool, depth: Int) throws(KeyedArchiveError) -> ArchivePlistValue {
        // The reader stops at this depth, so nothing deeper is written.
        guard depth < KeyedUnarchiver.maximumDepth else {
            throw KeyedArchiveError(.tooDeep, "the value nests deeper than \(KeyedUnarchiver.maximumDepth) objects (does a collection contain itself?)")
        }
        func allow(_ cls: AnyClass) throws(KeyedArchiveError) {
            try KeyedArchiveCoding.allow(cls, allowed, isElement: isElement, transformerName: policy.transformerName, KeyedArchiveCoding.describe(value, as: cls))
        }
        guard let value = KeyedArchiveCoding.unwrapped(value), !(value is NSNull) else {
            // nil inside a collection is NSNull, as Swift's bridging makes it.
            try allow(NSNull.self)
            return object([], chain: ["NSNull", "NSObject"])
        }
        if value is Decimal || value is NSDecimalNumber {
            throw KeyedArchiveError(.wrongClass, "\(KeyedArchiveCoding.describe(value)) cannot be archived: NSDecimalNumber is not supported on Linux")
        }
        if let string = value as? String {
            try allow(NSString.self)
            return plain(.string(string))
        }
        if let data = value as? Data {
            try allow(NSData.self)
            return plain(.data(data))
        }
        if let date = value as? Date {
            try allow(NSDate.self)
            return object([("NS.time", .real(date.timeIntervalSinceReferenceDate))], chain: ["NSDate", "NSObject"])
        }
        if let url = value as? URL {
            try allow(NSURL.self)
            return try encodeURL(url, depth: depth)
        }
        if let uuid = value as? UUID {
            try allow(NSUUID.self)
            let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
            return object([("NS.uuidbytes", .data(bytes))], chain: ["NSUUID", "NSObject"])
        }
        if let number = value as? NSNumber {
            // Bool, every integer and floating-point type, and NSNumber itself.
            try allow(NSNumber.self)
            return plain(Self.plistNumber(number))
        }
        if let dictionary = value as? [AnyHashable: Any] {
            try allow(NSDictionary.self)
            var keys: [ArchivePlistValue] = []
            var values: [ArchivePlistValue] = []
            keys.reserveCapacity(dictionary.count)
            values.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                keys.append(try encode(key.base, allowed: allowed, isElement: true, depth: depth + 1))
                values.append(try encode(element, allowed: allowed, isElement: true, depth: depth + 1))
            }
            return object([("NS.keys", .array(keys)), ("NS.objects", .array(values))], chain: ["NSDictionary", "NSObject"])
        }
        if let set = value as? Set<AnyHashable> {
            try allow(NSSet.self)
            return try collection(set.map(\.base), chain: ["NSSet", "NSObject"], allowed: allowed, depth: depth)
        }
        if let ordered = value as? NSOrderedSet {
            try allow(NSOrderedSet.self)
            return try collection(ordered.array, chain: ["NSOrderedSet", "NSObject"], allowed: allowed, depth: depth)
        }
        if let array = value as? [Any] {
            try allow(NSArray.self)
            return try collection(array, chain: ["NSArray", "NSObject"], allowed: allowed, depth: depth)
        }
        guard Swift.type(of: value) is AnyClass, let instance = value as? NSObject else {
            throw KeyedArchiveError(
                .wrongClass,
                "\(KeyedArchiveCoding.describe(value)) is not an object and not a value an archive holds (a string, number, date, data, URL, UUID, array, dictionary or set)")
        }
        try allow(Swift.type(of: instance))
        return try encodeInstance(instance, depth: depth)
    }

    private func collection(_ elements: [Any], chain: [String], allowed: [AnyClass]?, depth: Int) throws(KeyedArchiveError) -> ArchivePlistValue {
        var references: [ArchivePlistValue] = []
        references.reserveCapacity(elements.count)
        for element in elements { references.append(try encode(element, allowed: allowed, isElement: true, depth: depth + 1)) }
        return object([("NS.objects", .array(references))], chain: chain)
    }

    /// `NSURL`: `NS.relative` against `NS.base` (`$null`, or the base `NSURL`).
    private func encodeURL(_ url: URL, depth: Int) throws(KeyedArchiveError) -> ArchivePlistValue {
        let base: ArchivePlistValue
        if let baseURL = url.baseURL {
            guard depth + 1 < KeyedUnarchiver.maximumDepth else { throw KeyedArchiveError(.tooDeep, "a URL's bases nest too deep") }
            base = try encodeURL(baseURL, depth: depth + 1)
        } else {
            base = .uid(0)
        }
        return object([("NS.base", base), ("NS.relative", plain(.string(url.relativeString)))], chain: ["NSURL", "NSObject"])
    }

    /// A number as the plain entry Apple's archiver writes: a Boolean, an integer (unsigned past
    /// `Int64.max`), or a real.
    static func plistNumber(_ number: NSNumber) -> ArchivePlistValue {
        if NSStringFromClass(Swift.type(of: number)) == "__NSCFBoolean" { return .bool(number.boolValue) }
        switch String(cString: number.objCType) {
        case "f", "d":
            return .real(number.doubleValue)
        case "Q", "L", "I", "S", "C":
            let unsigned = number.uint64Value
            return unsigned > UInt64(Int64.max) ? .unsignedInteger(unsigned) : .integer(Int64(unsigned))
        default:
            return .integer(number.int64Value)
        }
    }

    // MARK: An app's objects

    private func encodeInstance(_ instance: NSObject, depth: Int) throws(KeyedArchiveError) -> ArchivePlistValue {
        if let known = instanceUIDs[ObjectIdentifier(instance)] { return .uid(UInt64(known)) }
        let cls: AnyClass = Swift.type(of: instance)
        let name = KeyedArchiveCoding.archiveName(of: cls)
        if KeyedArchiveCoding.isFoundationClass(cls) {
            throw KeyedArchiveError(.wrongClass, "\(KeyedArchiveCoding.describe(name: name)) cannot be archived: of Foundation's classes only the value classes are supported on Linux")
        }
        if policy.requiresSecureCoding {
            guard let secure = cls as? NSSecureCoding.Type, secure.supportsSecureCoding else {
                throw KeyedArchiveError(
                    .wrongClass,
                    "\(KeyedArchiveCoding.describe(name: name)) does not support secure coding (NSSecureCoding with supportsSecureCoding true), which \(policy.transformerName) requires")
            }
        }
        guard let coding = instance as? NSCoding else {
            throw KeyedArchiveError(.wrongClass, "\(KeyedArchiveCoding.describe(name: name)) does not conform to NSCoding")
        }
        // The entry is taken before the fields are written, so the object's own references to
        // itself (or to objects referring back) find it.
        let uid = objects.count
        objects.append(.string("$null"))
        instanceUIDs[ObjectIdentifier(instance)] = uid
        let encoder = ArchiveObjectEncoder(writer: self, depth: depth + 1, requiresSecureCoding: policy.requiresSecureCoding)
        coding.encode(with: encoder)
        if let failure = encoder.failure { throw failure }
        var chain: [String] = []
        var current: AnyClass? = cls
        while let link = current {
            chain.append(KeyedArchiveCoding.archiveName(of: link))
            current = _getSuperclass(link)
        }
        objects[uid] = entry(encoder.fields, chain: chain)
        return .uid(UInt64(uid))
    }

    // MARK: Entries

    private func plain(_ value: ArchivePlistValue) -> ArchivePlistValue {
        if let known = plainUIDs[value] { return .uid(UInt64(known)) }
        objects.append(value)
        plainUIDs[value] = objects.count - 1
        return .uid(UInt64(objects.count - 1))
    }

    private func object(_ fields: [(String, ArchivePlistValue)], chain: [String]) -> ArchivePlistValue {
        objects.append(entry(fields, chain: chain))
        return .uid(UInt64(objects.count - 1))
    }

    private func entry(_ fields: [(String, ArchivePlistValue)], chain: [String]) -> ArchivePlistValue {
        .dictionary(fields.map { (.string($0.0), $0.1) } + [(.string("$class"), classReference(chain))])
    }

    private func classReference(_ chain: [String]) -> ArchivePlistValue {
        if let known = classUIDs[chain] { return .uid(UInt64(known)) }
        objects.append(.dictionary([
            (.string("$classname"), .string(chain[0])),
            (.string("$classes"), .array(chain.map(ArchivePlistValue.string))),
        ]))
        classUIDs[chain] = objects.count - 1
        return .uid(UInt64(objects.count - 1))
    }
}

// MARK: - The coder an app's objects are encoded with

/// An `NSCoder` collecting one object's fields for ``KeyedArchiveWriter``: the keyed
/// `encode(_:forKey:)` methods. Objects go through the writer (same checks, same limits);
/// a failure is kept and thrown once `encode(with:)` returns. Unkeyed coding is not supported.
///
/// Threading: not `Sendable`; lives for one `encode(with:)` call.
final class ArchiveObjectEncoder: NSCoder {
    private let writer: KeyedArchiveWriter
    private let depth: Int
    private let secure: Bool
    private(set) var fields: [(String, ArchivePlistValue)] = []
    private(set) var failure: KeyedArchiveError?

    init(writer: KeyedArchiveWriter, depth: Int, requiresSecureCoding: Bool) {
        self.writer = writer
        self.depth = depth
        self.secure = requiresSecureCoding
        super.init()
    }

    override var allowsKeyedCoding: Bool { true }
    override var requiresSecureCoding: Bool { secure }

    override func encode(_ objv: Any?, forKey key: String) {
        guard failure == nil else { return }
        guard let objv, KeyedArchiveCoding.unwrapped(objv) != nil else {
            fields.append((key, .uid(0)))
            return
        }
        do {
            fields.append((key, try writer.encode(objv, allowed: nil, isElement: false, depth: depth)))
        } catch {
            failure = error
        }
    }

    override func encodeConditionalObject(_ objv: Any?, forKey key: String) {
        encode(objv, forKey: key)
    }

    override func encode(_ boolv: Bool, forKey key: String) { fields.append((key, .bool(boolv))) }
    override func encode(_ intv: Int, forKey key: String) { fields.append((key, .integer(Int64(intv)))) }
    override func encode(_ intv: Int32, forKey key: String) { fields.append((key, .integer(Int64(intv)))) }
    override func encode(_ intv: Int64, forKey key: String) { fields.append((key, .integer(intv))) }
    override func encode(_ realv: Float, forKey key: String) { fields.append((key, .real(Double(realv)))) }
    override func encode(_ realv: Double, forKey key: String) { fields.append((key, .real(realv))) }

    override func encodeBytes(_ bytesp: UnsafePointer<UInt8>?, length lenv: Int, forKey key: String) {
        let bytes = bytesp.map { Data(bytes: $0, count: lenv) } ?? Data()
        fields.append((key, .data(bytes)))
    }

    override func encode(_ object: Any?) { unkeyed() }
    override func encode(_ data: Data) { unkeyed() }
    override func encodeConditionalObject(_ object: Any?) { unkeyed() }
    override func encodeBytes(_ byteaddr: UnsafeRawPointer?, length: Int) { unkeyed() }
    override func encodeValue(ofObjCType type: UnsafePointer<Int8>, at addr: UnsafeRawPointer) { unkeyed() }

    private func unkeyed() {
        if failure == nil { failure = KeyedArchiveError(.malformed, "unkeyed encoding is not supported in a keyed archive") }
    }
}

// MARK: - Binary property lists

/// A property list value to write; containers hold their elements (the writer numbers them).
indirect enum ArchivePlistValue: Hashable {
    case string(String)
    case integer(Int64)
    case unsignedInteger(UInt64)
    case real(Double)
    case bool(Bool)
    case data(Data)
    case uid(UInt64)
    case array([ArchivePlistValue])
    case dictionary([(ArchivePlistValue, ArchivePlistValue)])

    static func == (lhs: ArchivePlistValue, rhs: ArchivePlistValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.unsignedInteger(let a), .unsignedInteger(let b)): return a == b
        case (.real(let a), .real(let b)): return a.bitPattern == b.bitPattern
        case (.bool(let a), .bool(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.uid(let a), .uid(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)): return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let value): hasher.combine(0); hasher.combine(value)
        case .integer(let value): hasher.combine(1); hasher.combine(value)
        case .unsignedInteger(let value): hasher.combine(2); hasher.combine(value)
        case .real(let value): hasher.combine(3); hasher.combine(value.bitPattern)
        case .bool(let value): hasher.combine(4); hasher.combine(value)
        case .data(let value): hasher.combine(5); hasher.combine(value)
        case .uid(let value): hasher.combine(6); hasher.combine(value)
        case .array(let value): hasher.combine(7); hasher.combine(value)
        case .dictionary(let pairs):
            hasher.combine(8)
            for (key, value) in pairs {
                hasher.combine(key)
                hasher.combine(value)
            }
        }
    }
}

/// Writes a binary property list (`bplist00`) in CF's format: the objects, an offset table, and
/// the 32-byte trailer. Strings, numbers, data and UIDs are written once each; containers refer to
/// their elements by object number.
enum BinaryPropertyListWriter {
    static func write(_ top: ArchivePlistValue) -> Data {
        var numbering = Numbering()
        let topNumber = numbering.number(top)
        let objects = numbering.objects
        let referenceSize = byteCount(for: UInt64(max(objects.count - 1, 0)))
        var body: [UInt8] = Array("bplist00".utf8)
        var offsets: [UInt64] = []
        offsets.reserveCapacity(objects.count)
        for object in objects {
            offsets.append(UInt64(body.count))
            append(object, referenceSize: referenceSize, to: &body)
        }
        let offsetTableOffset = UInt64(body.count)
        let offsetSize = byteCount(for: offsets.last ?? 0)
        for offset in offsets { appendBigEndian(offset, size: offsetSize, to: &body) }
        body += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        appendBigEndian(UInt64(objects.count), size: 8, to: &body)
        appendBigEndian(UInt64(topNumber), size: 8, to: &body)
        appendBigEndian(offsetTableOffset, size: 8, to: &body)
        return Data(body)
    }

    /// One object of the table: a scalar, or a container of object numbers.
    private enum Flat {
        case scalar(ArchivePlistValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    private struct Numbering {
        var objects: [Flat] = []
        var scalars: [ArchivePlistValue: Int] = [:]

        mutating func number(_ value: ArchivePlistValue) -> Int {
            switch value {
            case .array(let elements):
                let numbers = elements.map { number($0) }
                objects.append(.array(numbers))
                return objects.count - 1
            case .dictionary(let pairs):
                let keys = pairs.map { number($0.0) }
                let values = pairs.map { number($0.1) }
                objects.append(.dictionary(keys: keys, values: values))
                return objects.count - 1
            default:
                if let known = scalars[value] { return known }
                objects.append(.scalar(value))
                scalars[value] = objects.count - 1
                return objects.count - 1
            }
        }
    }

    private static func append(_ object: Flat, referenceSize: Int, to body: inout [UInt8]) {
        switch object {
        case .array(let numbers):
            appendMarker(0xA, count: numbers.count, to: &body)
            for number in numbers { appendBigEndian(UInt64(number), size: referenceSize, to: &body) }
        case .dictionary(let keys, let values):
            appendMarker(0xD, count: keys.count, to: &body)
            for number in keys { appendBigEndian(UInt64(number), size: referenceSize, to: &body) }
            for number in values { appendBigEndian(UInt64(number), size: referenceSize, to: &body) }
        case .scalar(let value):
            switch value {
            case .bool(let bool):
                body.append(bool ? 0x09 : 0x08)
            case .integer(let integer):
                appendInteger(integer, to: &body)
            case .unsignedInteger(let integer):
                // Past Int64.max: a 16-byte integer, as CF writes one.
                body.append(0x14)
                appendBigEndian(0, size: 8, to: &body)
                appendBigEndian(integer, size: 8, to: &body)
            case .real(let real):
                body.append(0x23)
                appendBigEndian(real.bitPattern, size: 8, to: &body)
            case .data(let data):
                appendMarker(0x4, count: data.count, to: &body)
                body += data
            case .string(let string):
                if string.utf8.allSatisfy({ $0 < 0x80 }) {
                    appendMarker(0x5, count: string.utf8.count, to: &body)
                    body += string.utf8
                } else {
                    let units = Array(string.utf16)
                    appendMarker(0x6, count: units.count, to: &body)
                    for unit in units { appendBigEndian(UInt64(unit), size: 2, to: &body) }
                }
            case .uid(let uid):
                let size = byteCount(for: uid)
                body.append(0x80 | UInt8(size - 1))
                appendBigEndian(uid, size: size, to: &body)
            case .array, .dictionary:
                preconditionFailure("containers are numbered, not scalars")
            }
        }
    }

    /// An integer object: 1, 2 or 4 bytes (read as unsigned) when it fits, 8 (signed) otherwise.
    private static func appendInteger(_ integer: Int64, to body: inout [UInt8]) {
        let size = integer < 0 ? 8 : byteCount(for: UInt64(integer))
        body.append(0x10 | UInt8(size.trailingZeroBitCount))
        appendBigEndian(UInt64(bitPattern: integer), size: size, to: &body)
    }

    /// A type nibble with a count: in the low nibble below 15, else 0xF and an integer object.
    private static func appendMarker(_ type: UInt8, count: Int, to body: inout [UInt8]) {
        if count < 15 {
            body.append(type << 4 | UInt8(count))
        } else {
            body.append(type << 4 | 0xF)
            appendInteger(Int64(count), to: &body)
        }
    }

    /// 1, 2, 4 or 8: the fewest bytes holding `value`.
    private static func byteCount(for value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }

    private static func appendBigEndian(_ value: UInt64, size: Int, to body: inout [UInt8]) {
        for index in stride(from: size - 1, through: 0, by: -1) { body.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}
