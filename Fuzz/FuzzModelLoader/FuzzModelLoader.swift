// libFuzzer target: arbitrary bytes as an Xcode model file. The loader must throw a ModelError or
// return a model; any crash, hang or sanitizer report is a bug.
import CoreData

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Data(bytes: data, count: size)
    if let model = try? NSManagedObjectModel(xcodeModelContents: bytes) {
        // Touch what a coordinator would: hashes walk inheritance and relationships.
        _ = model.entityVersionHashesByName
        _ = model.versionChecksum
        for entity in model.entities { _ = entity.propertiesByName }
    }
    return 0
}
