import CoreDataModel
import CoreDataPredicate
import Foundation

extension NSManagedObjectModel {
    /// The fetch request template stored in the model under `name` (Xcode's `<fetchRequest>`), or
    /// `nil` when there is none or its predicate does not parse.
    ///
    /// Templates whose predicate uses `$variables` are meant for
    /// ``fetchRequestFromTemplate(withName:substitutionVariables:)``.
    public func fetchRequestTemplate(forName name: String) -> NSFetchRequest<NSFetchRequestResult>? {
        guard let description = fetchRequestDescriptionsByName[name] else { return nil }
        return try? description.makeFetchRequest(in: self)
    }

    /// A copy of the template `name` with its `$variables` replaced by `variables`.
    public func fetchRequestFromTemplate(withName name: String, substitutionVariables variables: [String: Any]) -> NSFetchRequest<NSFetchRequestResult>? {
        guard let request = fetchRequestTemplate(forName: name) else { return nil }
        request.predicate = request.predicate?.withSubstitutionVariables(variables)
        return request
    }

    /// All fetch request templates by name.
    public var fetchRequestTemplatesByName: [String: NSFetchRequest<NSFetchRequestResult>] {
        fetchRequestDescriptionsByName.compactMapValues { try? $0.makeFetchRequest(in: self) }
    }
}

extension NSFetchedPropertyDescription {
    /// The request that computes the property, built from the model's description of it.
    public var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        guard let model = entity?.managedObjectModel else { return nil }
        return try? fetchRequestDescription?.makeFetchRequest(in: model)
    }
}

extension FetchRequestDescription {
    /// The description as an `NSFetchRequest`.
    ///
    /// - Throws: `NSPredicateSyntaxError` when the stored predicate does not parse.
    func makeFetchRequest(in model: NSManagedObjectModel) throws -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: entityName)
        request.entity = model.entitiesByName[entityName]
        if let format = predicateFormat {
            request.predicate = try CoreDataPredicate.NSPredicate(validatingFormat: format)
        }
        request.fetchLimit = fetchLimit
        request.fetchBatchSize = fetchBatchSize
        request.includesSubentities = includesSubentities
        request.includesPendingChanges = includesPendingChanges
        request.returnsObjectsAsFaults = returnsObjectsAsFaults
        request.returnsDistinctResults = returnsDistinctResults
        request.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching.isEmpty ? nil : relationshipKeyPathsForPrefetching
        return request
    }
}
