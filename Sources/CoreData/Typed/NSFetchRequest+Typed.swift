import CoreDataModel
import CoreDataPredicate
import Foundation

extension NSFetchRequest where ResultType: NSManagedObject {
    /// A fetch request for the entity of `ResultType`, from Foundation's typed predicate and sort
    /// descriptors:
    ///
    /// ```swift
    /// let request = try NSFetchRequest<Book>(
    ///     predicate: #Predicate { $0.pages > 300 && $0.author?.name == "Ada" },
    ///     sortBy: [SortDescriptor(\.title)])
    /// let books = try context.fetch(request)      // [Book]
    /// ```
    ///
    /// Both are translated into Core Data's tree (see ``CoreDataPredicate/NSPredicate/init(translating:)`` for what
    /// translates), so the request is an ordinary one: it can be changed, stored, executed by any
    /// store, and its ``NSFetchRequest/predicate`` prints as a format string.
    ///
    /// Threading: build it anywhere once the model's coordinator exists.
    /// - Throws: ``PredicateTranslationError`` naming the first construct with no Core Data
    ///   equivalent, or a class no loaded model names.
    public convenience init(predicate: Predicate<ResultType>? = nil, sortBy sortDescriptors: [SortDescriptor<ResultType>] = []) throws {
        guard let entity = EntityClassRegistry.entityInAnyModel(for: ResultType.self), let name = entity.name else {
            throw PredicateTranslationError.noEntity(
                "no loaded model has an entity whose class is \(ResultType.self); create the container or coordinator for the model first")
        }
        self.init(entityName: name)
        self.entity = entity
        if let predicate {
            self.predicate = try PredicateTranslation.translate(predicate, entity: entity)
        }
        if !sortDescriptors.isEmpty {
            self.sortDescriptors = try sortDescriptors.map { try CoreDataPredicate.NSSortDescriptor(translating: $0) }
        }
    }

    /// A fetch request for the entity of `ResultType` sorted by `KeyPathComparator`s.
    ///
    /// - Throws: ``PredicateTranslationError``, as `init(predicate:sortBy:)`.
    public convenience init(predicate: Predicate<ResultType>? = nil, sortBy comparators: [KeyPathComparator<ResultType>]) throws {
        try self.init(predicate: predicate, sortBy: [SortDescriptor<ResultType>]())
        if !comparators.isEmpty {
            self.sortDescriptors = try comparators.map { try CoreDataPredicate.NSSortDescriptor(translating: $0) }
        }
    }
}
