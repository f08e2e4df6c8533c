import Foundation

/// A comparison of two expressions: `age > 30`, `ANY books.title CONTAINS[c] "swift"`.
///
/// Threading: immutable and `Sendable`, like ``NSPredicate``.
open class NSComparisonPredicate: NSPredicate, @unchecked Sendable {
    /// The comparison, with Apple's raw values.
    public enum Operator: UInt, Sendable {
        case lessThan = 0
        case lessThanOrEqualTo = 1
        case greaterThan = 2
        case greaterThanOrEqualTo = 3
        case equalTo = 4
        case notEqualTo = 5
        /// `MATCHES`: the left string matches the right ICU regular expression as a whole.
        case matches = 6
        /// `LIKE`: the left string matches the right pattern of `*` and `?` as a whole.
        case like = 7
        case beginsWith = 8
        case endsWith = 9
        /// `IN`: the left value is an element of the right collection (or a substring of the right string).
        case `in` = 10
        /// A comparison by an Objective-C selector. Selectors do not exist on Linux: such a
        /// predicate cannot be made from a format string and evaluates to false.
        case customSelector = 11
        /// `CONTAINS`: the left collection has the right value as an element (or the left string
        /// contains the right one).
        case contains = 99
        /// `BETWEEN`: low ≤ left ≤ high, for a right-hand `{low, high}`.
        case between = 100
        /// `UTI-EQUALS`: the left and right Uniform Type Identifiers are the same type (compared
        /// without regard to case). Foundation's value for this operator, which its public
        /// enumeration does not name.
        case utiEquals = 1100
        /// `UTI-CONFORMS-TO`: the left Uniform Type Identifier conforms to the right one.
        ///
        /// Linux difference: there is no UTI database, so only a type's conformance to itself is
        /// known. Any other pair evaluates to false, and
        /// ``NSPredicate/validatedEvaluate(with:substitutionVariables:)`` throws for it, as Apple's
        /// Foundation raises when it cannot load its UTI functions. Foundation's value for this
        /// operator, which its public enumeration does not name.
        case utiConformsTo = 1101
    }

    /// How the left side is read: directly, or element by element for a to-many key path.
    public enum Modifier: UInt, Sendable {
        case direct = 0
        /// `ALL`: every element satisfies the comparison (vacuously true for no elements).
        case all = 1
        /// `ANY` / `SOME`: at least one element does. (`NONE` parses as `NOT ANY`.)
        case any = 2
    }

    /// String comparison options: `[c]`, `[d]`, `[n]`.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The option bits, with Apple's values.
        public let rawValue: UInt
        /// Options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// `[c]`: ignore case.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: ignore diacritics (`é` matches `e`).
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: the strings are already normalized; supersedes the other options.
        public static let normalized = Options(rawValue: 4)
    }

    private let comparison: Comparison

    /// A comparison of `lhs` and `rhs` with `type`, reading `lhs` per `modifier`.
    public init(
        leftExpression lhs: NSExpression, rightExpression rhs: NSExpression,
        modifier: Modifier, type: Operator, options: Options = []
    ) {
        comparison = Comparison(left: lhs, right: rhs, modifier: modifier, type: type, options: options)
        super.init(node: .comparison(comparison))
    }

    /// The left side.
    open var leftExpression: NSExpression { comparison.left }
    /// The right side.
    open var rightExpression: NSExpression { comparison.right }
    /// The comparison operator.
    open var predicateOperatorType: Operator { comparison.type }
    /// How the left side is read.
    open var comparisonPredicateModifier: Modifier { comparison.modifier }
    /// The string options.
    open var options: Options { comparison.options }
}
