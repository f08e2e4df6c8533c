// The suites that import CoreDataTestSupport see the test models (BinaryTestModel,
// AllTypesModel) without importing CoreDataTestModel themselves, as when the models lived here.
@_exported import CoreDataTestModel
