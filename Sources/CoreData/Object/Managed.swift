import CoreDataModel
import Foundation

/// A typed property of a managed object subclass, stored in the object's context: the Linux
/// stand-in for Apple's `@NSManaged`, which needs the Objective-C runtime.
///
/// Declare each property once; the key is the property's own name:
///
/// ```swift
/// final class Author: NSManagedObject {
///     @Managed var name: String?
///     @Managed var rating: Int16
///     @Managed var books: Set<Book>          // to-many
///     @Managed var publisher: Publisher?     // to-one
/// }
/// ```
///
/// Reads and writes go through `value(forKey:)`/`setValue(_:forKey:)`, so faulting, change
/// tracking, inverse maintenance and validation behave exactly as with key-value access.
/// Key paths to `@Managed` properties (`\Author.name`, `\Book.author?.name`) name their Core
/// Data keys, so they can be used in `#Predicate`, `SortDescriptor` and `KeyPathComparator`
/// (see `NSFetchRequest.init(predicate:sortBy:)`).
/// Numbers convert between widths (an `Int` property over an Integer 16 attribute works);
/// a non-optional property whose value is `nil` traps with the object and key, like a force
/// unwrap of Apple's generated accessors would.
@propertyWrapper
public struct Managed<Value> {
    // Never read. A zero-sized wrapper would give every @Managed property of a class the same
    // storage offset, and key paths to them would compare equal and print the same name.
    private let storageMarker: UInt8 = 0

    public init() {}

    @available(*, unavailable, message: "@Managed properties are only available on NSManagedObject subclasses")
    public var wrappedValue: Value {
        get { preconditionFailure("unreachable") }
        // swiftlint:disable:next unused_setter_value
        set { preconditionFailure("unreachable") }
    }

    public static subscript<Object: NSManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        get {
            let key = ManagedKeyNames.name(of: storageKeyPath)
            if let probe = object.keyPathProbe { return probe.placeholder(for: object, key: key, as: Value.self) }
            return ManagedValueConversion.convert(object.kvcValue(forKey: key), to: Value.self, object: object, key: key)
        }
        set {
            let key = ManagedKeyNames.name(of: storageKeyPath)
            object.setValue(ManagedValueConversion.storable(newValue), forKey: key)
        }
    }
}

/// Property names from the wrapper's storage key path (`\Author._name` → `name`), cached.
enum ManagedKeyNames {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [AnyKeyPath: String] = [:]

    static func name(of keyPath: AnyKeyPath) -> String {
        lock.lock()
        defer { lock.unlock() }
        if let known = cache[keyPath] { return known }
        // "\Author._name" — the storage property is the declared name with a leading underscore.
        let text = String(describing: keyPath)
        let last = text.split(separator: ".").last.map(String.init) ?? text
        let name = last.hasPrefix("_") ? String(last.dropFirst()) : last
        cache[keyPath] = name
        return name
    }
}

/// Converts between what the context stores and the declared Swift type.
enum ManagedValueConversion {
    static func convert<Value>(_ value: Any?, to type: Value.Type, object: NSManagedObject, key: String) -> Value {
        if let converted = convertIfPossible(value, to: Value.self) { return converted }
        let held = value.map { String(describing: Swift.type(of: $0)) } ?? "nil"
        preconditionFailure("CoreData: @Managed \(key) of \(object.objectID) is declared \(Value.self) but holds \(held)")
    }

    /// The value as `Value`: directly, wrapped in an optional, between number widths, or as a
    /// typed collection of objects; `nil` when none applies.
    static func convertIfPossible<Value>(_ value: Any?, to type: Value.Type) -> Value? {
        if let direct = value as? Value { return direct }
        if let optionalType = Value.self as? any OptionalConvertible.Type {
            if let value, let wrapped = optionalType.wrapping(value) as? Value { return wrapped }
            if let none = optionalType.noneValue as? Value { return none }
        }
        if let value, let converted = numeric(value, to: Value.self) { return converted }
        if let set = value as? Set<NSManagedObject>, let converted = collection(Array(set), to: Value.self) { return converted }
        if let ordered = value as? NSOrderedSet, let converted = collection(ordered.array, to: Value.self) { return converted }
        return nil
    }

    static func storable<Value>(_ value: Value) -> Any? {
        if let optional = value as? any OptionalConvertible { return optional.wrappedAny }
        return value
    }

    private static func numeric<Value>(_ value: Any, to type: Value.Type) -> Value? {
        guard let number = value as? any BinaryInteger else {
            if let double = value as? Double { return (Float(double) as? Value) ?? (Double(double) as? Value) }
            if let float = value as? Float { return (Double(float) as? Value) }
            return nil
        }
        let wide = Int64(truncatingIfNeeded: number)
        switch Value.self {
        case is Int.Type: return Int(wide) as? Value
        case is Int64.Type: return wide as? Value
        case is Int32.Type: return Int32(truncatingIfNeeded: wide) as? Value
        case is Int16.Type: return Int16(truncatingIfNeeded: wide) as? Value
        case is Optional<Int>.Type: return Optional(Int(wide)) as? Value
        case is Optional<Int64>.Type: return Optional(wide) as? Value
        case is Optional<Int32>.Type: return Optional(Int32(truncatingIfNeeded: wide)) as? Value
        case is Optional<Int16>.Type: return Optional(Int16(truncatingIfNeeded: wide)) as? Value
        default: return nil
        }
    }

    private static func collection<Value>(_ objects: [Any], to type: Value.Type) -> Value? {
        if let target = Value.self as? any ManagedCollection.Type { return target.make(from: objects) as? Value }
        return nil
    }
}

/// Optionals, seen without knowing their wrapped type.
protocol OptionalConvertible {
    static var wrappedType: Any.Type { get }
    static var noneValue: Any { get }
    static func wrapping(_ value: Any) -> Any?
    var wrappedAny: Any? { get }
}

extension Optional: OptionalConvertible {
    static var wrappedType: Any.Type { Wrapped.self }
    static var noneValue: Any { Optional<Wrapped>(nilLiteral: ()) as Any }
    static func wrapping(_ value: Any) -> Any? {
        guard let wrapped = value as? Wrapped else { return nil }
        return Optional(wrapped) as Any
    }
    var wrappedAny: Any? {
        switch self {
        case .some(let value): return value
        case .none: return nil
        }
    }
}

/// Typed to-many collections a `@Managed` property can declare.
protocol ManagedCollection {
    static func make(from objects: [Any]) -> Any
}

extension Set: ManagedCollection {
    static func make(from objects: [Any]) -> Any { Set(objects.compactMap { $0 as? Element }) }
}

extension Array: ManagedCollection {
    static func make(from objects: [Any]) -> Any { objects.compactMap { $0 as? Element } }
}
