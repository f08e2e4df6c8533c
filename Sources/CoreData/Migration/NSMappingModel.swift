import CoreDataModel
import Foundation

/// How the objects of one model version become objects of another: one entity mapping per
/// destination entity (and per removed source entity).
///
/// Matches Apple's `NSMappingModel`. Get one from
/// ``inferredMappingModel(forSourceModel:destinationModel:)`` (lightweight migration) or build
/// one in code; ``NSMigrationManager`` runs it.
///
/// Linux difference: mapping model files (Xcode's `.xcmappingmodel` and compiled `.cdm`) are not
/// read yet, so ``init(from:forSourceModel:destinationModel:)`` finds none and returns `nil`, as
/// Apple's does when a bundle holds no matching mapping model.
///
/// Threading: plain data; do not change it while a migration uses it.
open class NSMappingModel: NSObject {
    /// The entity mappings, in the order the migration runs them.
    open var entityMappings: [NSEntityMapping]! = []

    /// The entity mappings by name.
    open var entityMappingsByName: [String: NSEntityMapping] {
        var byName: [String: NSEntityMapping] = [:]
        for mapping in entityMappings ?? [] { if let name = mapping.name { byName[name] = mapping } }
        return byName
    }

    public override init() { super.init() }

    /// The mapping model in `bundles` between two model versions; `nil` when there is none.
    ///
    /// Mapping model files are not read on Linux yet, so this returns `nil` (see the type's notes);
    /// code that falls back to ``inferredMappingModel(forSourceModel:destinationModel:)``, as
    /// Apple's own lightweight migration does, works unchanged.
    public convenience init?(from bundles: [Bundle]?, forSourceModel sourceModel: NSManagedObjectModel?, destinationModel: NSManagedObjectModel?) {
        return nil
    }

    /// Infers the mapping of a lightweight migration from the differences between two models.
    ///
    /// Follows Apple's rules: entities, attributes and relationships may be added or removed,
    /// and renamed through the destination's `renamingIdentifier` (the source's name or the
    /// source's own renaming identifier, so renames chain across versions); an attribute may
    /// become optional, or mandatory when it has a default value; integers may widen
    /// (16 → 32 → 64) and Float become Double; a relationship may change between to-one and
    /// to-many and between ordered and unordered; properties may move up or down an entity
    /// hierarchy. Anything else is refused.
    ///
    /// - Throws: `NSInferredMappingModelError` (134190) naming every change that cannot be
    ///   inferred (`Entity.property: String → Date`); `userInfo["changes"]` lists them.
    /// Complexity: linear in the number of properties of both models.
    open class func inferredMappingModel(forSourceModel sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel) throws -> NSMappingModel {
        let inference = MappingInference(source: sourceModel, destination: destinationModel)
        let (mapping, refusals) = inference.infer()
        guard refusals.isEmpty else {
            throw coreDataError(
                NSInferredMappingModelError,
                "Can't find or automatically infer mapping model for migration: " + refusals.joined(separator: "; "),
                ["changes": refusals])
        }
        return mapping
    }

    open override var description: String {
        "<NSMappingModel \((entityMappings ?? []).map { $0.name ?? "nil" }.joined(separator: ", "))>"
    }
}
