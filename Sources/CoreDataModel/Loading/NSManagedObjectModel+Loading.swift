import Foundation

extension NSManagedObjectModel {
    /// Loads an Xcode model: a `.xcdatamodeld` package (its current version), a `.xcdatamodel`
    /// folder, or a model's `contents` file; or Xcode's compiled form of one, a `.momd` folder
    /// (its current version) or a `.mom` file (Formats/compiled-model.md, which lists what a
    /// compiled model does not carry). Returns `nil` when the model cannot be loaded, as
    /// Apple's initializer does; use ``init(validatingContentsOf:)`` to learn why.
    public convenience init?(contentsOf url: URL) {
        do {
            try self.init(validatingContentsOf: url)
        } catch {
            return nil
        }
    }

    /// Loads an Xcode model like ``init(contentsOf:)``, throwing a ``ModelError`` that names the
    /// file, the line and the element of the first problem.
    ///
    /// The model is checked as a coordinator would check it: every reference resolves, inverses
    /// point back, constraints and indexes name real properties, inheritance has no cycle.
    /// Complexity: linear in the size of the file.
    public convenience init(validatingContentsOf url: URL) throws(ModelError) {
        self.init()
        let located = try ModelLocator.locate(url)
        try loadDocuments(try Self.read(located.documents))
        versionPackageURL = located.package
    }

    /// Loads a model from the XML of one Xcode model version (the `contents` file of a
    /// `.xcdatamodel` folder) already in memory.
    ///
    /// Does no I/O, so it suits models embedded in code and fuzzing. `sourceURL`, if given, is
    /// only used to name the file in errors.
    public convenience init(xcodeModelContents data: Data, sourceURL: URL? = nil) throws(ModelError) {
        self.init()
        try loadDocuments([(data, sourceURL)])
    }

    /// Loads a compiled model (the bytes of a `.mom` file, Formats/compiled-model.md) already in
    /// memory.
    ///
    /// Does no I/O, so it suits fuzzing and tools. `sourceURL`, if given, is only used to name the
    /// file in errors.
    ///
    /// - Throws: ``ModelError`` naming the archive object and key of the first problem, or the
    ///   model's first inconsistency.
    public convenience init(compiledModelData data: Data, sourceURL: URL? = nil) throws(ModelError) {
        self.init()
        try CompiledModelReader.read(data, file: sourceURL, into: self)
        try ModelConsistency.check(self)
    }

    /// Loads and combines every model found in the bundles' resources (`.xcdatamodeld`,
    /// `.xcdatamodel`, or copies renamed `.momd`/`.mom`); `nil` for `nil` means the main bundle.
    ///
    /// Returns `nil` when no model is found or the models cannot be combined (two declare the same
    /// entity), as Apple's does.
    public class func mergedModel(from bundles: [Bundle]?) -> NSManagedObjectModel? {
        let documents = (bundles ?? [Bundle.main]).flatMap(ModelLocator.modelResources(in:))
        guard !documents.isEmpty else { return nil }
        let model = NSManagedObjectModel()
        do {
            try model.loadDocuments(try read(documents))
        } catch {
            return nil
        }
        return model
    }

    /// The Base64 checksum (``versionChecksum``) of every version of a `.xcdatamodeld` package, by
    /// version name.
    public class func checksumsForVersionedModel(at url: URL) throws -> [String: String] {
        let package = try XcodeModelPackage(contentsOf: url)
        var checksums: [String: String] = [:]
        for name in package.versionNames {
            checksums[name] = try package.loadModel(version: name).versionChecksum
        }
        return checksums
    }

    private static func read(_ files: [URL]) throws(ModelError) -> [(Data, URL?)] {
        var documents: [(Data, URL?)] = []
        for file in files {
            do {
                documents.append((try Data(contentsOf: file), file))
            } catch {
                throw ModelError(.unreadableFile, "cannot read the model file: \(error.localizedDescription)", file: file)
            }
        }
        return documents
    }

    private func loadDocuments(_ documents: [(Data, URL?)]) throws(ModelError) {
        var readers: [XcodeModelReader] = []
        for (data, file) in documents {
            if CompiledModelReader.isCompiled(data) {
                try CompiledModelReader.read(data, file: file, into: self)
                continue
            }
            let root = try ModelXMLDocument.parse(data, file: file)
            var reader = XcodeModelReader(file: file)
            try reader.read(root, into: self)
            readers.append(reader)
        }
        do {
            try ModelConsistency.check(self)
        } catch {
            // Attribute the problem to the file that declared the entity it names.
            let reader = readers.first { $0.locations[error.entityName ?? ""] != nil } ?? readers.last
            throw reader.map { $0.locate(error) } ?? error
        }
    }
}

/// Finds model files on disk. Layouts are recognised by content, so renamed copies work.
enum ModelLocator {
    /// The XML documents that make up the model at `url`.
    static func documents(at url: URL) throws(ModelError) -> [URL] { try locate(url).documents }

    /// The XML documents that make up the model at `url`, and the versioned package `url` is
    /// when it is one (its current version's document is the one returned).
    static func locate(_ url: URL) throws(ModelError) -> (documents: [URL], package: URL?) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError(.unreadableFile, "no model file or folder exists here", file: url)
        }
        guard isDirectory.boolValue else { return ([url], nil) }
        let contents = url.appendingPathComponent(XcodeModelPackage.contentsFile)
        if FileManager.default.fileExists(atPath: contents.path) {
            return ([contents], nil)
        }
        let listing = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        let looksLikePackage = ["xcdatamodeld", "momd"].contains(url.pathExtension) || listing.contains {
            $0 == XcodeModelPackage.currentVersionFile || $0.hasSuffix("." + XcodeModelPackage.versionExtension)
                || $0 == XcodeModelPackage.compiledVersionInfoFile || $0.hasSuffix("." + XcodeModelPackage.compiledVersionExtension)
        }
        guard looksLikePackage else {
            throw ModelError(
                .unreadableFile,
                "this folder is neither a model version (it has no '\(XcodeModelPackage.contentsFile)' file) "
                    + "nor a model package (it has no .\(XcodeModelPackage.versionExtension) versions)",
                file: url)
        }
        let package = try XcodeModelPackage(contentsOf: url)
        let version = package.versionURL(named: package.currentVersionName)
        let current = package.isCompiled ? version : version.appendingPathComponent(XcodeModelPackage.contentsFile)
        guard FileManager.default.fileExists(atPath: current.path) else {
            throw ModelError(.missingVersion, "the current version '\(package.currentVersionName)' has no \(package.isCompiled ? "compiled model" : "contents") file", file: current)
        }
        return ([current], url)
    }

    static let resourceExtensions = ["xcdatamodeld", "xcdatamodel", "momd", "mom"]

    /// The model documents among a bundle's top-level resources, in name order.
    static func modelResources(in bundle: Bundle) -> [URL] {
        guard let resources = bundle.resourceURL,
              let names = try? FileManager.default.contentsOfDirectory(atPath: resources.path)
        else { return [] }
        return names.sorted()
            .filter { resourceExtensions.contains(($0 as NSString).pathExtension) }
            .compactMap { name in try? documents(at: resources.appendingPathComponent(name)) }
            .flatMap { $0 }
    }
}
