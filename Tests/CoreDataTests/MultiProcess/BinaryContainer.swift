import CoreData
import CoreDataTestSupport
import Foundation

/// A container with the binary test model and one binary store at `path`, loaded, with the
/// store options given (`true` for each key): what both sides of a multi-process scenario open.
func loadedBinaryContainer(_ name: String, path: String, enabling keys: [String] = []) throws -> NSPersistentContainer {
    let container = NSPersistentContainer(name: name, managedObjectModel: BinaryTestModel.model)
    let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: path))
    description.type = NSBinaryStoreType
    for key in keys { description.setOption(true as NSNumber, forKey: key) }
    container.persistentStoreDescriptions = [description]
    var failure: Error?
    container.loadPersistentStores { _, error in failure = error }
    if let failure { throw failure }
    return container
}
