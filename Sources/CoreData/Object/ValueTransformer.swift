import Foundation

/// The name of a registered value transformer (Apple's `NSValueTransformerName`).
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    /// The name as a string (a model's `valueTransformerName`).
    public var rawValue: String
    /// The name `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The name `rawValue`.
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

extension NSValueTransformerName {
    /// `"NSSecureUnarchiveFromData"`: ``NSSecureUnarchiveFromDataTransformer``, which turns data
    /// into an object by unarchiving it with secure coding (only the classes of
    /// ``NSSecureUnarchiveFromDataTransformer/allowedTopLevelClasses``), and an object into data by
    /// archiving it with `NSKeyedArchiver`. The transformer of a transformable attribute that names none.
    public static let secureUnarchiveFromDataTransformerName = NSValueTransformerName("NSSecureUnarchiveFromData")
    /// `"NSKeyedUnarchiveFromData"`: unarchives data with `NSKeyedUnarchiver` without secure
    /// coding (any `NSCoding` class); the reverse archives with `NSKeyedArchiver`. Deprecated by
    /// Apple in favour of ``secureUnarchiveFromDataTransformerName``.
    public static let keyedUnarchiveFromDataTransformerName = NSValueTransformerName("NSKeyedUnarchiveFromData")
    /// `"NSUnarchiveFromData"`: Apple's transformer of the old, non-keyed `NSArchiver` format.
    /// Declared for source compatibility; nothing is registered under it, as Foundation on Linux
    /// has no `NSArchiver` (see the deviations article).
    public static let unarchiveFromDataTransformerName = NSValueTransformerName("NSUnarchiveFromData")
    /// `"NSNegateBoolean"`: a Boolean `NSNumber` to its negation, both ways.
    public static let negateBooleanTransformerName = NSValueTransformerName("NSNegateBoolean")
    /// `"NSIsNil"`: whether the value is `nil` (or `NSNull`), as a Boolean `NSNumber`; one way.
    public static let isNilTransformerName = NSValueTransformerName("NSIsNil")
    /// `"NSIsNotNil"`: whether the value is not `nil` (nor `NSNull`), as a Boolean `NSNumber`; one way.
    public static let isNotNilTransformerName = NSValueTransformerName("NSIsNotNil")
}

/// Converts a transformable attribute's value to the `Data` a store keeps, and back.
///
/// Foundation on Linux has no `ValueTransformer`; this is Apple's API for what Core Data uses:
/// subclass it, override ``transformedValue(_:)`` and ``reverseTransformedValue(_:)``, and register
/// an instance under the name the model's `valueTransformerName` gives. A custom transformer turns
/// the attribute's value into `Data` forwards and back in reverse, as on Apple.
///
/// Apple's named transformers are registered from the start: ``NSSecureUnarchiveFromDataTransformer``
/// under `NSSecureUnarchiveFromData` (the transformer of a transformable attribute that names
/// none), `NSKeyedUnarchiveFromData`, `NSNegateBoolean`, `NSIsNil` and `NSIsNotNil`. The two
/// unarchiving ones turn data into objects forwards, so Core Data uses them in reverse to store a
/// value, as Apple's does; so does a subclass of ``NSSecureUnarchiveFromDataTransformer``
/// registered under a name of its own.
///
/// Threading: the registry is guarded by a lock; transformers must be safe to call from any context's queue.
open class ValueTransformer: NSObject {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var registry: [NSValueTransformerName: ValueTransformer] = builtInTransformers()

    /// A transformer; register it with ``setValueTransformer(_:forName:)``.
    public override init() { super.init() }

    /// The transformer registered under `name`, or `nil`.
    open class func valueTransformer(forName name: NSValueTransformerName) -> ValueTransformer? {
        registered(name)
    }

