import Foundation

/// Decodes the objects of a ``KeyedArchive`` into Swift values, within bounds (Formats/keyed-archive.md §5).
///
/// Three limits keep hostile archives cheap: nesting deeper than ``maximumDepth`` objects throws,
/// an object met again on the current decoding path throws "reference cycle at object N", and
/// every object visited counts against ``objectBudget`` — shared references are expanded once per
/// use, so a DAG in which each array refers twice to the one before would otherwise take 2ⁿ
/// steps.
///
/// ``decode(_:)`` knows Foundation's value classes (``UnarchivedValue`` lists them) and returns
/// other objects as ``UnarchivedValue/object(_:)``. Per-class decoders (the expression decoder, a
/// compiled-model decoder) read fields from the ``ArchivedObject`` and descend through
/// ``withObject(_:_:)``, ``decode(_:)`` and ``elements(of:)`` so that the same limits apply to
/// their walks.
///
/// Threading: not `Sendable`: it keeps the current path and the count. Use one per thread, or one
/// per decoding task. An error leaves it usable (the path unwinds), with the count kept.
public final class KeyedUnarchiver {
    /// The deepest nesting of objects decoded inside one another, 256: far above any real archive
    /// (a compiled model nests about 6 deep), low enough that the bounded recursion of decoding,
    /// and of walking the result, stays well inside a thread's stack.
    /// Formats/keyed-archive.md §5; exceeding it throws "nesting deeper than 256 objects".
    public static let maximumDepth = 256

    /// The default ``objectBudget``, 100,000 object visits: a mapping model or compiled model
    /// decodes in hundreds to a few thousand.
    /// Formats/keyed-archive.md §5; exceeding it throws "more than N objects decoded".
    public static let defaultObjectBudget = 100_000

    /// The archive being decoded.
    public let archive: KeyedArchive
    /// The most object visits this unarchiver makes over its lifetime.
    public let objectBudget: Int
    /// Object visits made so far.
    public private(set) var visitedObjects = 0

    private var path: [Int] = []
    private var onPath: Set<Int> = []

    /// An unarchiver of `archive` that visits at most `objectBudget` objects.
    public init(archive: KeyedArchive, objectBudget: Int = KeyedUnarchiver.defaultObjectBudget) {
        self.archive = archive
        self.objectBudget = objectBudget
    }

    /// How many objects are being decoded inside one another right now.
    public var depth: Int { path.count }

    // MARK: - Walking

    /// Calls `body` with the archived object at `reference`, counting it against the limits: it is
    /// pushed on the decoding path for the duration of `body`, so nested calls see it.
    ///
    /// - Throws: ``KeyedArchiveError``: `.referenceCycle` if `reference` is already on the path,
    ///   `.tooDeep` past ``maximumDepth``, `.budgetExceeded` past ``objectBudget``, `.malformed` if
    ///   the entry is not an archived object, and whatever `body` throws.
    public func withObject<T>(
        _ reference: ArchiveReference, _ body: (ArchivedObject) throws(KeyedArchiveError) -> T
    ) throws(KeyedArchiveError) -> T {
        try enter(reference)
        defer { leave(reference) }
        return try body(archive.object(at: reference))
    }

    /// Calls `body` with the entry at `reference` under the same bookkeeping as ``withObject(_:_:)``.
    public func withEntry<T>(
        _ reference: ArchiveReference, _ body: (ArchiveEntry) throws(KeyedArchiveError) -> T
    ) throws(KeyedArchiveError) -> T {
        try enter(reference)
        defer { leave(reference) }
        return try body(archive.entry(at: reference))
    }

    private func enter(_ reference: ArchiveReference) throws(KeyedArchiveError) {
        guard !onPath.contains(reference.index) else {
            throw KeyedArchiveError(.referenceCycle, "reference cycle at \(reference): it contains itself", object: reference.index)
        }
        guard path.count < Self.maximumDepth else {
            throw KeyedArchiveError(.tooDeep, "nesting deeper than \(Self.maximumDepth) objects at \(reference) (maximumDepth)", object: reference.index)
        }
        guard visitedObjects < objectBudget else {
            throw KeyedArchiveError(
                .budgetExceeded,
                "more than \(objectBudget) objects decoded at \(reference); shared references are expanded once per use (objectBudget)",
                object: reference.index)
        }
        visitedObjects += 1
        path.append(reference.index)
        onPath.insert(reference.index)
    }

    private func leave(_ reference: ArchiveReference) {
        path.removeLast()
        onPath.remove(reference.index)
    }

    // MARK: - Generic decoding

    /// The value at `reference`, with Foundation's value classes decoded and other objects left as
    /// ``UnarchivedValue/object(_:)``.
    /// - Throws: ``KeyedArchiveError`` for the limits (see ``withObject(_:_:)``) and malformed
    ///   value objects (an `NSDictionary` whose key and value counts differ, an `NSUUID` that is not
    ///   16 bytes, …).
    public func decode(_ reference: ArchiveReference) throws(KeyedArchiveError) -> UnarchivedValue {
        if reference.isNull { return .null }
        return try withEntry(reference) { (entry) throws(KeyedArchiveError) -> UnarchivedValue in
            switch entry {
            case .null: return .null
            case .value(let value): return try decode(value)
            case .object(let object): return try decodeBuiltIn(object)
            }
        }
    }

