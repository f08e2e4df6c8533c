import Foundation

/// One stored property value, in the closed set of shapes every store can encode.
///
/// Attributes map to the scalar cases by their ``NSAttributeType``; a to-one relationship is a
/// ``reference(_:)`` (or ``null``), a to-many relationship ``references(_:)`` (in order for an
/// ordered relationship). Transformable values arrive already transformed into ``data(_:)``.
public enum StoreValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// Integer 16, 32 and 64 attributes.
    case integer(Int64)
    /// Double and Float attributes.
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case date(Date)
    /// Binary data and transformed values.
    case data(Data)
    case uuid(UUID)
    case uri(URL)
    /// A to-one relationship's destination.
    case reference(StoreObjectID)
    /// A to-many relationship's destinations.
    case references([StoreObjectID])

    /// Whether the value is ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }
}
