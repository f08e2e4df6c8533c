import CoreDataModel
import Foundation

/// A model version named by its `versionChecksum`, for a staged migration's custom stages.
///
/// Matches Apple's `NSManagedObjectModelReference`. The model is loaded when a migration first
/// needs it; a reference whose model cannot be loaded, or whose checksum differs from the one
/// given, makes the migration fail with `NSMigrationMissingSourceModelError` naming it.
///
/// Threading: immutable once made; loading the model is guarded by a lock.
open class NSManagedObjectModelReference: NSObject, @unchecked Sendable {
    /// The model version's `versionChecksum` (Base64), as Xcode shows it in the model inspector.
    public let versionChecksum: String
    private let load: () -> NSManagedObjectModel?
    private let lock = NSLock()
    private var loaded: NSManagedObjectModel??

    /// A reference to a model already in memory.
    public init(model: NSManagedObjectModel, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        load = { model }
        super.init()
    }

    /// A reference to the model at `fileURL` (a `.xcdatamodel` version folder, or a package's current version).
    public init(fileURL: URL, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        load = { NSManagedObjectModel(contentsOf: fileURL) }
        super.init()
    }

    /// A reference to the version of the model named `modelName` in `bundle` (the main bundle for
    /// `nil`) whose checksum is `versionChecksum`: every version of the bundle's `modelName`
    /// package is looked at.
    public init(name modelName: String, in bundle: Bundle?, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        load = {
            let bundle = bundle ?? .main
            for ext in ["xcdatamodeld", "momd"] {
                guard let url = bundle.url(forResource: modelName, withExtension: ext),
                      let package = try? XcodeModelPackage(contentsOf: url) else { continue }
                for name in package.versionNames {
                    if let model = try? package.loadModel(version: name), model.versionChecksum == versionChecksum { return model }
                }
            }
            return bundle.url(forResource: modelName, withExtension: "xcdatamodel").flatMap(NSManagedObjectModel.init(contentsOf:))
        }
        super.init()
    }

    /// A reference to the model among `bundle`'s models whose entity version hashes are these.
    public init(entityVersionHashes: [AnyHashable: Any], inBundle bundle: Bundle?, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        let metadata: [String: Any] = [NSStoreModelVersionHashesKey: Dictionary(uniqueKeysWithValues: entityVersionHashes.compactMap { key, value in (key as? String).map { ($0, value) } })]
        load = {
            let resources = (bundle ?? .main).resourceURL
            let names = resources.flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0.path) } ?? []
            for name in names.sorted() where name.hasSuffix(".xcdatamodeld") || name.hasSuffix(".momd") {
                guard let resources, let package = try? XcodeModelPackage(contentsOf: resources.appendingPathComponent(name)) else { continue }
                for version in package.versionNames {
                    if let model = try? package.loadModel(version: version), model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return model }
                }
            }
            return nil
        }
        super.init()
    }

    /// The model, loaded on first use; traps when it cannot be loaded (Apple's raises), so a
    /// migration checks `model` first.
    open var resolvedModel: NSManagedObjectModel {
        guard let model else { preconditionFailure("CoreData: NSManagedObjectModelReference cannot load the model with checksum \(versionChecksum)") }
        return model
    }

    /// The model, or `nil` when it cannot be loaded or its checksum is not ``versionChecksum``.
    var model: NSManagedObjectModel? {
        lock.lock()
        defer { lock.unlock() }
        if let loaded { return loaded }
        let model = load().flatMap { $0.versionChecksum == versionChecksum ? $0 : nil }
        loaded = .some(model)
        return model
    }
}