    /// Registers `transformer` under `name` (or removes the name's transformer for `nil`).
    open class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        lock.lock()
        defer { lock.unlock() }
        registry[name] = transformer
    }

    /// The names of the registered transformers, Apple's built-in ones included.
    open class func valueTransformerNames() -> [NSValueTransformerName] {
        lock.lock()
        defer { lock.unlock() }
        return Array(registry.keys)
    }

    static func registered(_ name: NSValueTransformerName) -> ValueTransformer? {
        lock.lock()
        defer { lock.unlock() }
        return registry[name]
    }

    /// What Apple registers before any code runs.
    private static func builtInTransformers() -> [NSValueTransformerName: ValueTransformer] {
        [
            .secureUnarchiveFromDataTransformerName: NSSecureUnarchiveFromDataTransformer(),
            .keyedUnarchiveFromDataTransformerName: KeyedUnarchiveFromDataTransformer(),
            .negateBooleanTransformerName: NegateBooleanTransformer(),
            .isNilTransformerName: IsNilTransformer(negated: false),
            .isNotNilTransformerName: IsNilTransformer(negated: true),
        ]
    }

    /// The class of transformed values (`Data` for Core Data's purposes).
    open class func transformedValueClass() -> AnyClass { NSData.self }
    /// Whether ``reverseTransformedValue(_:)`` is supported.
    open class func allowsReverseTransformation() -> Bool { true }
    /// Turns a value into its stored form.
    open func transformedValue(_ value: Any?) -> Any? { value }
    /// Turns a stored form back into the value.
    open func reverseTransformedValue(_ value: Any?) -> Any? { value }
}

/// What makes `ValueTransformer(forName:)` hand out the registered transformer itself, as Apple's
/// does; not meant to be adopted by other types.
public protocol _ValueTransformerLookup {}

extension ValueTransformer: _ValueTransformerLookup {}

extension _ValueTransformerLookup {
    /// The transformer registered under `name` (Apple's `ValueTransformer(forName:)`), or `nil`
    /// when none is, or when the one registered is not of the class this is called on.
    public init?(forName name: NSValueTransformerName) {
        guard let transformer = ValueTransformer.registered(name) as? Self else { return nil }
        self = transformer
    }
}

// MARK: - How Core Data applies a transformer

/// The transformers that turn data into objects forwards (Apple's unarchiving transformers):
/// Core Data applies them in reverse, and asks them why a conversion failed.
protocol UnarchivingValueTransformer: ValueTransformer {
    /// Why ``ValueTransformer/reverseTransformedValue(_:)`` gives no data for `value`.
    func archivingFailure(_ value: Any) -> String
    /// Why ``ValueTransformer/transformedValue(_:)`` gives no object for `data`.
    func unarchivingFailure(_ data: Data) -> String
}

extension ValueTransformer {
    /// The `Data` a store keeps for a transformable attribute's `value`: the unarchiving
    /// transformers archive it (their reverse), any other transformer transforms it forwards.
    func storedData(for value: Any) -> Data? {
        (self is UnarchivingValueTransformer ? reverseTransformedValue(value) : transformedValue(value)) as? Data
    }

    /// The attribute value for the `Data` a store keeps: the unarchiving transformers unarchive
    /// it (forwards), any other transformer transforms it in reverse.
    func objectValue(fromStored data: Data) -> Any? {
        self is UnarchivingValueTransformer ? transformedValue(data) : reverseTransformedValue(data)
    }
}

// MARK: - Apple's simple transformers

/// `NSNegateBoolean`: a Boolean to its negation, both ways.
final class NegateBooleanTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSNumber.self }
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? { Self.negated(value) }
    override func reverseTransformedValue(_ value: Any?) -> Any? { Self.negated(value) }

    private static func negated(_ value: Any?) -> Any? {
        if let bool = value as? Bool { return NSNumber(value: !bool) }
        if let number = value as? NSNumber { return NSNumber(value: !number.boolValue) }
        return nil
    }
}

/// `NSIsNil` and `NSIsNotNil`: whether the value is nil (`NSNull` counts as nil); one way.
final class IsNilTransformer: ValueTransformer {
    private let negated: Bool

    init(negated: Bool) {
        self.negated = negated
        super.init()
    }

    override class func transformedValueClass() -> AnyClass { NSNumber.self }
    override class func allowsReverseTransformation() -> Bool { false }
    override func transformedValue(_ value: Any?) -> Any? {
        let isNil = value == nil || value is NSNull
        return NSNumber(value: isNil != negated)
    }
    override func reverseTransformedValue(_ value: Any?) -> Any? { nil }
}
