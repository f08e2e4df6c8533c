// Fuzz target: arbitrary bytes as a model package's `.xccurrentversion` property list
// (XML, binary or OpenStep plist). The reader must return a non-empty version name or throw a
// ModelError naming the problem; any crash, hang or sanitizer report is a bug.
import CoreDataModel
import Foundation

/// The body of the `FuzzCurrentVersion` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzCurrentVersion {
    /// Reads `bytes` as a `.xccurrentversion` property list.
    ///
    /// Traps (`precondition`) when the reader accepts an empty name or throws an unexpected error code.
    public static func run(_ bytes: [UInt8]) {
        do {
            let name = try XcodeModelPackage.currentVersionName(fromPropertyList: Data(bytes))
            precondition(!name.isEmpty, "an empty version name was accepted")
            // What the package does next with the name: strip the version extension.
            _ = name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
        } catch {
            precondition(error.code == .malformedFile || error.code == .missingVersion, "unexpected error code \(error.code)")
            _ = error.description
        }
    }
}
