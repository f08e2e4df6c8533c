import CoreDataModel
import CoreDataPredicate
import Foundation

extension NSManagedObjectModel {
    /// The fetch request template stored in the model under `name` (Xcode's `<fetchRequest>`), or
    /// `nil` when there is none or its predicate does not parse.
    ///
    /// Templates whose predicate uses `$variables` are meant for
    /// ``fetchRequestFromTemplate(withName:substitutionVariables:)``. Each call returns a new
    /// request, so changing it does not change the template.
    public func fetchRequestTemplate(forName name: String) -> NSFetchRequest<NSFetchRequestResult>? {
        guard let description = fetchRequestDescriptionsByName[name] else { return nil }
        return try? description.makeFetchRequest(in: self)
    }

    /// A copy of the template `name` with its `$variables` replaced by `variables`; `nil` when
    /// there is no such template. A variable missing from `variables` stays in the predicate and
    /// evaluates to nil.
    public func fetchRequestFromTemplate(withName name: String, substitutionVariables variables: [String: Any]) -> NSFetchRequest<NSFetchRequestResult>? {
        guard let request = fetchRequestTemplate(forName: name) else { return nil }
        request.predicate = request.predicate?.withSubstitutionVariables(variables)
        return request
    }

    /// All fetch request templates by name.
    public var fetchRequestTemplatesByName: [String: NSFetchRequest<NSFetchRequestResult>] {
        fetchRequestDescriptionsByName.compactMapValues { try? $0.makeFetchRequest(in: self) }
    }

    /// Stores `fetchRequestTemplate` under `name` (`nil` removes the template), as Apple's
    /// model does.
    ///
    /// The model keeps the request as Xcode's model file does: the entity, the predicate as its
    /// format string (`$variables` included), the limit, batch size and flags. Sort descriptors
    /// and a predicate made with a block are not kept.
    /// Threading: call before the model is given to a coordinator; a frozen model traps.
    public func setFetchRequestTemplate(_ fetchRequestTemplate: NSFetchRequest<NSFetchRequestResult>?, forName name: String) {
        var templates = fetchRequestDescriptionsByName
        templates[name] = fetchRequestTemplate.map(FetchRequestDescription.init(describing:))
        fetchRequestDescriptionsByName = templates
    }
}

extension NSFetchedPropertyDescription {
    /// The request that computes the property (Apple's `fetchRequest`).
    ///
    /// Its predicate can use `$FETCH_SOURCE` (the object whose property is read) and
    /// `$FETCHED_PROPERTY` (this description). Setting it stores the request as the model file
    /// would (see ``NSManagedObjectModel/setFetchRequestTemplate(_:forName:)``); reading it builds
    /// a new request from that description.
    public var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        get {
            guard let model = entity?.managedObjectModel else { return nil }
            return try? fetchRequestDescription?.makeFetchRequest(in: model)
        }
        set {
            fetchRequestDescription = newValue.map(FetchRequestDescription.init(describing:))
        }
    }
}

extension FetchRequestDescription {
    /// The stored form of `request`.
    init<T>(describing request: NSFetchRequest<T>) {
        self.init(
            entityName: request.entityName ?? request.entity?.name ?? "",
            predicateFormat: request.predicate?.predicateFormat,
            fetchLimit: request.fetchLimit, fetchBatchSize: request.fetchBatchSize,
            includesSubentities: request.includesSubentities, includesPendingChanges: request.includesPendingChanges,
            returnsObjectsAsFaults: request.returnsObjectsAsFaults, returnsDistinctResults: request.returnsDistinctResults,
            relationshipKeyPathsForPrefetching: request.relationshipKeyPathsForPrefetching ?? [])
    }

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