    /// A field value decoded: inline values as they are, references through ``decode(_:)``.
    public func decode(_ value: ArchivedValue) throws(KeyedArchiveError) -> UnarchivedValue {
        switch value {
        case .null: return .null
        case .bool(let bool): return .bool(bool)
        case .integer(let integer): return .integer(integer)
        case .unsignedInteger(let integer): return .unsignedInteger(integer)
        case .real(let real): return .real(real)
        case .date(let date): return .date(date)
        case .data(let data): return .data(data)
        case .string(let string): return .string(string)
        case .reference(let reference): return try decode(reference)
        case .array(let elements):
            var values: [UnarchivedValue] = []
            values.reserveCapacity(elements.count)
            for element in elements { values.append(try decode(element)) }
            return .array(values)
        }
    }

    /// The field `key` of `object`, decoded; nil when the object has no such field.
    public func decode(forKey key: String, in object: ArchivedObject) throws(KeyedArchiveError) -> UnarchivedValue? {
        guard let value = object.value(forKey: key) else { return nil }
        return try decode(value)
    }

    /// The element references of a collection object (`NSArray`, `NSSet`, `NSOrderedSet` and their
    /// mutable kinds: `NS.objects`), for callers that decode the elements with their own code.
    /// `$null` elements are kept.
    /// - Throws: ``KeyedArchiveError`` (`.wrongClass`) naming the class found when the object is
    ///   not such a collection.
    public func elements(of object: ArchivedObject) throws(KeyedArchiveError) -> [ArchiveReference] {
        guard Self.collectionClasses.contains(where: object.isKind(of:)) else {
            throw KeyedArchiveError(
                .wrongClass,
                "\(object.reference) is \(KeyedArchive.withArticle(object.className)), expected an NSArray, NSSet or NSOrderedSet",
                object: object.reference.index)
        }
        return try object.references(forKey: "NS.objects")
    }

    static let collectionClasses = ["NSArray", "NSSet", "NSOrderedSet"]

    private func decodeBuiltIn(_ object: ArchivedObject) throws(KeyedArchiveError) -> UnarchivedValue {
        // The first class of the chain this decoder knows: NSMutableArray decodes as NSArray.
        for name in object.classChain {
            switch name {
            case "NSString":
                guard let string = try object.string(forKey: "NS.string") else { throw missing("NS.string", object) }
                return .string(string)
            case "NSArray":
                return .array(try decodeAll(object.references(forKey: "NS.objects")))
            case "NSSet":
                return .set(try decodeAll(object.references(forKey: "NS.objects")))
            case "NSOrderedSet":
                return .orderedSet(try decodeAll(object.references(forKey: "NS.objects")))
            case "NSDictionary":
                let keys = try object.references(forKey: "NS.keys")
                let values = try object.references(forKey: "NS.objects")
                guard keys.count == values.count else {
                    throw KeyedArchiveError(.malformed, "\(object.label) has \(keys.count) NS.keys but \(values.count) NS.objects", object: object.reference.index)
                }
                return .dictionary(keys: try decodeAll(keys), values: try decodeAll(values))
            case "NSData":
                if let data = try object.data(forKey: "NS.data") { return .data(data) }
                if let data = try object.data(forKey: "NS.bytes") { return .data(data) }
                throw missing("NS.data", object)
            case "NSDate":
                guard let time = try object.double(forKey: "NS.time") else { throw missing("NS.time", object) }
                return .date(Date(timeIntervalSinceReferenceDate: time))
            case "NSUUID":
                guard let bytes = try object.data(forKey: "NS.uuidbytes") else { throw missing("NS.uuidbytes", object) }
                guard bytes.count == 16 else {
                    throw KeyedArchiveError(.malformed, "\(object.label): NS.uuidbytes holds \(bytes.count) bytes, not 16", object: object.reference.index)
                }
                let b = [UInt8](bytes)
                return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
            case "NSURL":
                return try decodeURL(object)
            case "NSNull":
                return .null
            default:
                continue
            }
        }
        return .object(object)
    }

    private func decodeAll(_ references: [ArchiveReference]) throws(KeyedArchiveError) -> [UnarchivedValue] {
        var values: [UnarchivedValue] = []
        values.reserveCapacity(references.count)
        for reference in references { values.append(try decode(reference)) }
        return values
    }

    private func decodeURL(_ object: ArchivedObject) throws(KeyedArchiveError) -> UnarchivedValue {
        guard let relative = try object.string(forKey: "NS.relative") else { throw missing("NS.relative", object) }
        var base: URL?
        if let baseReference = try object.reference(forKey: "NS.base") {
            switch try decode(baseReference) {
            case .url(let url): base = url
            case .null: base = nil
            default:
                throw KeyedArchiveError(.wrongClass, "\(object.label): NS.base is not an NSURL", object: object.reference.index)
            }
        }
        guard let url = URL(string: relative, relativeTo: base) else {
            throw KeyedArchiveError(.malformed, "\(object.label): NS.relative is not a URL", object: object.reference.index)
        }
        return .url(url)
    }

    private func missing(_ key: String, _ object: ArchivedObject) -> KeyedArchiveError {
        KeyedArchiveError(.malformed, "\(object.label) has no \(key)", object: object.reference.index)
    }
}
