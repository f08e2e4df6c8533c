import Foundation

/// The type of an attribute's value, with Apple's raw values.
///
/// The raw values are Apple's `NSAttributeType` constants, so they can be stored in files and
/// compared with values written on Apple platforms. ``NSAttributeDescription/attributeValueClassName``
/// names the Swift type a value of each kind has on Linux.
public enum NSAttributeType: UInt, Sendable, CaseIterable, CustomStringConvertible {
    case undefinedAttributeType = 0
    case integer16AttributeType = 100
    case integer32AttributeType = 200
    case integer64AttributeType = 300
    case decimalAttributeType = 400
    case doubleAttributeType = 500
    case floatAttributeType = 600
    case stringAttributeType = 700
    case booleanAttributeType = 800
    case dateAttributeType = 900
    case binaryDataAttributeType = 1000
    case UUIDAttributeType = 1100
    case URIAttributeType = 1200
    case transformableAttributeType = 1800
    case objectIDAttributeType = 2000
    case compositeAttributeType = 2100

    /// The spelling Xcode writes in a model file's `attributeType`, e.g. `"Integer 32"`.
    public var xcodeName: String {
        switch self {
        case .undefinedAttributeType: return "Undefined"
        case .integer16AttributeType: return "Integer 16"
        case .integer32AttributeType: return "Integer 32"
        case .integer64AttributeType: return "Integer 64"
        case .decimalAttributeType: return "Decimal"
        case .doubleAttributeType: return "Double"
        case .floatAttributeType: return "Float"
        case .stringAttributeType: return "String"
        case .booleanAttributeType: return "Boolean"
        case .dateAttributeType: return "Date"
        case .binaryDataAttributeType: return "Binary"
        case .UUIDAttributeType: return "UUID"
        case .URIAttributeType: return "URI"
        case .transformableAttributeType: return "Transformable"
        case .objectIDAttributeType: return "ObjectID"
        case .compositeAttributeType: return "Composite"
        }
    }

    /// The type named by Xcode's `attributeType` spelling, or `nil` for an unknown spelling.
    public init?(xcodeName: String) {
        guard let match = NSAttributeType.allCases.first(where: { $0.xcodeName == xcodeName }) else {
            return nil
        }
        self = match
    }

    /// Whether the type holds a number (integers, decimal, double, float).
    public var isNumeric: Bool {
        switch self {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
             .decimalAttributeType, .doubleAttributeType, .floatAttributeType:
            return true
        default:
            return false
        }
    }

    public var description: String { xcodeName }
}

extension NSAttributeDescription {
    /// The Swift-style attribute type of iOS 15 and later (`.string`, `.integer64`, …).
    ///
    /// A thin wrapper around ``NSAttributeType`` with Apple's static member names.
    public struct AttributeType: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public var rawValue: NSAttributeType
        public init(rawValue: NSAttributeType) { self.rawValue = rawValue }

        public static let undefined = AttributeType(rawValue: .undefinedAttributeType)
        public static let integer16 = AttributeType(rawValue: .integer16AttributeType)
        public static let integer32 = AttributeType(rawValue: .integer32AttributeType)
        public static let integer64 = AttributeType(rawValue: .integer64AttributeType)
        public static let decimal = AttributeType(rawValue: .decimalAttributeType)
        public static let double = AttributeType(rawValue: .doubleAttributeType)
        public static let float = AttributeType(rawValue: .floatAttributeType)
        public static let string = AttributeType(rawValue: .stringAttributeType)
        public static let boolean = AttributeType(rawValue: .booleanAttributeType)
        public static let date = AttributeType(rawValue: .dateAttributeType)
        public static let binaryData = AttributeType(rawValue: .binaryDataAttributeType)
        public static let uuid = AttributeType(rawValue: .UUIDAttributeType)
        public static let uri = AttributeType(rawValue: .URIAttributeType)
        public static let transformable = AttributeType(rawValue: .transformableAttributeType)
        public static let objectID = AttributeType(rawValue: .objectIDAttributeType)
        public static let composite = AttributeType(rawValue: .compositeAttributeType)

        public var description: String { rawValue.xcodeName }
    }
}
