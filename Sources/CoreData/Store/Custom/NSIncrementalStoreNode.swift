import CoreDataModel
import Foundation

/// The values of one object as a user's ``NSIncrementalStore`` returns them from
/// `newValuesForObject(with:with:)`: attributes, and optionally to-one relationships.
///
/// Matches Apple's `NSIncrementalStoreNode`. Values are keyed by property name: an attribute's
/// value (a missing key reads as `nil`); a to-one relationship's destination as an
/// `NSManagedObjectID`, or `NSNull` for none. A relationship the node leaves out — every to-many
/// relationship, as a rule — is asked for later with
/// `newValue(forRelationship:forObjectWith:with:)`, when it is first used.
///
/// `version` drives optimistic locking: a store increments it each time it saves the object; a
/// save whose objects were read at an older version fails with `NSManagedObjectMergeError` (or
/// is resolved by the context's merge policy).
///
/// Threading: build and update a node on the store's call; the framework reads it at once.
open class NSIncrementalStoreNode: NSObject, @unchecked Sendable {
    /// The object the values belong to.
    public let objectID: NSManagedObjectID
    /// The number of times the object was saved; the store increments it on each save.
    public private(set) var version: UInt64
    private var values: [String: Any]

    /// Creates a node holding `values` for `objectID` at `version`.
    public init(objectID: NSManagedObjectID, withValues values: [String: Any], version: UInt64) {
        self.objectID = objectID
        self.values = values
        self.version = version
        super.init()
    }

    /// Replaces the node's values and version.
    open func update(withValues values: [String: Any], version: UInt64) {
        self.values = values
        self.version = version
    }

    /// The value of a property: an attribute's value, a to-one relationship's `NSManagedObjectID`
    /// or `NSNull`; `nil` when the node does not hold the property.
    open func value(for prop: NSPropertyDescription) -> Any? {
        values[prop.name]
    }

    /// Whether the node holds a value (possibly `NSNull`) for the property named `name`.
    func holdsValue(forKey name: String) -> Bool { values[name] != nil }
}
