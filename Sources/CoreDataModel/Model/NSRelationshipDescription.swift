import Foundation

/// What happens to a relationship's destination objects when the source object is deleted.
///
/// Raw values are Apple's `NSDeleteRule` constants.
public enum NSDeleteRule: UInt, Sendable, CaseIterable, CustomStringConvertible {
    /// Leave the destination objects alone (the caller keeps the graph consistent).
    case noActionDeleteRule = 0
    /// Remove the deleted object from the destination objects' inverse relationship.
    case nullifyDeleteRule = 1
    /// Delete the destination objects too.
    case cascadeDeleteRule = 2
    /// Refuse to delete the source while the relationship has any destination object.
    case denyDeleteRule = 3

    /// The spelling Xcode writes in `deletionRule` (`"Nullify"`, `"Cascade"`, `"Deny"`, `"No Action"`).
    public var xcodeName: String {
        switch self {
        case .noActionDeleteRule: return "No Action"
        case .nullifyDeleteRule: return "Nullify"
        case .cascadeDeleteRule: return "Cascade"
        case .denyDeleteRule: return "Deny"
        }
    }

    /// The rule named by Xcode's `deletionRule` spelling, or `nil` for an unknown spelling.
    public init?(xcodeName: String) {
        guard let rule = NSDeleteRule.allCases.first(where: { $0.xcodeName == xcodeName }) else { return nil }
        self = rule
    }

    public var description: String { xcodeName }
}

/// A relationship from one entity to another (or to itself).
///
/// Matches Apple's `NSRelationshipDescription`. ``maxCount`` decides the cardinality: `1` is a
/// to-one relationship, `0` an unbounded to-many, larger numbers a bounded to-many. A new
/// relationship is an unbounded to-many (`maxCount == 0`) until told otherwise, as Apple documents:
/// set `maxCount = 1` for a to-one.
open class NSRelationshipDescription: NSPropertyDescription, @unchecked Sendable {
    /// The entity the relationship points to.
    public weak var destinationEntity: NSEntityDescription? { willSet { checkEditable("destinationEntity") } }

    /// The relationship on the destination that points back. Core Data keeps both sides in step.
    public weak var inverseRelationship: NSRelationshipDescription? {
        willSet { checkEditable("inverseRelationship") }
    }

    /// The most destination objects allowed; `0` means no limit, `1` makes a to-one relationship.
    public var maxCount: Int = 0 { willSet { checkEditable("maxCount") } }

    /// The fewest destination objects allowed when the object is saved.
    public var minCount: Int = 0 { willSet { checkEditable("minCount") } }

    /// What deleting the source object does to the destination objects.
    public var deleteRule: NSDeleteRule = .nullifyDeleteRule { willSet { checkEditable("deleteRule") } }

    /// Whether a to-many relationship keeps its destination objects in order (an ordered set).
    public var isOrdered: Bool = false { willSet { checkEditable("isOrdered") } }

    /// Whether the relationship may hold more than one destination object.
    public var isToMany: Bool { maxCount != 1 }

    public override init() { super.init() }

    open override var description: String {
        "(NSRelationshipDescription) name \(name), destination \(destinationEntity?.name ?? "nil"), "
            + "inverse \(inverseRelationship?.name ?? "nil"), minCount \(minCount), maxCount \(maxCount), "
            + "deleteRule \(deleteRule), isOrdered \(isOrdered), isOptional \(isOptional)"
    }
}
