// Fuzz target: arbitrary bytes as an Xcode model file. The loader must throw a ModelError or
// return a model; any crash, hang or sanitizer report is a bug.
import CoreData

/// The body of the `FuzzModelLoader` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzModelLoader {
    /// Loads `bytes` as a model file's contents and touches what a coordinator would.
    ///
    /// Returns for every input; a crash is the bug the target looks for.
    public static func run(_ bytes: [UInt8]) {
        if let model = try? NSManagedObjectModel(xcodeModelContents: Data(bytes)) {
            // Touch what a coordinator would: hashes walk inheritance and relationships.
            _ = model.entityVersionHashesByName
            _ = model.versionChecksum
            for entity in model.entities { _ = entity.propertiesByName }
        }
    }
}
