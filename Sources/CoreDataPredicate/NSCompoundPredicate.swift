import Foundation

/// `AND`, `OR` or `NOT` of other predicates.
///
/// `subpredicates` is `[NSPredicate]` (as in swift-corelibs-foundation; Apple's SDK types it `[Any]`).
/// An `AND` of no predicates is true, an `OR` of none is false, and a `NOT` of several negates
/// their `AND`.
///
/// Threading: immutable and `Sendable`, like ``NSPredicate``.
open class NSCompoundPredicate: NSPredicate, @unchecked Sendable {
    /// The connective, with Apple's raw values.
    public enum LogicalType: UInt, Sendable {
        case not = 0
        case and = 1
        case or = 2
    }

    private let type: LogicalType
    private let predicates: [NSPredicate]

    /// A compound predicate of `type` over `subpredicates`.
    public init(type: LogicalType, subpredicates: [NSPredicate]) {
        self.type = type
        self.predicates = subpredicates
        super.init(node: .compound(type, subpredicates))
    }

    /// All of `subpredicates` must hold.
    public convenience init(andPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .and, subpredicates: subpredicates)
    }

    /// At least one of `subpredicates` must hold.
    public convenience init(orPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .or, subpredicates: subpredicates)
    }

    /// `predicate` must not hold.
    public convenience init(notPredicateWithSubpredicate predicate: NSPredicate) {
        self.init(type: .not, subpredicates: [predicate])
    }

    /// The connective.
    open var compoundPredicateType: LogicalType { type }
    /// The predicates it connects, in order.
    open var subpredicates: [NSPredicate] { predicates }
}
