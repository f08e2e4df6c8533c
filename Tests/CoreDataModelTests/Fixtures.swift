import Foundation

/// Paths of the test fixtures. They are read from the source tree (not as bundle resources) so
/// that the files are exactly those Apple's tools wrote, with their original folder names.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let models = root.appendingPathComponent("models")

    static let sampleModel = models.appendingPathComponent("CoreDataPlus/SampleModel.xcdatamodeld")
    static let mappingModelXML = models.appendingPathComponent("CoreDataPlus/V2toV3.xcmappingmodel/xcmapping.xml")
    static let coreStoreModel = models.appendingPathComponent("CoreStore/Model.xcdatamodeld")
    static let magicalRecordModel = models.appendingPathComponent("MagicalRecord/TestModel.xcdatamodeld")

    /// Writes `contents` as a one-version model (`Name.xcdatamodel/contents`) in a fresh temporary
    /// folder and returns the `.xcdatamodel` URL.
    static func writeModel(_ contents: String, name: String = "Broken") throws -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("coredata-tests-\(UUID().uuidString)")
            .appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try contents.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return folder
    }
}
