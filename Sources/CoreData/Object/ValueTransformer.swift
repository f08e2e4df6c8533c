import Foundation

/// The name of a registered value transformer (Apple's `NSValueTransformerName`).
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// Converts a transformable attribute's value to the `Data` a store keeps, and back.
///
/// Foundation on Linux has no `ValueTransformer`; this is Apple's API for what Core Data uses:
/// subclass it, override ``transformedValue(_:)`` and ``reverseTransformedValue(_:)``, and register
/// an instance under the name the model's `valueTransformerName` gives.
///
/// Threading: the registry is guarded by a lock; transformers must be safe to call from any context's queue.
open class ValueTransformer: NSObject, @unchecked Sendable {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var registry: [NSValueTransformerName: ValueTransformer] = [:]

    public override init() { super.init() }

    /// The transformer registered under `name`, or `nil`.
    public convenience init?(forName name: NSValueTransformerName) {
        guard ValueTransformer.registered(name) != nil else { return nil }
        self.init()
        // An initializer cannot return another instance; use ``valueTransformer(forName:)`` for
        // the registered object itself. This form only answers whether one is registered.
    }

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

    /// The names of the registered transformers.
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

    /// The class of transformed values (`Data` for Core Data's purposes).
    open class func transformedValueClass() -> AnyClass { NSData.self }
    /// Whether ``reverseTransformedValue(_:)`` is supported.
    open class func allowsReverseTransformation() -> Bool { true }
    /// Turns a value into its stored form.
    open func transformedValue(_ value: Any?) -> Any? { value }
    /// Turns a stored form back into the value.
    open func reverseTransformedValue(_ value: Any?) -> Any? { value }
}
