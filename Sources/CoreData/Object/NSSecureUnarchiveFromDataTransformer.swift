import Foundation

/// Apple's value transformer that unarchives data into objects of a few allowed classes with
/// secure coding, and archives such objects into data: the transformer of a transformable
/// attribute that names none, registered under
/// ``NSValueTransformerName/secureUnarchiveFromDataTransformerName`` (`"NSSecureUnarchiveFromData"`).
///
/// As on Apple, ``transformedValue(_:)`` turns `Data` into an object and
/// ``reverseTransformedValue(_:)`` turns an object into `Data`; Core Data applies it in reverse to
/// store a value. The data is an `NSKeyedArchiver` archive (a binary property list in the layout
/// Apple's archiver writes and its unarchiver reads) with the value under the root key `root`; it
/// is written and read by this package, not by Foundation's archiver (on Linux that one is
/// quadratic in the number of collections and traps on damaged input), so damaged or hostile bytes
/// give `nil`, never a crash.
///
/// Every object of the archive, not just the top one, must be of one of
/// ``allowedTopLevelClasses`` (or a subclass); strings, numbers, data and dates inside a
/// collection are let through as Apple's unarchiver lets them through. A value holding anything
/// else is not archived (``reverseTransformedValue(_:)`` gives `nil`, and saving it fails with a
/// validation error naming the class).
///
/// Subclass it to allow classes of your own, as Apple apps do, and register the subclass under the
/// name the model gives:
///
/// ```swift
/// final class ColorTransformer: NSSecureUnarchiveFromDataTransformer {
///     override class var allowedTopLevelClasses: [AnyClass] { [Color.self, NSArray.self] }
/// }
/// ValueTransformer.setValueTransformer(ColorTransformer(), forName: NSValueTransformerName("ColorTransformer"))
/// ```
///
/// A class of your own must be an `NSObject` subclass conforming to `NSSecureCoding`
/// (`supportsSecureCoding` true); it is encoded through its `encode(with:)` and decoded through its
/// `init?(coder:)` with coders of this package's that support the keyed `encode(_:forKey:)` and
/// `decode…(forKey:)` methods. It is archived under its `NSStringFromClass` name (`MyApp.Color`)
/// and found again by that name, by `NSKeyedUnarchiver.setClass(_:forClassName:)`, or by its name
/// without the module (how an Apple app's `@objc(Color)` class is archived).
///
/// Threading: stateless; safe to use from any queue.
open class NSSecureUnarchiveFromDataTransformer: ValueTransformer {
    /// A transformer; the one registered under `NSSecureUnarchiveFromData` is there from the start.
    public override init() { super.init() }

    /// The classes Apple's transformer allows by default: `NSArray`, `NSDictionary`, `NSSet`,
    /// `NSString`, `NSNumber`, `NSDate`, `NSData`, `NSURL`, `NSUUID` and `NSNull`.
    static let defaultAllowedClasses: [AnyClass] = [
        NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self,
        NSDate.self, NSData.self, NSURL.self, NSUUID.self, NSNull.self,
    ]

    /// The classes the archive's objects may be of, when archiving and when unarchiving.
    ///
    /// ``transformedValueClass()`` alone when a subclass overrides it with a class other than
    /// `NSObject`; otherwise `NSArray`, `NSDictionary`, `NSSet`, `NSString`, `NSNumber`, `NSDate`,
    /// `NSData`, `NSURL`, `NSUUID` and `NSNull`, as on Apple. Override it to allow other classes.
    /// Swift values count as the class they bridge to: `String` as `NSString`, `Int`, `Double` and
    /// `Bool` as `NSNumber`, `[Any]` as `NSArray`, `Date` as `NSDate`, and so on.
    open class var allowedTopLevelClasses: [AnyClass] {
        let declared: AnyClass = transformedValueClass()
        return declared == NSObject.self ? defaultAllowedClasses : [declared]
    }

    /// `NSObject`: no single class (so ``allowedTopLevelClasses`` is the default list).
    open override class func transformedValueClass() -> AnyClass { NSObject.self }

    /// `true`: objects are archived back into data.
    open override class func allowsReverseTransformation() -> Bool { true }

    /// The object archived in `value` (`Data`), or `nil` when `value` is not data, not a keyed
    /// archive, damaged, or holds an object of a class that is not allowed.
    ///
    /// Strings come back as `String`, numbers and Booleans as `NSNumber`, arrays as `[Any]`,
    /// dictionaries as `[AnyHashable: Any]`, sets as `Set<AnyHashable>`, and `Data`, `Date`,
    /// `URL`, `UUID`, `NSNull` as themselves.
    open override func transformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        return try? KeyedArchiveCoding.unarchive(data, policy)
    }

    /// `value` archived with `NSKeyedArchiver` (secure coding) into `Data`, or `nil` when it holds
    /// an object of a class that is not allowed or cannot be archived.
    open override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let value else { return nil }
        return try? KeyedArchiveCoding.archive(value, policy)
    }

    private var policy: KeyedArchiveCoding.Policy {
        .init(allowedClasses: type(of: self).allowedTopLevelClasses, requiresSecureCoding: true, transformerName: "NSSecureUnarchiveFromData")
    }
}

extension NSSecureUnarchiveFromDataTransformer: UnarchivingValueTransformer {
    func archivingFailure(_ value: Any) -> String {
        do {
            _ = try KeyedArchiveCoding.archive(value, policy)
            return "the transformer gave no data"
        } catch {
            return error.description
        }
    }

    func unarchivingFailure(_ data: Data) -> String {
        do {
            _ = try KeyedArchiveCoding.unarchive(data, policy)
            return "the transformer gave no value"
        } catch {
            return error.description
        }
    }
}

/// Apple's `NSKeyedUnarchiveFromData` transformer: like ``NSSecureUnarchiveFromDataTransformer``
/// without secure coding, so objects of any `NSCoding` class of the app may be archived and are
/// unarchived by the class name the archive gives. Foundation's own classes other than the value
/// classes the package's decoder reads (strings, numbers, data, dates, URLs, UUIDs, `NSNull`, arrays,
/// dictionaries, sets, ordered sets) are refused: their decoders on Linux need Foundation's unarchiver.
final class KeyedUnarchiveFromDataTransformer: ValueTransformer, UnarchivingValueTransformer {
    private static let policy = KeyedArchiveCoding.Policy(allowedClasses: nil, requiresSecureCoding: false, transformerName: "NSKeyedUnarchiveFromData")

    override class func transformedValueClass() -> AnyClass { NSObject.self }
    override class func allowsReverseTransformation() -> Bool { true }

    override func transformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        return try? KeyedArchiveCoding.unarchive(data, Self.policy)
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let value else { return nil }
        return try? KeyedArchiveCoding.archive(value, Self.policy)
    }

    func archivingFailure(_ value: Any) -> String {
        do {
            _ = try KeyedArchiveCoding.archive(value, Self.policy)
            return "the transformer gave no data"
        } catch {
            return error.description
        }
    }

    func unarchivingFailure(_ data: Data) -> String {
        do {
            _ = try KeyedArchiveCoding.unarchive(data, Self.policy)
            return "the transformer gave no value"
        } catch {
            return error.description
        }
    }
}
