import CoreDataModel
import Foundation

/// How a store saved with one model version reaches another: the version it was saved with,
/// and the mapping of each step (one when the versions map directly, else one per version
/// between them).
package struct MigrationPlan {
    /// One model version, by its name in its package.
    package typealias Version = (name: String, model: NSManagedObjectModel)
    /// One migration from a version to the next.
    package struct Step {
        package let source: Version
        package let destination: Version
        package let mapping: NSMappingModel
        /// Whether the mapping was inferred (no mapping model was found).
        package let inferred: Bool
    }

    /// The version the store was saved with.
    package let source: Version
    /// The steps, in order; empty when the store is already at the destination version.
    package let steps: [Step]

    /// Plans the migration of a store whose metadata is `metadata` to `destination`.
    ///
    /// - Parameters:
    ///   - store: the store's path, for messages.
    ///   - versions: the model versions known, in version order (``StoreMigration/knownVersions(of:)``).
    ///   - mappingFolders: where to look for mapping model files (``MappingModelSearch``).
    ///   - mappingModels: mapping models to use where they fit, before those files.
    ///   - infers: whether a mapping may be inferred when no mapping model is found.
    ///
    /// The mapping is, in order of preference: a mapping model from the store's version to the
    /// destination; a chain through the versions between when a mapping model exists for one of
    /// its steps (the other steps inferred), since that model is the app's own way through its
    /// version; an inferred direct mapping; a chain of inferred steps.
    /// - Throws: 134130 when no version matches the store, 134140 when no mapping is found or
    ///   can be inferred (the inference's 134190 error underneath, its changes in `userInfo`).
    package init(
        store: String, metadata: [String: Any], versions: [Version], destination: NSManagedObjectModel,
        configuration: String?, mappingFolders: [URL] = [], mappingModels: [NSMappingModel] = [], infers: Bool
    ) throws {
        let destinationName = versions.first { $0.model.versionChecksum == destination.versionChecksum }?.name ?? "current"
        if destination.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata) {
            source = (destinationName, destination)
            steps = []
            return
        }
        guard let sourceIndex = versions.firstIndex(where: { $0.model.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata) }) else {
            let recorded = (metadata[NSStoreModelVersionHashesKey] as? [String: Any])?.keys.sorted() ?? []
            throw coreDataError(
                NSMigrationMissingSourceModelError,
                "the store at \(store) was saved with a model version this app does not have (its entities: \(recorded.joined(separator: ", "))); searched \(versions.isEmpty ? "no model package (load the model from its .xcdatamodeld)" : versions.map(\.name).joined(separator: ", "))")
        }
        source = versions[sourceIndex]
        let target: Version = (destinationName, destination)
        // The files are read once for every pair of versions the plan tries.
        let candidates = mappingModels + MappingModelSearch.load(in: mappingFolders)
        func mappingModel(_ from: Version, _ to: Version) -> NSMappingModel? {
            candidates.first { MappingModelSearch.fits($0, from: from.model, to: to.model, names: (from.name, to.name)) }
        }
        if let mapping = mappingModel(source, target) {
            steps = [Step(source: source, destination: target, mapping: mapping, inferred: false)]
            return
        }
        let destinationIndex = versions.firstIndex { $0.model.versionChecksum == destination.versionChecksum }
        if let destinationIndex, destinationIndex > sourceIndex + 1 {
            let path = (sourceIndex..<destinationIndex).map { index in
                (versions[index], index + 1 == destinationIndex ? target : versions[index + 1])
            }
            let files = path.map { mappingModel($0.0, $0.1) }
            if files.contains(where: { $0 != nil }) {
                var chain: [Step] = []
                for ((from, to), file) in zip(path, files) {
                    if let file {
                        chain.append(Step(source: from, destination: to, mapping: file, inferred: false))
                        continue
                    }
                    guard infers else {
                        throw coreDataError(
                            NSMigrationMissingMappingModelError,
                            "the store at \(store) migrates through model version '\(from.name)': no mapping model to version '\(to.name)' was found, and NSInferMappingModelAutomaticallyOption is off")
                    }
                    do {
                        chain.append(Step(source: from, destination: to, mapping: try NSMappingModel.inferredMappingModel(forSourceModel: from.model, destinationModel: to.model), inferred: true))
                    } catch let refused as NSError {
                        throw Self.missingMapping("cannot migrate the store at \(store) from model version '\(from.name)' to '\(to.name)'", refused: refused)
                    }
                }
                steps = chain
                return
            }
        }
        guard infers else {
            throw coreDataError(
                NSMigrationMissingMappingModelError,
                "the store at \(store) was saved with model version '\(source.name)': no mapping model to version '\(destinationName)' was found, and NSInferMappingModelAutomaticallyOption is off")
        }
        do {
            steps = [Step(source: source, destination: target, mapping: try NSMappingModel.inferredMappingModel(forSourceModel: source.model, destinationModel: destination), inferred: true)]
        } catch let direct as NSError {
            // No direct mapping: walk the versions between, each step inferred.
            guard let destinationIndex, destinationIndex > sourceIndex + 1,
                  let chain = try? (sourceIndex..<destinationIndex).map({ index in
                      Step(
                          source: versions[index], destination: index + 1 == destinationIndex ? target : versions[index + 1],
                          mapping: try NSMappingModel.inferredMappingModel(forSourceModel: versions[index].model, destinationModel: versions[index + 1].model),
                          inferred: true)
                  })
            else {
                throw Self.missingMapping("cannot migrate the store at \(store) from model version '\(source.name)'", refused: direct)
            }
            steps = chain
        }
    }
}

extension MigrationPlan {
    /// 134140 for a mapping inference refused (`refused`, 134190): its message and changes
    /// carried over, the inference's error underneath.
    static func missingMapping(_ context: String, refused: NSError) -> NSError {
        coreDataError(
            NSMigrationMissingMappingModelError, "\(context): \(refused.localizedDescription)",
            [NSUnderlyingErrorKey: refused, "changes": refused.userInfo["changes"] ?? []])
    }
}
