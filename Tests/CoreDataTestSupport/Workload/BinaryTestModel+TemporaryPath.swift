import CoreDataTestModel
import Foundation

extension BinaryTestModel {
    /// A path named `name` in a new folder of its own under the temporary directory. Here, not
    /// in CoreDataTestModel, because only the tests make files; the store tests have always
    /// asked the model for it.
    package static func temporaryPath(_ name: String = "store") -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("binary-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name).path
    }
}
