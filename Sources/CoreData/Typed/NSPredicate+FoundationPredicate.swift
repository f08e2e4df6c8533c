import CoreDataModel
import CoreDataPredicate
import Foundation

/// Lets an initializer of a class replace `self` with an existing instance (only a protocol
/// extension initializer may assign to `self` of a class).
protocol ReplacingInitializable {}

extension ReplacingInitializable {
    init(replacing existing: Self) {
        self = existing
    }
}

extension CoreDataPredicate.NSPredicate: ReplacingInitializable {}

extension CoreDataPredicate.NSPredicate {
    /// The Core Data predicate equivalent to a Foundation `Predicate` (`#Predicate`) over a
    /// managed object subclass, or `nil` when it has no equivalent (Apple's spelling; use
    /// ``init(translating:)`` for the reason).
    ///
    /// See ``init(translating:)`` for what translates.
    public convenience init?<Input: NSManagedObject>(_ predicate: Predicate<Input>) {
        guard let translated = try? PredicateTranslation.translate(predicate, entity: nil) as? Self else { return nil }
        self.init(replacing: translated)
    }

    /// The Core Data predicate equivalent to a Foundation `Predicate` (`#Predicate`) over a
    /// managed object subclass: the same tree `NSPredicate(format:)` builds, so stores execute
    /// both alike.
    ///
    /// Translated: `==`, `!=`, `<`, `<=`, `>`, `>=`; `&&`, `||`, `!`; `? :`; `+`, `-`, `*`, `/`,
    /// `%`, unary `-`; captured values (numbers, strings, dates, UUIDs, data, URLs, managed
    /// objects, object IDs, arrays, sets and ranges of them); `nil` checks, `?.`, `??`, `!`;
    /// key paths to `@Managed` properties (and accessors that call `value(forKey:)`) of the
    /// input and through to-one relationships; `count`, `isEmpty`, `first`, `last`;
    /// `collection.contains(x)` (`IN`), `(a...b).contains(x)` (`BETWEEN`), `a..<b`, partial
    /// ranges; `string.contains(s)` (`CONTAINS`), `string.starts(with: s)` (`BEGINSWITH`);
    /// `contains(where:)`, `allSatisfy` and `filter` on to-many relationships (`SUBQUERY`);
    /// `min()`, `max()`.
    ///
    /// Not translated (they throw naming the construct): casts and type checks (`as?`, `is`),
    /// subscripts, regular expressions, nested `Predicate` evaluation, and key paths to stored
    /// Swift properties that are not `@Managed`. Foundation's `#Predicate` on Linux itself does
    /// not accept `localizedStandardContains`, `caseInsensitiveCompare`, `lowercased()` or
    /// `localizedCompare`, so case- and diacritic-insensitive matching (`[cd]`) needs
    /// `NSPredicate(format:)`. `string.count` becomes `length`, which counts UTF-16 units as
    /// Apple's does, not `Character`s.
    ///
    /// Threading: call anywhere once the model's coordinator exists (the entity of `Input` is
    /// found in the loaded models). Complexity: proportional to the size of the predicate.
    /// - Throws: ``PredicateTranslationError``.
    public convenience init<Input: NSManagedObject>(translating predicate: Predicate<Input>) throws {
        let translated = try PredicateTranslation.translate(predicate, entity: nil)
        guard let typed = translated as? Self else {
            throw PredicateTranslationError.unsupportedExpression("the predicate translates to \(type(of: translated)), which is not \(Self.self)")
        }
        self.init(replacing: typed)
    }
}
