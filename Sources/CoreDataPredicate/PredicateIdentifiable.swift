/// A value that predicates compare by an identity of its choosing rather than by itself.
///
/// The object graph and the stores see the same object in different forms: a managed object, its
/// object ID, or a store's row. Each conforms and returns the same identity (the store-level
/// object ID), so `author == %@` matches whether the argument is an object or an ID and whether
/// the predicate runs over managed objects or over rows.
public protocol PredicateIdentifiable {
    /// The identity the evaluator compares and hashes.
    var predicateIdentity: AnyHashable { get }
}
