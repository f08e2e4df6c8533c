import Foundation

// swift-corelibs-foundation declares none of Foundation's key-value observing types (there is
// no Objective-C runtime to build them on). Managed objects implement the observing themselves
// (NSManagedObject+Observing.swift); these are the types Apple's Foundation gives that API,
// with Apple's names and raw values, so that observing code compiles unchanged.

/// What a key-value observation notification carries, and when it is sent.
///
/// Matches Foundation's `NSKeyValueObservingOptions` (absent from Foundation on Linux).
public struct NSKeyValueObservingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt

    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The change dictionary holds the value after the change (``NSKeyValueChangeKey/newKey``).
    public static let new = NSKeyValueObservingOptions(rawValue: 0x01)
    /// The change dictionary holds the value before the change (``NSKeyValueChangeKey/oldKey``).
    public static let old = NSKeyValueObservingOptions(rawValue: 0x02)
    /// A notification is sent at once, while the observer is being added, with the current value.
    public static let initial = NSKeyValueObservingOptions(rawValue: 0x04)
    /// A separate notification is sent before each change (``NSKeyValueChangeKey/notificationIsPriorKey``).
    public static let prior = NSKeyValueObservingOptions(rawValue: 0x08)
}

/// The kind of change a notification reports (``NSKeyValueChangeKey/kindKey``).
///
/// Matches Foundation's `NSKeyValueChange`.
public enum NSKeyValueChange: UInt, Sendable {
    /// The value was replaced (every change of an attribute or to-one relationship).
    case setting = 1
    /// Objects were added to a to-many relationship.
    case insertion = 2
    /// Objects were removed from a to-many relationship.
    case removal = 3
    /// Objects of a to-many relationship were replaced.
    case replacement = 4
}

/// The keys of the change dictionary an observer's
/// ``NSKeyValueObserving/observeValue(forKeyPath:of:change:context:)`` receives.
///
/// Matches Foundation's `NSKeyValueChangeKey`, raw values included.
public struct NSKeyValueChangeKey: RawRepresentable, Hashable, Sendable {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The ``NSKeyValueChange`` raw value, as an `NSNumber` (Apple's type).
    public static let kindKey = NSKeyValueChangeKey(rawValue: "kind")
    /// The value after the change (``NSKeyValueObservingOptions/new``); `NSNull` for nil.
    public static let newKey = NSKeyValueChangeKey(rawValue: "new")
    /// The value before the change (``NSKeyValueObservingOptions/old``); `NSNull` for nil.
    public static let oldKey = NSKeyValueChangeKey(rawValue: "old")
    /// The indexes of the objects inserted, removed or replaced in an ordered relationship.
    public static let indexesKey = NSKeyValueChangeKey(rawValue: "indexes")
    /// `true` (an `NSNumber`) in the notification sent before a change (``NSKeyValueObservingOptions/prior``).
    public static let notificationIsPriorKey = NSKeyValueChangeKey(rawValue: "notificationIsPrior")
}

/// An object that receives key-value observation notifications from managed objects it was
/// added to as an observer with `addObserver(_:forKeyPath:options:context:)`.
///
/// On Apple platforms every `NSObject` answers `observeValue(forKeyPath:of:change:context:)` and an
/// observer overrides it. Foundation on Linux has no such method to override, so an observer
/// declares the same method without `override` and adopts this protocol. ``NSManagedObject``
/// adopts it already: its subclasses override the method as on Apple platforms.
public protocol NSKeyValueObserving: AnyObject {
    /// Called when the value at `keyPath` of `object` changes (and, with
    /// ``NSKeyValueObservingOptions/initial`` or ``NSKeyValueObservingOptions/prior``, at
    /// registration and before each change), on the observed object's context queue.
    func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?)
}

/// A change an `observe(_:options:changeHandler:)` handler receives.
///
/// Matches Foundation's `NSKeyValueObservedChange`: the values are typed as the observed key
/// path's value, and present only when the matching option was given.
public struct NSKeyValueObservedChange<Value> {
    public typealias Kind = NSKeyValueChange
    /// What kind of change this is.
    public let kind: Kind
    /// The value after the change, with ``NSKeyValueObservingOptions/new``.
    public let newValue: Value?
    /// The value before the change, with ``NSKeyValueObservingOptions/old``.
    public let oldValue: Value?
    /// The indexes of the objects inserted into or removed from an ordered to-many relationship.
    public let indexes: IndexSet?
    /// Whether this is the notification sent before the change (``NSKeyValueObservingOptions/prior``).
    public let isPrior: Bool
}

/// A block-based observation made by `observe(_:options:changeHandler:)`: it lasts until
/// ``invalidate()`` is called or the observation is released.
///
/// Matches Foundation's `NSKeyValueObservation`. Threading: invalidate or release it on the
/// observed object's context queue, like any other use of the object.
public final class NSKeyValueObservation: NSObject {
    private var remove: (() -> Void)?

    init(remove: @escaping () -> Void) {
        self.remove = remove
    }

    /// Stops the observation; the handler is not called again. Calling it twice does nothing.
    public func invalidate() {
        let remove = self.remove
        self.remove = nil
        remove?()
    }

    deinit { invalidate() }
}

/// The protocol Apple's Foundation declares `observe(_:options:changeHandler:)` on; here
/// ``NSManagedObject`` adopts it so that the method's handler receives the subclass's type.
public protocol _KeyValueCodingAndObserving {}
