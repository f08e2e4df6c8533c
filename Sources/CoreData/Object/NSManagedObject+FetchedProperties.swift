import CoreDataModel
import CoreDataPredicate
import Foundation

extension NSManagedObject {
    /// The value of a fetched property: the results of its fetch request, run in this object's
    /// context with `$FETCH_SOURCE` bound to this object and `$FETCHED_PROPERTY` to the property.
    ///
    /// As on Apple platforms the results are computed when first read and then kept: later saves
    /// do not change them until the object is refreshed
    /// (`context.refresh(object, mergeChanges:)`). An object outside a context, or a fetch that
    /// fails (a key path the destination entity lacks), reads as an empty array.
    /// Complexity: one fetch on first read, O(1) after.
    func fetchedPropertyValue(_ property: NSFetchedPropertyDescription) -> [Any] {
        if let cached = fetchedPropertyValues[property.name] { return cached }
        guard let context = managedObjectContext, let request = property.fetchRequest else { return [] }
        request.predicate = request.predicate?.withSubstitutionVariables(["FETCH_SOURCE": self, "FETCHED_PROPERTY": property])
        let results: [Any] = (try? context.fetch(request)) ?? []
        fetchedPropertyValues[property.name] = results
        return results
    }
}
