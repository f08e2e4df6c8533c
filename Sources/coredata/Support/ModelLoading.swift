import CoreData

/// Loads `--model` arguments and checks them against stores.
enum ModelLoading {
    /// Loads a model package's current version (or `version`), a `.xcdatamodel` folder or a
    /// contents file.
    static func load(_ path: String, version: String? = nil) throws(CLIError) -> NSManagedObjectModel {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: path) else { throw CLIError(.badModel, "no such model: \(path)") }
        do {
            let model: NSManagedObjectModel
            if let version {
                model = try XcodeModelPackage(contentsOf: url).loadModel(version: version)
            } else {
                model = try NSManagedObjectModel(validatingContentsOf: url)
            }
            try? model.freeze()
            return model
        } catch {
            throw CLIError(.badModel, "the model \(path) does not load: \(error)")
        }
    }

    /// Checks that the store's metadata records this model's entity version hashes.
    static func requireMatch(_ model: NSManagedObjectModel, metadata: [String: Any], modelPath: String, storePath: String) throws(CLIError) {
        guard !model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else { return }
        guard let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any] else {
            throw CLIError(.badModel, "the model \(modelPath) does not match \(storePath): the store records no model version hashes")
        }
        let expected = model.entityVersionHashesByName
        var differences: [String] = []
        for name in Set(expected.keys).union(stored.keys).sorted() {
            switch (expected[name], stored[name] as? Data) {
            case (nil, _): differences.append("the store has entity \(name), the model does not")
            case (_, nil): differences.append("the model has entity \(name), the store does not")
            case (let a?, let b?) where a != b: differences.append("entity \(name) differs (version hash)")
            default: continue
            }
        }
        throw CLIError(.badModel, "the model \(modelPath) does not match \(storePath): \(differences.joined(separator: "; "))")
    }
}
