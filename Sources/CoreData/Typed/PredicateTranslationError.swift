import Foundation

/// Why a Foundation `Predicate`, `SortDescriptor` or `KeyPathComparator` has no equivalent in
/// Core Data's predicate tree. The message names the construct.
public enum PredicateTranslationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A `#Predicate` expression type (or an operation on a type) with no Core Data equivalent,
    /// such as a string comparison with options or a cast; the message names the
    /// `PredicateExpressions` type and what it was applied to.
    case unsupportedExpression(String)
    /// A Swift key path that does not name a stored property of the entity.
    case unnamedKeyPath(String)
    /// A constant whose type a store cannot hold or compare (a struct of the app's own).
    case unsupportedValue(String)
    /// The class has no entity in any loaded model.
    case noEntity(String)

    public var description: String {
        switch self {
        case .unsupportedExpression(let detail): return "#Predicate cannot be translated to a Core Data predicate: \(detail)"
        case .unnamedKeyPath(let detail): return "key path cannot be translated to a Core Data key path: \(detail)"
        case .unsupportedValue(let detail): return "#Predicate constant cannot be translated: \(detail)"
        case .noEntity(let detail): return "no entity for the typed fetch: \(detail)"
        }
    }
}

extension PredicateTranslationError: LocalizedError {
    public var errorDescription: String? { description }
}
