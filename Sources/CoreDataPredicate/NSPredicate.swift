import Foundation

/// A logical condition on an object, as in Apple's Foundation: `NSPredicate(format: "age > %d", 30)`.
///
/// This is the class Core Data code uses for fetch requests, written in Swift for Linux, where
/// Foundation declares `NSPredicate` but cannot parse format strings or read key paths. Parsed
/// predicates are real ``NSComparisonPredicate`` and ``NSCompoundPredicate`` instances whose
/// trees stores can translate; ``evaluate(with:)`` is the reference meaning of every predicate.
///
/// Files that import `Foundation` (or `XCTest`) as well as `CoreData` see two classes named
/// `NSPredicate`: expressions such as `NSPredicate(format:…)` still pick this one, but type
/// positions (`let p: NSPredicate`) are ambiguous. Add a file-level
/// `typealias NSPredicate = CoreDataPredicate.NSPredicate` (likewise for the other predicate
/// classes) in such files.
///
/// Threading: immutable after creation and `Sendable`; evaluate it from any thread. Predicates
/// holding class instances as constants, and block predicates, are as thread-safe as those are.
open class NSPredicate: NSObject, @unchecked Sendable {
    /// The closure of a block predicate: the evaluated object and the substitution variables.
    public typealias Block = @Sendable (Any?, [String: Any]?) -> Bool

    /// The tree node; the subclasses expose its parts with Apple's accessors.
    enum Node {
        case constant(Bool)
        case block(Block)
        case comparison(Comparison)
        case compound(NSCompoundPredicate.LogicalType, [NSPredicate])
    }

    struct Comparison {
        var left: NSExpression
        var right: NSExpression
        var modifier: NSComparisonPredicate.Modifier
        var type: NSComparisonPredicate.Operator
        var options: NSComparisonPredicate.Options
    }

    let node: Node
    /// Levels of nesting below and including this node; the parser bounds it.
    let height: Int
    /// Computed once from the children's hashes (the tree is immutable).
    let structuralHash: Int

    init(node: Node) {
        self.node = node
        self.height = PredicateStructure.height(of: node)
        self.structuralHash = PredicateStructure.hash(of: node)
        super.init()
    }

    /// A predicate that is always `value`: `TRUEPREDICATE` or `FALSEPREDICATE`.
    public init(value: Bool) {
        self.node = .constant(value)
        self.height = 1
        self.structuralHash = PredicateStructure.hash(of: .constant(value))
        super.init()
    }

    /// `true` for `TRUEPREDICATE`, `false` for `FALSEPREDICATE`, nil for every other predicate.
    package var constantTruth: Bool? {
        if case .constant(let value) = node { return value }
        return nil
    }

    /// A predicate that calls `block` with the evaluated object and the substitution variables.
    ///
    /// Block predicates cannot be printed as parseable format strings and are equal only to
    /// themselves; a store cannot translate them and must evaluate them in memory.
    public init(block: @escaping Block) {
        self.node = .block(block)
        self.height = 1
        self.structuralHash = PredicateStructure.hash(of: .block(block))
        super.init()
    }

    // MARK: - Evaluating

    /// Whether `object` satisfies the predicate. See ``evaluate(with:substitutionVariables:)``.
    open func evaluate(with object: Any?) -> Bool {
        evaluate(with: object, substitutionVariables: nil)
    }

    /// Whether `object` satisfies the predicate, with `$name` variables taken from `bindings`.
    ///
    /// `object` may be anything that answers key paths: a ``KeyValueReadable`` (managed objects,
    /// store rows), a `[String: Any]` dictionary or NSDictionary, or any Swift value whose stored
    /// properties are read by name. Never traps: an unknown key reads as nil, and a comparison of
    /// values of kinds that cannot be compared (`name > 3`, `age BEGINSWITH "x"`) is false — `!=`
    /// included only as the negation of `==`, so `name != 3` is true.
    ///
    /// Complexity: proportional to the size of the tree times the sizes of the collections it walks.
    open func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        PredicateEvaluator.evaluate(self, in: EvaluationContext(object: object, variables: bindings ?? [:]))
    }

    /// Whether `object` satisfies the predicate, like ``evaluate(with:substitutionVariables:)``,
    /// but throwing where Apple's Foundation raises during evaluation instead of deciding as for
    /// nil: see ``NSExpression/validatedExpressionValue(with:context:)`` for the conditions; also
    /// `UTI-CONFORMS-TO` between different types (Linux has no UTI database) and comparisons by
    /// custom selector.
    ///
    /// Evaluates the tree itself: an override of ``evaluate(with:substitutionVariables:)`` in a
    /// subclass is not called. AND and OR stop at the first subpredicate that decides them, as
    /// Apple's do, so a failure in a later one is not reported.
    ///
    /// - Throws: ``NSExpressionEvaluationError`` for the first such failure.
    public func validatedEvaluate(with object: Any?, substitutionVariables bindings: [String: Any]? = nil) throws(NSExpressionEvaluationError) -> Bool {
        let failures = EvaluationFailures()
        let result = PredicateEvaluator.evaluate(self, in: EvaluationContext(object: object, variables: bindings ?? [:], failures: failures))
        if let failure = failures.first { throw failure }
        return result
    }

    /// A copy with every `$name` variable that `variables` binds replaced by a constant holding
    /// its value. Variables not in `variables` stay variables.
    open func withSubstitutionVariables(_ variables: [String: Any]) -> Self {
        guard let substituted = Substitution.predicate(self, variables: variables) as? Self else { return self }
        return substituted
    }

    /// Securely decoded predicates must be allowed before evaluation on Apple platforms; there is
    /// no archiving here, so this does nothing.
    open func allowEvaluation() {}

    // MARK: - Describing

    /// The predicate in Apple's format syntax (`name == "Ada" AND age > 30`).
    ///
    /// Parsing the result gives an equal predicate, except where no format syntax exists: block
    /// predicates and block expressions, constants holding arbitrary objects (printed with their
    /// description), key paths that are not identifiers, and compound predicates with fewer than
    /// two subpredicates (printed as their one subpredicate, or `TRUEPREDICATE`/`FALSEPREDICATE`).
    open var predicateFormat: String { Printer.format(self) }

    /// ``predicateFormat``.
    open override var description: String { predicateFormat }

    /// Whether `object` is a predicate with the same structure (same operators, options and
    /// modifiers, equal expressions; see ``NSExpression/isEqual(_:)``). Block predicates are equal
    /// only to themselves.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPredicate else { return false }
        return PredicateStructure.equal(self, other)
    }

    /// Consistent with ``isEqual(_:)``; computed when the tree is built.
    open override var hash: Int { structuralHash }
}
