// The catalog the binary-store fuzz targets decode records against. They read and write with
// BinaryTestModel (CoreDataTestModel), the model of the golden store their seeds come from, so
// record bytes decode the same in every target, in the seed corpora and in the tests.
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataTestModel

extension BinaryTestModel {
    /// The catalog a new store of ``model`` starts with, as `BinaryStore.create` writes it: made
    /// from the model, so an attribute added to the model is in it too.
    package static let catalog: Catalog = BinaryStore.newCatalog(for: model)
}
