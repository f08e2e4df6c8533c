// libFuzzer target: arbitrary bytes as a model package's `.xccurrentversion` property list
// (XML, binary or OpenStep plist). The reader must return a non-empty version name or throw a
// ModelError naming the problem; any crash, hang or sanitizer report is a bug.
import CoreDataModel
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Data(bytes: data, count: size)
    do {
        let name = try XcodeModelPackage.currentVersionName(fromPropertyList: bytes)
        precondition(!name.isEmpty, "an empty version name was accepted")
        // What the package does next with the name: strip the version extension.
        _ = name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
    } catch {
        precondition(error.code == .malformedFile || error.code == .missingVersion, "unexpected error code \(error.code)")
        _ = error.description
    }
    return 0
}
