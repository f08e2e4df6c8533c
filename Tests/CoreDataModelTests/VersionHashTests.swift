import XCTest
@testable import CoreDataModel

/// The hash rules of `Formats/model-version-hash.md`: what changes a hash, what does not, and the
/// exact bytes of the worked example.
final class VersionHashTests: XCTestCase {
    // MARK: Builders

    private func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        return attribute
    }

    private func entity(_ name: String, _ properties: [NSPropertyDescription]) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.properties = properties
        return entity
    }

    /// Author ⟷ Book, the shape most tests vary one field of.
    private func library(
        edit: (NSEntityDescription, NSEntityDescription, NSRelationshipDescription, NSRelationshipDescription) -> Void = { _, _, _, _ in }
    ) -> NSManagedObjectModel {
        let books = NSRelationshipDescription()
        books.name = "books"
        books.maxCount = 0
        let author = NSRelationshipDescription()
        author.name = "author"
        author.maxCount = 1
        let authorEntity = entity("Author", [attribute("name", .stringAttributeType, optional: false), books])
        let bookEntity = entity("Book", [attribute("title", .stringAttributeType), attribute("pages", .integer32AttributeType), author])
        books.destinationEntity = bookEntity
        author.destinationEntity = authorEntity
        books.inverseRelationship = author
        author.inverseRelationship = books
        edit(authorEntity, bookEntity, books, author)
        let model = NSManagedObjectModel()
        model.entities = [authorEntity, bookEntity]
        return model
    }

    private func hashes(_ model: NSManagedObjectModel) -> [String: Data] { model.entityVersionHashesByName }

    // MARK: The worked example

    func testWorkedExampleFromTheSpec() {
        let title = attribute("title", .stringAttributeType)
        let note = entity("Note", [title])
        let model = NSManagedObjectModel()
        model.entities = [note]
        // Independent values: computed with Python's hashlib from the bytes the spec lists.
        XCTAssertEqual(title.versionHash.hex, "972983202dc5b0dca2ee773b0f6539b54cfa229c7530f954b3a1782319ae110c")
        XCTAssertEqual(note.versionHash.hex, "85838aab1ce75d7e9f64bb9339242b7ec930110799e029273f5c1bc9f4b3ccae")
        XCTAssertEqual(model.versionChecksum, "6vyoIHmbodXFI/2pyuZadw==")
    }

    func testHashesAre32BytesAndStableAcrossBuilds() {
        let first = hashes(library())
        let second = hashes(library())
        XCTAssertEqual(first.count, 2)
        XCTAssertEqual(first, second)
        XCTAssertTrue(first.values.allSatisfy { $0.count == 32 })
        XCTAssertNotEqual(first["Author"], first["Book"])
    }

    func testPropertyOrderDoesNotMatter() {
        let reordered = library { _, book, _, _ in book.properties = book.properties.reversed() }
        XCTAssertEqual(hashes(reordered), hashes(library()))
    }

    // MARK: What changes a hash

    func testEntityInputsChangeTheHash() {
        let base = hashes(library())
        let cases: [(String, NSManagedObjectModel)] = [
            ("entity name", library { _, book, _, _ in book.name = "Volume" }),
            ("abstract flag", library { _, book, _, _ in book.isAbstract = true }),
            ("entity modifier", library { _, book, _, _ in book.versionHashModifier = "v2" }),
            ("added attribute", library { _, book, _, _ in book.properties += [self.attribute("isbn", .stringAttributeType)] }),
            ("attribute type", library { _, book, _, _ in book.attributesByName["pages"]?.attributeType = .integer64AttributeType }),
            ("attribute name", library { _, book, _, _ in book.attributesByName["pages"]?.name = "pageCount" }),
            ("optional flag", library { _, book, _, _ in book.attributesByName["title"]?.isOptional = false }),
            ("transient flag", library { _, book, _, _ in book.attributesByName["title"]?.isTransient = true }),
            ("read-only flag", library { _, book, _, _ in book.attributesByName["title"]?.isReadOnly = true }),
            ("property modifier", library { _, book, _, _ in book.attributesByName["title"]?.versionHashModifier = "x" }),
            ("maxCount", library { _, book, _, author in author.maxCount = 0; _ = book }),
            ("minCount", library { _, _, _, author in author.minCount = 1 }),
        ]
        for (what, model) in cases {
            XCTAssertNotEqual(hashes(model)["Book"] ?? hashes(model)["Volume"], base["Book"], "changing the \(what) must change Book's hash")
        }
    }

    func testRelationshipInputsChangeTheOwningEntitysHash() {
        let base = hashes(library())
        XCTAssertNotEqual(hashes(library { _, _, books, _ in books.isOrdered = true })["Author"], base["Author"], "ordered")
        XCTAssertNotEqual(hashes(library { _, _, books, _ in books.inverseRelationship = nil })["Author"], base["Author"], "inverse")
        let retargeted = library { author, _, books, _ in books.destinationEntity = author }
        XCTAssertNotEqual(hashes(retargeted)["Author"], base["Author"], "destination")
    }

    func testSuperentityHashFlowsIntoSubentities() {
        func model(parentModifier: String?) -> NSManagedObjectModel {
            let parent = entity("Vehicle", [attribute("wheels", .integer16AttributeType)])
            parent.versionHashModifier = parentModifier
            let child = entity("Car", [attribute("plate", .stringAttributeType)])
            parent.subentities = [child]
            let result = NSManagedObjectModel()
            result.entities = [parent, child]
            return result
        }
        let plain = hashes(model(parentModifier: nil))
        let modified = hashes(model(parentModifier: "v2"))
        XCTAssertNotEqual(plain["Vehicle"], modified["Vehicle"])
        XCTAssertNotEqual(plain["Car"], modified["Car"], "a change in the superentity must change the subentity's hash")

        let orphan = entity("Car", [attribute("plate", .stringAttributeType)])
        XCTAssertNotEqual(orphan.versionHash, plain["Car"], "the superentity is part of the hash")
    }

    // MARK: What does not change a hash

    func testNonPersistentDetailsLeaveTheHashAlone() {
        let base = hashes(library())
        let cases: [(String, NSManagedObjectModel)] = [
            ("default value", library { _, book, _, _ in book.attributesByName["pages"]?.defaultValue = Int32(7) }),
            ("validation rules", library { _, book, _, _ in book.attributesByName["pages"]?.validationRules = [.minimumValue(1)] }),
            ("property userInfo", library { _, book, _, _ in book.attributesByName["title"]?.userInfo = ["k": "v"] }),
            ("entity userInfo", library { _, book, _, _ in book.userInfo = ["k": "v"] }),
            ("class name", library { _, book, _, _ in book.managedObjectClassName = "MyBook" }),
            ("renaming identifier", library { _, book, _, _ in book.renamingIdentifier = "OldBook" }),
            ("delete rule", library { _, _, _, author in author.deleteRule = .cascadeDeleteRule }),
            ("uniqueness constraint", library { _, book, _, _ in book.uniquenessConstraints = [["title"]] }),
            ("fetch index", library { _, book, _, _ in
                book.indexes = [NSFetchIndexDescription(name: "byTitle", elements: [NSFetchIndexElementDescription(propertyName: "title", collationType: .binary)])]
            }),
            ("value transformer", library { _, book, _, _ in book.attributesByName["title"]?.valueTransformerName = "T" }),
            ("external storage", library { _, book, _, _ in book.attributesByName["title"]?.allowsExternalBinaryDataStorage = true }),
        ]
        for (what, model) in cases {
            XCTAssertEqual(hashes(model), base, "changing the \(what) must not change any hash")
        }
    }

    // MARK: Model-level API

    func testVersionChecksumIgnoresEntityOrder() {
        let reversed = library()
        reversed.entities = reversed.entities.reversed()
        XCTAssertEqual(reversed.versionChecksum, library().versionChecksum)
        XCTAssertEqual(Data(base64Encoded: library().versionChecksum)?.count, 16)
    }

    func testStoreCompatibilityComparesHashesExactly() {
        let model = library()
        var metadata: [String: Any] = [NSStoreModelVersionHashesKey: model.entityVersionHashesByName]
        XCTAssertTrue(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))

        var changed = model.entityVersionHashesByName
        changed["Book"] = Data(repeating: 0, count: 32)
        metadata[NSStoreModelVersionHashesKey] = changed
        XCTAssertFalse(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))

        metadata[NSStoreModelVersionHashesKey] = ["Book": model.entityVersionHashesByName["Book"] as Any]
        XCTAssertFalse(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), "a missing entity")
        XCTAssertFalse(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [:]), "no hashes at all")
        XCTAssertFalse(model.isConfiguration(withName: "Nope", compatibleWithStoreMetadata: metadata), "unknown configuration")
    }

    func testFrozenModelAnswersFromItsCache() throws {
        let model = library()
        let before = hashes(model)
        try model.freeze()
        XCTAssertEqual(hashes(model), before)
        XCTAssertEqual(model.entitiesByName["Book"]?.attributesByName.keys.sorted(), ["pages", "title"])
    }
}

extension Data {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
