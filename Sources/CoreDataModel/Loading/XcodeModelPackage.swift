import Foundation

/// A versioned Xcode model package (`Name.xcdatamodeld`): one `Name N.xcdatamodel` folder per
/// version and a `.xccurrentversion` property list naming the current one. Or its compiled form
/// (`Name.momd`): one `Name N.mom` file per version and a `VersionInfo.plist` naming the current
/// one (Formats/compiled-model.md §1).
///
/// This is how every version of a model stays reachable on Linux, where there is no compiled
/// `.momd`: migration loads the version a store was made with and the current one side by side.
/// The package is recognised by its contents, not its extension, so a copy renamed `Name.momd`
/// (for code that asks its bundle for `"momd"`) works too.
public struct XcodeModelPackage: Sendable {
    /// The package folder.
    public let url: URL
    /// The names of the versions (folder names without `.xcdatamodel`), in natural order
    /// (`Model`, `Model 2`, …, `Model 10`).
    public let versionNames: [String]
    /// The name of the current version.
    public let currentVersionName: String
    /// Whether the package is Xcode's compiled form (`.mom` versions), not its source.
    public let isCompiled: Bool

    static let versionExtension = "xcdatamodel"
    static let currentVersionFile = ".xccurrentversion"
    static let currentVersionKey = "_XCCurrentVersionName"
    static let contentsFile = "contents"
    /// Formats/compiled-model.md §1.
    static let compiledVersionExtension = "mom"
    static let compiledVersionInfoFile = "VersionInfo.plist"
    static let compiledCurrentVersionKey = "NSManagedObjectModel_CurrentVersionName"

    /// Reads the package's version list and current version.
    ///
    /// - Throws: ``ModelError`` with code `.unreadableFile` when the folder cannot be listed,
    ///   `.malformedFile` for a `.xccurrentversion` that is not a property list, and
    ///   `.missingVersion` when the current version is missing or cannot be decided.
    public init(contentsOf url: URL) throws(ModelError) {
        self.url = url
        let fileManager = FileManager.default
        let listing: [String]
        do {
            listing = try fileManager.contentsOfDirectory(atPath: url.path)
        } catch {
            throw ModelError(.unreadableFile, "cannot list the model package: \(error.localizedDescription)", file: url)
        }
        func versions(_ suffix: String) -> [String] {
            listing
                .filter { $0.hasSuffix("." + suffix) }
                .map { String($0.dropLast(suffix.count + 1)) }
                .sorted { $0.compare($1, options: [.numeric]) == .orderedAscending }
        }
        var names = versions(Self.versionExtension)
        isCompiled = names.isEmpty && !versions(Self.compiledVersionExtension).isEmpty
        if isCompiled { names = versions(Self.compiledVersionExtension) }
        guard !names.isEmpty else {
            throw ModelError(.missingVersion, "the model package holds no .xcdatamodel version (nor a compiled .mom one)", file: url)
        }
        versionNames = names
        let versionExtension = isCompiled ? Self.compiledVersionExtension : Self.versionExtension

        let marker = url.appendingPathComponent(isCompiled ? Self.compiledVersionInfoFile : Self.currentVersionFile)
        if fileManager.fileExists(atPath: marker.path) {
            let declared = try Self.readCurrentVersion(marker, key: isCompiled ? Self.compiledCurrentVersionKey : Self.currentVersionKey)
            let name = declared.hasSuffix("." + versionExtension) ? String(declared.dropLast(versionExtension.count + 1)) : declared
            guard names.contains(name) else {
                throw ModelError(
                    .missingVersion,
                    "\(isCompiled ? Self.compiledCurrentVersionKey : Self.currentVersionKey) names '\(declared)', but the package has only \(names.map { "'\($0).\(versionExtension)'" }.joined(separator: ", "))",
                    file: marker)
            }
            currentVersionName = name
        } else if names.count == 1 {
            currentVersionName = names[0]
        } else {
            throw ModelError(
                .missingVersion, "the package has \(names.count) versions and no \(marker.lastPathComponent) to say which is current",
                file: url)
        }
    }

    /// The folder of one version (its `.mom` file in a compiled package).
    public func versionURL(named name: String) -> URL {
        isCompiled
            ? url.appendingPathComponent("\(name).\(Self.compiledVersionExtension)", isDirectory: false)
            : url.appendingPathComponent("\(name).\(Self.versionExtension)", isDirectory: true)
    }

    /// Loads one version of the model.
    ///
    /// - Throws: ``ModelError`` naming the file, line and element of the first problem.
    public func loadModel(version name: String) throws(ModelError) -> NSManagedObjectModel {
        guard versionNames.contains(name) else {
            throw ModelError(.missingVersion, "the package has no version named '\(name)'", file: url)
        }
        return try NSManagedObjectModel(validatingContentsOf: versionURL(named: name))
    }

    /// Loads the current version.
    public func loadCurrentModel() throws(ModelError) -> NSManagedObjectModel {
        try loadModel(version: currentVersionName)
    }

    private static func readCurrentVersion(_ marker: URL, key: String) throws(ModelError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: marker)
        } catch {
            throw ModelError(.unreadableFile, "cannot read the file: \(error.localizedDescription)", file: marker)
        }
        return try currentVersionName(fromPropertyList: data, file: marker, key: key)
    }

    /// Decodes the contents of a `.xccurrentversion` file: the version name its
    /// `_XCCurrentVersionName` key holds, as written (usually with the `.xcdatamodel` suffix).
    ///
    /// Does no I/O, so tools and fuzz targets decode bytes without a package on disk.
    ///
    /// - Parameter file: the file the bytes came from, named in errors.
    /// - Throws: ``ModelError`` with code `.malformedFile` when the bytes are not a property list,
    ///   `.missingVersion` when it has no non-empty string under `_XCCurrentVersionName`.
    public static func currentVersionName(fromPropertyList data: Data, file: URL? = nil) throws(ModelError) -> String {
        try currentVersionName(fromPropertyList: data, file: file, key: currentVersionKey)
    }

    /// The version name under `key` (`_XCCurrentVersionName` in a `.xccurrentversion`,
    /// `NSManagedObjectModel_CurrentVersionName` in a compiled package's `VersionInfo.plist`).
    static func currentVersionName(fromPropertyList data: Data, file: URL?, key currentVersionKey: String) throws(ModelError) -> String {
        let plist: Any
        do {
            plist = try PropertyListBytes.decode(data)
        } catch {
            throw ModelError(.malformedFile, error.message, file: file)
        }
        guard let dictionary = plist as? [String: Any], let name = dictionary[currentVersionKey] as? String, !name.isEmpty else {
            throw ModelError(.missingVersion, "the property list has no string '\(currentVersionKey)'", file: file)
        }
        return name
    }
}
