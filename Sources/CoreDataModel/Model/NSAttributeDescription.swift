import Foundation

/// An attribute of an entity: a typed value stored with each object.
///
/// Matches Apple's `NSAttributeDescription`. Values on Linux are Swift values: `Int16`, `Int32`,
/// `Int64`, `Decimal`, `Double`, `Float`, `String`, `Bool`, `Date`, `Data`, `UUID`, `URL`; a
/// transformable attribute holds whatever its value transformer produces.
open class NSAttributeDescription: NSPropertyDescription, @unchecked Sendable {
    /// The kind of value the attribute holds.
    public var attributeType: NSAttributeType = .undefinedAttributeType {
        willSet { checkEditable("attributeType") }
    }

    /// The iOS 15 spelling of ``attributeType``.
    public var type: AttributeType {
        get { AttributeType(rawValue: attributeType) }
        set { attributeType = newValue.rawValue }
    }

    /// The value a new object gets when none is set; `nil` for none.
    ///
    /// Its Swift type follows ``attributeType`` (see the class overview).
    public var defaultValue: Any? { willSet { checkEditable("defaultValue") } }

    /// The name of the value transformer for a transformable attribute (Xcode's `valueTransformerName`).
    public var valueTransformerName: String? { willSet { checkEditable("valueTransformerName") } }

    /// Whether large binary values may be stored outside the object's record.
    public var allowsExternalBinaryDataStorage: Bool = false {
        willSet { checkEditable("allowsExternalBinaryDataStorage") }
    }

    /// Whether persistent history keeps the value as a tombstone after the object is deleted.
    public var preservesValueInHistoryOnDeletion: Bool = false {
        willSet { checkEditable("preservesValueInHistoryOnDeletion") }
    }

    /// Whether CloudKit would encrypt the value (kept for source compatibility; no effect on Linux).
    public var allowsCloudEncryption: Bool = false { willSet { checkEditable("allowsCloudEncryption") } }

    /// The rules a value must satisfy to be saved: the model editor's minimum, maximum and regular
    /// expression. On Apple platforms these appear as `validationPredicates`.
    public var validationRules: [AttributeValidationRule] = [] { willSet { checkEditable("validationRules") } }

    private var explicitValueClassName: String?

    /// The class name of the attribute's values, as Apple reports it (`"NSString"`, `"NSNumber"`,
    /// …); for a transformable attribute, the custom class from the model, if any.
    public var attributeValueClassName: String? {
        get {
            if let explicitValueClassName { return explicitValueClassName }
            switch attributeType {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
                 .doubleAttributeType, .floatAttributeType, .booleanAttributeType:
                return "NSNumber"
            case .decimalAttributeType: return "NSDecimalNumber"
            case .stringAttributeType: return "NSString"
            case .dateAttributeType: return "NSDate"
            case .binaryDataAttributeType: return "NSData"
            case .UUIDAttributeType: return "NSUUID"
            case .URIAttributeType: return "NSURL"
            case .objectIDAttributeType: return "NSManagedObjectID"
            case .undefinedAttributeType, .transformableAttributeType, .compositeAttributeType: return nil
            }
        }
        set {
            checkEditable("attributeValueClassName")
            explicitValueClassName = newValue
        }
    }

    public override init() { super.init() }

    open override var description: String {
        "(NSAttributeDescription) name \(name), attributeType \(attributeType.xcodeName), isOptional \(isOptional), "
            + "isTransient \(isTransient), defaultValue \(defaultValue.map { "\($0)" } ?? "nil")"
    }
}

/// A rule an attribute's value must satisfy to be saved, as the model editor states it.
///
/// Bounds on numbers compare values; bounds on strings and binary data compare lengths (characters
/// for strings, bytes for data), as Apple's model editor does.
public enum AttributeValidationRule: Sendable, Equatable, CustomStringConvertible {
    /// The value is at least this number.
    case minimumValue(Decimal)
    /// The value is at most this number.
    case maximumValue(Decimal)
    /// The string or data is at least this long.
    case minimumLength(Int)
    /// The string or data is at most this long.
    case maximumLength(Int)
    /// The date is no earlier than this.
    case earliestDate(Date)
    /// The date is no later than this.
    case latestDate(Date)
    /// The whole string matches this regular expression (ICU syntax, as `MATCHES`).
    case regularExpression(String)

    public var description: String {
        switch self {
        case .minimumValue(let v): return "SELF >= \(v)"
        case .maximumValue(let v): return "SELF <= \(v)"
        case .minimumLength(let v): return "length >= \(v)"
        case .maximumLength(let v): return "length <= \(v)"
        case .earliestDate(let d): return "SELF >= CAST(\(d.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .latestDate(let d): return "SELF <= CAST(\(d.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .regularExpression(let r): return "SELF MATCHES \(r.debugDescription)"
        }
    }
}
