import CoreDataPredicate
import Foundation

/// What a migration does with the objects of one entity (Apple's `NSEntityMappingType`).
public enum NSEntityMappingType: UInt, Sendable {
    case undefinedEntityMappingType = 0
    /// Objects are made by an entity migration policy.
    case customEntityMappingType = 1
    /// A new entity: the destination has no objects of it from the source.
    case addEntityMappingType = 2
    /// A removed entity: its source objects are not migrated.
    case removeEntityMappingType = 3
    /// The entity did not change: objects are copied as they are.
    case copyEntityMappingType = 4
    /// The entity changed: each object is made by the property mappings.
    case transformEntityMappingType = 5
}

/// How the objects of one source entity become objects of one destination entity.
///
/// Matches Apple's `NSEntityMapping`. The migration manager makes one destination object per
/// source object of ``sourceEntityName`` (not its subentities: each has its own mapping) and
/// sets each destination property from its ``attributeMappings`` and ``relationshipMappings``.
///
/// Threading: a mapping is plain data; do not change it while a migration uses it.
open class NSEntityMapping: NSObject {
    /// The mapping's name, unique in its mapping model (`SourceToDestination` when inferred).
    open var name: String!
    /// What the mapping does.
    open var mappingType: NSEntityMappingType = .undefinedEntityMappingType
    /// The source entity's name; `nil` for an added entity.
    open var sourceEntityName: String?
    /// The source entity's version hash, checked against the source model.
    open var sourceEntityVersionHash: Data?
    /// The destination entity's name; `nil` for a removed entity.
    open var destinationEntityName: String?
    /// The destination entity's version hash, checked against the destination model.
    open var destinationEntityVersionHash: Data?
    /// How each destination attribute gets its value.
    open var attributeMappings: [NSPropertyMapping]?
    /// How each destination relationship gets its destinations.
    open var relationshipMappings: [NSPropertyMapping]?
    /// The expression that fetches the source objects; `nil` for every object of the entity.
    open var sourceExpression: NSExpression?
    /// Values for the developer's own use.
    open var userInfo: [AnyHashable: Any]?
    /// The class name of the ``NSEntityMigrationPolicy`` subclass that migrates the objects;
    /// `nil` for the default policy.
    open var entityMigrationPolicyClassName: String?
    /// Whether the version hashes are Apple's (read from a compiled `.cdm`): the migration does
    /// not compare those with its models' hashes, which are this library's own until it
    /// reproduces Apple's (Formats/model-version-hash.md).
    var versionHashesAreApples = false

    public override init() { super.init() }

    open override var description: String {
        "<NSEntityMapping \(name ?? "nil") \(mappingType) \(sourceEntityName ?? "nil") → \(destinationEntityName ?? "nil")>"
    }
}
