import Foundation
import XCTest

/// The conformance inputs Apple's tools wrote, as copied into the repository's fixtures
/// (`Tests/CoreDataModelTests/Fixtures`, whose README names their source and licence), so that
/// every clone runs these tests.
enum Conformance {
    /// The repository root: this file is `Tests/CoreDataArchiveTests/Support/Conformance.swift`.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let root = repositoryRoot.appendingPathComponent("Tests/CoreDataModelTests/Fixtures")
    static let appleCompiled = root.appendingPathComponent("apple-compiled")
    static let mappingModel = appleCompiled.appendingPathComponent("V2toV3.cdm")
    static let momd = appleCompiled.appendingPathComponent("SampleModel.momd")
    static let mappingXML = root.appendingPathComponent("models/CoreDataPlus/V2toV3.xcmappingmodel/xcmapping.xml")

    /// The file's bytes.
    static func data(_ url: URL) throws -> Data {
        try Data(contentsOf: url)
    }

    /// The `valueexpressiondata` attributes of `xcmapping.xml` (each an archived NSExpression, in
    /// base64 across several lines), in file order.
    static func valueExpressionBlobs() throws -> [Data] {
        let text = String(decoding: try data(mappingXML), as: UTF8.self)
        let opening = "<attribute name=\"valueexpressiondata\" type=\"binary\">"
        var blobs: [Data] = []
        var rest = text[...]
        while let start = rest.range(of: opening) {
            guard let end = rest.range(of: "</attribute>", range: start.upperBound..<rest.endIndex) else { break }
            let base64 = String(rest[start.upperBound..<end.lowerBound])
            if let blob = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) { blobs.append(blob) }
            rest = rest[end.upperBound...]
        }
        return blobs
    }
}
