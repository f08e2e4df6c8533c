import Foundation

/// A fetched property: a weak, one-way relationship computed by running a fetch request.
///
/// Matches Apple's `NSFetchedPropertyDescription`. Fetched properties are never stored, so they do
/// not affect the entity's version hash beyond their name and flags.
open class NSFetchedPropertyDescription: NSPropertyDescription, @unchecked Sendable {
    /// The request that computes the property, as the model describes it.
    public var fetchRequestDescription: FetchRequestDescription? {
        willSet { checkEditable("fetchRequestDescription") }
    }

    public override init() { super.init() }
}
