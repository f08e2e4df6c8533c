import CoreDataModel
import CoreDataPredicate
import Foundation

/// How the objects of one model version become objects of another: one entity mapping per
/// destination entity (and per removed source entity).
///
/// Matches Apple's `NSMappingModel`. Get one from
/// ``inferredMappingModel(forSourceModel:destinationModel:)`` (lightweight migration) or build
/// one in code; ``NSMigrationManager`` runs it.
///
/// Mapping model files: ``init(contentsOf:)`` reads Xcode's `.xcmappingmodel` (the editor's
/// source) and `.cdm` (the compiled form); ``init(from:forSourceModel:destinationModel:)`` finds
/// one for a pair of model versions.
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

    /// The file the mapping was read from.
    var fileURL: URL?
    /// The model versions a `.xcmappingmodel` names (`…/Model.xcdatamodeld/Model 2.xcdatamodel`).
    var sourceModelPath: String?
    var destinationModelPath: String?

    public override init() { super.init() }

    /// Reads the mapping model at `url`: Xcode's `.xcmappingmodel` folder or a compiled `.cdm`.
    /// `nil` when there is no readable mapping model there, as on Apple platforms;
    /// ``init(validatingContentsOf:)`` says why.
    ///
    /// A file's content picks the reader (a binary property list is a compiled mapping model,
    /// whatever its name); both give the same mapping for a `.cdm` and the source it was compiled
    /// from, except that the source leaves some value expressions for the migration to fill in
    /// from the models, as Xcode's compiler does.
    public convenience init?(contentsOf url: URL?) {
        guard let url, let loaded = try? MappingModelFile.load(url) else { return nil }
        self.init(copying: loaded)
    }

    /// Reads the mapping model at `url`, throwing what is wrong with it.
    ///
    /// Linux addition (Apple's initializer only returns `nil`).
    /// - Throws: `NSMigrationError` (134110) naming the file and the problem: a missing file, XML
    ///   or a keyed archive that cannot be decoded (with the line or object number), an archived
    ///   object of another class than the one expected, a key a compiled `.cdm` must have that it
    ///   lacks (Formats/compiled-model.md §5).
    public convenience init(validatingContentsOf url: URL) throws {
        self.init(copying: try MappingModelFile.load(url))
    }

    private init(copying other: NSMappingModel) {
        entityMappings = other.entityMappings
        fileURL = other.fileURL
        sourceModelPath = other.sourceModelPath
        destinationModelPath = other.destinationModelPath
        super.init()
    }

    /// The mapping model in `bundles` (the main bundle when `nil`) between two model versions;
    /// `nil` when there is none.
    ///
    /// Looks at every `.cdm` and `.xcmappingmodel` in the bundles' resources and takes the first
    /// that fits both models (`MappingModelSearch`). Linux difference: Apple matches the entity
    /// version hashes recorded in a compiled mapping model, which are Apple's own hashes (not yet
    /// computed here), so the fit is checked by names instead: every entity mapping's source
    /// entity is one of `sourceModel`'s, and they are all of its entities; its destination entity
    /// is one of `destinationModel`'s; every property it maps is one of the destination entity's;
    /// every `$source.key` it reads is a property of the source entity.
    public convenience init?(from bundles: [Bundle]?, forSourceModel sourceModel: NSManagedObjectModel?, destinationModel: NSManagedObjectModel?) {
        guard let sourceModel, let destinationModel else { return nil }
        let folders = (bundles ?? [Bundle.main]).compactMap(\.resourceURL)
        guard let found = MappingModelSearch.find(in: folders, from: sourceModel, to: destinationModel) else { return nil }
        self.init(copying: found)
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
