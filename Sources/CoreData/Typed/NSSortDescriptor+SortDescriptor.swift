import CoreDataModel
import CoreDataPredicate
import Foundation

extension CoreDataPredicate.NSSortDescriptor {
    /// The Core Data sort descriptor equivalent to a Foundation `SortDescriptor` over a managed
    /// object subclass (Apple's spelling); a key path with no Core Data name is a programmer
    /// error and traps with the reason (use `init(translating:)` to get it as an error).
    public convenience init<Compared: NSManagedObject>(_ sortDescriptor: SortDescriptor<Compared>) {
        do {
            try self.init(translating: sortDescriptor)
        } catch {
            preconditionFailure("CoreData: \(error)")
        }
    }

    /// The Core Data sort descriptor equivalent to a Foundation `SortDescriptor` over a managed
    /// object subclass: the key path is named through the class's `@Managed` declarations (it may
    /// go through to-one relationships: `\Book.author?.name`) and the order is kept. Values
    /// compare with `compare:`: Foundation on Linux has only the `.lexical` string comparator
    /// (no `.localizedStandard`, which is Apple's default), and `SortDescriptor(\.name)` there
    /// compares strings as `Comparable`, which is what `compare:` does. For Finder-like order
    /// use `NSSortDescriptor(key:ascending:selector: .localizedStandardCompare)`.
    ///
    /// Threading: call anywhere once the model's coordinator exists. Complexity: one stand-in
    /// object per step of the key path.
    /// - Throws: ``PredicateTranslationError`` for a key path with no Core Data name.
    public convenience init<Compared: NSManagedObject>(translating sortDescriptor: SortDescriptor<Compared>) throws {
        guard let keyPath = sortDescriptor.keyPath else {
            throw PredicateTranslationError.unnamedKeyPath("the SortDescriptor<\(Compared.self)> has no key path")
        }
        let key = try Self.coreDataKey(of: keyPath, on: Compared.self)
        self.init(key: key, ascending: sortDescriptor.order == .forward, selector: .compare)
    }

    /// The Core Data sort descriptor equivalent to a `KeyPathComparator` over a managed object
    /// subclass: its key path and order; values compare with `compare:` (the comparator of a
    /// `KeyPathComparator` cannot be inspected).
    ///
    /// Threading: call anywhere once the model's coordinator exists.
    /// - Throws: ``PredicateTranslationError`` for a key path with no Core Data name.
    public convenience init<Compared: NSManagedObject>(translating comparator: KeyPathComparator<Compared>) throws {
        let key = try Self.coreDataKey(of: comparator.keyPath, on: Compared.self)
        self.init(key: key, ascending: comparator.order == .forward, selector: .compare)
    }

    private static func coreDataKey(of keyPath: AnyKeyPath, on type: NSManagedObject.Type) throws -> String {
        guard let entity = EntityClassRegistry.entityInAnyModel(for: type) else {
            throw PredicateTranslationError.noEntity("no loaded model has an entity whose class is \(type)")
        }
        guard let path = try KeyPathProbe.propertyPath(of: keyPath, on: type, entity: entity) else {
            throw PredicateTranslationError.unnamedKeyPath("\(keyPath): objects cannot be sorted by their objectID")
        }
        return path
    }
}
