import Foundation
import XCTest

@testable import CoreDataModel

/// Broken model files and broken models built in code: every problem must be reported as a
/// `ModelError` with the right code, file, line, element and a message that names the bad value,
/// and `init(contentsOf:)` must return `nil` for it.
///
/// The XML of each test is written one element per line; line 1 is the `<?xml …?>` declaration and
/// line 2 the `<model>` element, so the expected line numbers can be read off the literal.
final class BrokenModelTests: XCTestCase {

    // MARK: Helpers

    private static let header = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
        """

    /// Writes `xml` as a one-version model and returns the `.xcdatamodel` folder and its `contents` file.
    private func writeModel(_ xml: String) throws -> (folder: URL, contents: URL) {
        try writeModel(Data(xml.utf8))
    }

    private func writeModel(_ bytes: Data) throws -> (folder: URL, contents: URL) {
        let folder = try Fixtures.writeModel("")
        let contents = folder.appendingPathComponent("contents")
        try bytes.write(to: contents)
        removeAfterTest(folder.deletingLastPathComponent())
        return (folder, contents)
    }

    private func temporaryFolder(_ name: String) throws -> URL {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-tests-\(UUID().uuidString)")
        let folder = parent.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        removeAfterTest(parent)
        return folder
    }

    private func removeAfterTest(_ url: URL) {
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    }

    /// Loads `url` with both initializers and returns the error, failing when it loads.
    private func loadError(_ url: URL, file: StaticString = #filePath, line: UInt = #line) -> ModelError? {
        XCTAssertNil(NSManagedObjectModel(contentsOf: url), "init(contentsOf:) loaded a broken model", file: file, line: line)
        do throws(ModelError) {
            let model = try NSManagedObjectModel(validatingContentsOf: url)
            XCTFail("init(validatingContentsOf:) loaded a broken model: \(model)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// Checks a problem reported for a file (no entity/property lookup involved, or not only).
    private func check(
        _ error: ModelError?, code: ModelError.Code, file expectedFile: URL, line expectedLine: Int?,
        element: String?, mentions: [String], xml: String? = nil,
        file testFile: StaticString = #filePath, line testLine: UInt = #line
    ) {
        guard let error else { return }
        XCTAssertEqual(error.code, code, "code; error: \(error)", file: testFile, line: testLine)
        XCTAssertEqual(error.file?.path, expectedFile.path, "file; error: \(error)", file: testFile, line: testLine)
        XCTAssertEqual(error.line, expectedLine, "line; error: \(error)", file: testFile, line: testLine)
        XCTAssertEqual(error.element, element, "element; error: \(error)", file: testFile, line: testLine)
        for value in mentions {
            XCTAssertTrue(
                error.message.contains(value), "message should name \(value): \(error.message)", file: testFile, line: testLine)
        }
        let prefix = expectedLine.map { "\(expectedFile.path):\($0): " } ?? "\(expectedFile.path): "
        let text = String(describing: error)
        XCTAssertTrue(text.hasPrefix(prefix), "description should start with \(prefix): \(text)", file: testFile, line: testLine)
        XCTAssertTrue(text.hasSuffix(error.message), "description should end with the message: \(text)", file: testFile, line: testLine)
        if let element {
            XCTAssertTrue(text.contains(element), "description should name \(element): \(text)", file: testFile, line: testLine)
        }
        // Self-check of the test's own line counting: the reported line holds the element.
        if let xml, let expectedLine, let element {
            let lines = xml.components(separatedBy: "\n")
            let start = String(element.dropLast())  // `<relationship name="owner"` without the `>`
            XCTAssertTrue(
                expectedLine <= lines.count && lines[expectedLine - 1].contains(start),
                "test XML line \(expectedLine) does not hold \(start)", file: testFile, line: testLine)
        }
    }

    /// Writes `xml`, loads it from the `.xcdatamodel` folder and from its `contents` file, and checks
    /// that both report the same expected problem.
    @discardableResult
    private func assertBroken(
        _ xml: String, code: ModelError.Code, line expectedLine: Int?, element: String?, mentions: [String],
        file testFile: StaticString = #filePath, line testLine: UInt = #line
    ) throws -> ModelError? {
        let (folder, contents) = try writeModel(xml)
        let error = loadError(folder, file: testFile, line: testLine)
        check(
            error, code: code, file: contents, line: expectedLine, element: element, mentions: mentions, xml: xml,
            file: testFile, line: testLine)
        let direct = loadError(contents, file: testFile, line: testLine)
        XCTAssertEqual(direct, error, "loading the contents file directly should report the same", file: testFile, line: testLine)
        return error
    }

    // MARK: Not XML

    func testUnclosedTag() throws {
        let xml = """
            \(Self.header)
                <entity name="A">
                    <attribute name="x" attributeType="String">
                </entity>
            </model>
            """
        let (folder, contents) = try writeModel(xml)
        let error = loadError(folder)
        check(error, code: .malformedFile, file: contents, line: error?.line, element: nil, mentions: ["not well-formed XML"])
        XCTAssertNotNil(error?.line)
        XCTAssertEqual(error?.line, 5, "the first error (the tag mismatch), not where the parser stopped")
    }

    func testStrayClosingTag() throws {
        let xml = """
            \(Self.header)
                <entity name="A">
                </entity>
                </entity>
            </model>
            """
        let (folder, contents) = try writeModel(xml)
        check(loadError(folder), code: .malformedFile, file: contents, line: 5, element: nil,
              mentions: ["not well-formed XML"])
    }

    func testUnclosedRootAtEndOfFile() throws {
        let xml = """
            \(Self.header)
                <entity name="A">
                    <attribute name="x" attributeType="String"/>
                </entity>

            """
        let (folder, contents) = try writeModel(xml)
        let error = loadError(folder)
        check(error, code: .malformedFile, file: contents, line: error?.line, element: nil, mentions: ["not well-formed XML"])
        XCTAssertNotNil(error?.line)
    }

    func testGarbageBytes() throws {
        let xml = """
            \(Self.header)
                <entity name="A">
                    @@@ <<< not xml >>> &&&
                </entity>
            </model>
            """
        let (folder, contents) = try writeModel(xml)
        check(
            loadError(folder), code: .malformedFile, file: contents, line: 4, element: nil,
            mentions: ["not well-formed XML"])
    }

    /// Regression (fuzzer, FuzzModelLoader): `]`, `σ`, a stray continuation byte and `?`. The
    /// UTF-8 check's offset came from a decoder that reads ahead and indexed past the data.
    func testInvalidUTF8AtTheEndIsReportedAtItsByte() throws {
        let bytes = Data([0x5D, 0xCF, 0x83, 0x83, 0x3F])
        XCTAssertThrowsError(try NSManagedObjectModel(xcodeModelContents: bytes)) { error in
            XCTAssertEqual((error as? ModelError)?.code, .malformedFile, "\(error)")
            XCTAssertTrue("\(error)".contains("byte 3 (0x83) is not valid UTF-8"), "\(error)")
        }
    }

    func testUTF8CheckFindsTheFirstBadSequence() {
        let cases: [([UInt8], Int?)] = [
            (Array("plain <model/>".utf8), nil),
            (Array("é σ € 😀".utf8), nil),
            ([0xC0, 0x80], 0),  // overlong NUL
            ([0x41, 0xE0, 0x80, 0x80], 1),  // overlong three-byte form
            ([0x41, 0x42, 0xED, 0xA0, 0x80], 2),  // a UTF-16 surrogate
            ([0xF4, 0x90, 0x80, 0x80], 0),  // above U+10FFFF
            (Array("abc".utf8) + [0xE2, 0x82], 3),  // cut short at the end
            (Array("ab".utf8) + [0x80], 2),  // a stray continuation byte
            ([0xE2, 0x82, 0x41], 0),  // a continuation byte missing
            ([0xFF], 0),
        ]
        for (bytes, expected) in cases {
            XCTAssertEqual(ModelXMLDocument.firstInvalidUTF8Offset(Data(bytes)), expected, "\(bytes)")
        }
    }

    func testGarbageAfterRootElement() throws {
        let xml = """
            \(Self.header)
                <entity name="A">
                    <attribute name="x" attributeType="String"/>
                </entity>
            </model>
            @@@ garbage after the model
            """
        let (folder, contents) = try writeModel(xml)
        check(loadError(folder), code: .malformedFile, file: contents, line: 7, element: nil,
              mentions: ["not well-formed XML"])
    }

    func testEmptyFile() throws {
        let (folder, contents) = try writeModel(Data())
        check(
            loadError(folder), code: .malformedFile, file: contents, line: nil, element: nil,
            mentions: ["not well-formed XML", "no root element"])
    }

    func testWhitespaceOnlyFile() throws {
        let (folder, contents) = try writeModel("  \n\n  \n")
        let error = loadError(folder)
        check(error, code: .malformedFile, file: contents, line: error?.line, element: nil, mentions: ["not well-formed XML"])
    }

    func testBinaryBytesWithNUL() throws {
        let bytes = Data([0x00, 0xFF, 0xFE, 0x01, 0x00, 0x3C, 0x6D, 0x00, 0x80, 0x0A, 0xC3, 0x28])
        let (folder, contents) = try writeModel(bytes)
        check(loadError(folder), code: .malformedFile, file: contents, line: 1, element: nil, mentions: ["not well-formed XML"])
    }

    func testNULByteInsideDocument() throws {
        let xml = """
            \(Self.header)
                <entity name="A">\u{0}\u{1}
                </entity>
            </model>
            """
        let (folder, contents) = try writeModel(xml)
        check(loadError(folder), code: .malformedFile, file: contents, line: 3, element: nil, mentions: ["not well-formed XML"])
    }

    func testInvalidUTF8InsideDocument() throws {
        var bytes = Data("""
            \(Self.header)
                <entity name="
            """.utf8)
        bytes.append(contentsOf: [0xC3, 0x28, 0xFF])
        bytes.append(contentsOf: Data("\"/>\n</model>\n".utf8))
        let (folder, contents) = try writeModel(bytes)
        let error = loadError(folder)
        check(error, code: .malformedFile, file: contents, line: error?.line, element: nil, mentions: ["not well-formed XML"])
        XCTAssertNotNil(error?.line)
        XCTAssertEqual(error?.line, 3)
    }

    func testInvalidUTF8InElementName() throws {
        var bytes = Data("""
            \(Self.header)
                <ent
            """.utf8)
        bytes.append(0xFF)
        bytes.append(contentsOf: Data("ity name=\"A\"/>\n</model>\n".utf8))
        let (folder, contents) = try writeModel(bytes)
        check(loadError(folder), code: .malformedFile, file: contents, line: 3, element: nil,
              mentions: ["not well-formed XML"])
    }

    func testRootElementIsNotModel() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
                <dict>
                    <key>name</key>
                </dict>
            </plist>
            """
        try assertBroken(xml, code: .notAModel, line: 2, element: "<plist>", mentions: ["<plist>", "<model>"])
    }

    // MARK: Attributes

    func testUnknownAttributeType() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="title" attributeType="String"/>
                    <attribute name="huge" attributeType="Integer 128"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .unknownAttributeType, line: 5, element: #"<attribute name="huge">"#,
            mentions: ["'Integer 128'", "'Integer 64'"])
    }

    func testMissingEntityName() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="title" attributeType="String"/>
                </entity>
                <entity representedClassName="Nameless">
                    <attribute name="title" attributeType="String"/>
                </entity>
            </model>
            """
        try assertBroken(xml, code: .missingAttribute, line: 6, element: "<entity>", mentions: ["'name'"])
    }

    func testMissingPropertyName() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="title" attributeType="String"/>
                    <attribute optional="YES" attributeType="String"/>
                </entity>
            </model>
            """
        try assertBroken(xml, code: .missingAttribute, line: 5, element: "<attribute>", mentions: ["'name'"])
    }

    func testEmptyNameAttribute() throws {
        let xml = """
            \(Self.header)
                <entity name="">
                </entity>
            </model>
            """
        try assertBroken(xml, code: .missingAttribute, line: 3, element: #"<entity name="">"#, mentions: ["'name'"])
    }

    func testMissingAttributeType() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="title" optional="YES"/>
                </entity>
            </model>
            """
        try assertBroken(xml, code: .missingAttribute, line: 4, element: #"<attribute name="title">"#, mentions: ["'attributeType'"])
    }

    func testBadBooleanFlag() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="title" attributeType="String"/>
                    <attribute name="note" optional="MAYBE" attributeType="String"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 5, element: #"<attribute name="note">"#, mentions: [#"optional="MAYBE""#])
    }

    func testDefaultValueInteger16OutOfRange() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="small" attributeType="Integer 16" defaultValueString="70000" usesScalarValueType="YES"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 4, element: #"<attribute name="small">"#, mentions: ["'70000'", "Integer 16"])
    }

    func testDefaultValueInteger32NotANumber() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="count" attributeType="Integer 32" defaultValueString="abc" usesScalarValueType="YES"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 4, element: #"<attribute name="count">"#, mentions: ["'abc'", "Integer 32"])
    }

    func testDefaultValueBooleanMaybe() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="title" attributeType="String"/>
                    <attribute name="done" attributeType="Boolean" defaultValueString="maybe" usesScalarValueType="YES"/>
                </entity>
            </model>
            """
        try assertBroken(xml, code: .invalidValue, line: 5, element: #"<attribute name="done">"#, mentions: ["'maybe'"])
    }

    func testDefaultValueUUIDMalformed() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="identifier" attributeType="UUID" defaultValueString="xyz"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 4, element: #"<attribute name="identifier">"#, mentions: ["'xyz'", "UUID"])
    }

    func testDefaultValueDecimalWithTrailingLetters() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="price" attributeType="Decimal" defaultValueString="12abc"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 4, element: #"<attribute name="price">"#, mentions: ["'12abc'", "decimal"])
    }

    func testInvalidRegularExpression() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="code" attributeType="String" regularExpressionString="[a-"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 4, element: #"<attribute name="code">"#, mentions: ["'[a-'", "regular expression"])
    }

    // MARK: Relationships

    func testRelationshipToMissingEntity() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Ghost"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .missingEntity, line: 5, element: #"<relationship name="owner">"#, mentions: ["'Ghost'"])
    }

    func testRelationshipWithoutDestination() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .missingAttribute, line: 4, element: #"<relationship name="owner">"#, mentions: ["'destinationEntity'"])
    }

    func testInverseNamingMissingRelationship() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="vehicles" inverseEntity="Person"/>
                </entity>
                <entity name="Person">
                    <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidInverse, line: 4, element: #"<relationship name="owner">"#, mentions: ["'vehicles'", "'Person'"])
    }

    func testInverseNamingAnAttribute() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="name" inverseEntity="Person"/>
                </entity>
                <entity name="Person">
                    <attribute name="name" attributeType="String"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidInverse, line: 4, element: #"<relationship name="owner">"#, mentions: ["'name'", "'Person'"])
    }

    /// `Car.owner`'s inverse is `Person.cars`, but `Person.cars`'s inverse is `Car.previousOwner`.
    func testInverseThatDoesNotPointBack() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
                    <relationship name="previousOwner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
                </entity>
                <entity name="Person">
                    <attribute name="name" attributeType="String"/>
                    <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="previousOwner" inverseEntity="Car"/>
                </entity>
            </model>
            """
        let error = try assertBroken(
            xml, code: .invalidInverse, line: 5, element: #"<relationship name="owner">"#,
            mentions: ["'Person.cars'", "'Car.previousOwner'", "does not point back"])
        XCTAssertEqual(error?.entityName, "Car")
        XCTAssertEqual(error?.propertyName, "owner")
    }

    /// The inverse exists but on an entity that is not the destination (nor one of its superentities).
    func testInverseOnAnotherEntity() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Garage"/>
                </entity>
                <entity name="Garage">
                    <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
                </entity>
                <entity name="Person">
                    <attribute name="name" attributeType="String"/>
                </entity>
            </model>
            """
        let error = try assertBroken(
            xml, code: .invalidInverse, line: 4, element: #"<relationship name="owner">"#,
            mentions: ["'cars'", "'Garage'", "'Person'"])
        XCTAssertEqual(error?.entityName, "Car")
        XCTAssertEqual(error?.propertyName, "owner")
    }

    func testInverseEntityNamingMissingEntity() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Ghost"/>
                </entity>
                <entity name="Person">
                    <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .missingEntity, line: 4, element: #"<relationship name="owner">"#, mentions: ["'Ghost'"])
    }

    func testNonNumericMaxCount() throws {
        let xml = """
            \(Self.header)
                <entity name="Person">
                    <relationship name="cars" optional="YES" toMany="YES" maxCount="many" deletionRule="Nullify" destinationEntity="Person"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 4, element: #"<relationship name="cars">"#, mentions: [#"maxCount="many""#])
    }

    func testNonNumericMinCount() throws {
        let xml = """
            \(Self.header)
                <entity name="Person">
                    <relationship name="cars" optional="YES" toMany="YES" minCount="1.5" deletionRule="Nullify" destinationEntity="Person"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 4, element: #"<relationship name="cars">"#, mentions: [#"minCount="1.5""#])
    }

    func testNegativeMinCount() throws {
        let xml = """
            \(Self.header)
                <entity name="Person">
                    <relationship name="cars" optional="YES" toMany="YES" minCount="-1" deletionRule="Nullify" destinationEntity="Person"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 4, element: #"<relationship name="cars">"#, mentions: [#"minCount="-1""#])
    }

    func testMinCountLargerThanMaxCountOnToMany() throws {
        let xml = """
            \(Self.header)
                <entity name="Person">
                    <attribute name="name" attributeType="String"/>
                    <relationship name="friends" toMany="YES" minCount="5" maxCount="3" deletionRule="Nullify" destinationEntity="Person"/>
                </entity>
            </model>
            """
        let error = try assertBroken(
            xml, code: .invalidCount, line: 5, element: #"<relationship name="friends">"#, mentions: ["minCount 5", "maxCount 3"])
        XCTAssertEqual(error?.entityName, "Person")
        XCTAssertEqual(error?.propertyName, "friends")
    }

    func testToOneWithMaxCountFive() throws {
        let xml = """
            \(Self.header)
                <entity name="Person">
                    <relationship name="partner" optional="YES" maxCount="5" deletionRule="Nullify" destinationEntity="Person"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidCount, line: 4, element: #"<relationship name="partner">"#, mentions: ["maxCount 1", "not 5"])
    }

    func testToManyWithMaxCountOne() throws {
        let xml = """
            \(Self.header)
                <entity name="Person">
                    <relationship name="friends" optional="YES" toMany="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidCount, line: 4, element: #"<relationship name="friends">"#, mentions: ["maxCount 1"])
    }

    func testOrderedToOne() throws {
        let xml = """
            \(Self.header)
                <entity name="Person">
                    <relationship name="partner" optional="YES" maxCount="1" ordered="YES" deletionRule="Nullify" destinationEntity="Person"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidCount, line: 4, element: #"<relationship name="partner">"#, mentions: ["ordered"])
    }

    func testUnknownDeletionRule() throws {
        let xml = """
            \(Self.header)
                <entity name="Person">
                    <relationship name="partner" optional="YES" maxCount="1" deletionRule="Obliterate" destinationEntity="Person"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .unknownDeleteRule, line: 4, element: #"<relationship name="partner">"#,
            mentions: ["'Obliterate'", "Cascade"])
    }

    // MARK: Constraints and indexes

    // The consistency check knows only the entity and the property name, and the reader keeps no
    // location for `<constraint>` or `<fetchIndexElement>`, so these errors point at the entity's
    // line (see the report).

    func testUniquenessConstraintOnMissingProperty() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="title" attributeType="String"/>
                </entity>
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                    <uniquenessConstraints>
                        <uniquenessConstraint>
                            <constraint value="plate"/>
                            <constraint value="serialNumber"/>
                        </uniquenessConstraint>
                    </uniquenessConstraints>
                </entity>
            </model>
            """
        let error = try assertBroken(
            xml, code: .missingProperty, line: 11, element: #"<constraint value="serialNumber">"#, mentions: ["'serialNumber'"])
        XCTAssertEqual(error?.entityName, "Car")
        XCTAssertEqual(error?.propertyName, "serialNumber")
    }

    func testFetchIndexOnMissingProperty() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                    <fetchIndex name="byMileage">
                        <fetchIndexElement property="mileage" type="Binary" order="ascending"/>
                    </fetchIndex>
                </entity>
            </model>
            """
        let error = try assertBroken(
            xml, code: .missingProperty, line: 6, element: #"<fetchIndexElement property="mileage">"#, mentions: ["'byMileage'", "'mileage'"])
        XCTAssertEqual(error?.entityName, "Car")
        XCTAssertEqual(error?.propertyName, "mileage")
    }

    func testCompoundIndexOnMissingProperty() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                    <compoundIndexes>
                        <compoundIndex>
                            <index value="plate"/>
                            <index value="colour"/>
                        </compoundIndex>
                    </compoundIndexes>
                </entity>
            </model>
            """
        let error = try assertBroken(
            xml, code: .missingProperty, line: 8, element: #"<index value="colour">"#, mentions: ["'colour'"])
        XCTAssertEqual(error?.propertyName, "colour")
    }

    func testFetchIndexWithUnknownOrder() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                    <fetchIndex name="byPlate">
                        <fetchIndexElement property="plate" type="Binary" order="sideways"/>
                    </fetchIndex>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .invalidValue, line: 6, element: #"<fetchIndexElement property="plate">"#, mentions: ["'sideways'"])
    }

    // MARK: Inheritance

    func testInheritanceCycle() throws {
        let xml = """
            \(Self.header)
                <entity name="A" parentEntity="B">
                    <attribute name="a" attributeType="String"/>
                </entity>
                <entity name="B" parentEntity="A">
                    <attribute name="b" attributeType="String"/>
                </entity>
            </model>
            """
        try assertBroken(xml, code: .inheritanceCycle, line: 3, element: #"<entity name="A">"#, mentions: ["A → B → A"])
    }

    func testLongerInheritanceCycleBehindAnInnocentEntity() throws {
        let xml = """
            \(Self.header)
                <entity name="Leaf" parentEntity="A">
                </entity>
                <entity name="A" parentEntity="B">
                </entity>
                <entity name="B" parentEntity="C">
                </entity>
                <entity name="C" parentEntity="A">
                </entity>
            </model>
            """
        try assertBroken(xml, code: .inheritanceCycle, line: 5, element: #"<entity name="A">"#, mentions: ["A → B → C → A"])
    }

    func testSelfParent() throws {
        let xml = """
            \(Self.header)
                <entity name="Item">
                    <attribute name="title" attributeType="String"/>
                </entity>
                <entity name="Node" parentEntity="Node">
                    <attribute name="value" attributeType="String"/>
                </entity>
            </model>
            """
        try assertBroken(xml, code: .inheritanceCycle, line: 6, element: #"<entity name="Node">"#, mentions: ["Node → Node"])
    }

    func testParentEntityMissing() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                </entity>
                <entity name="SportCar" parentEntity="Vehicle">
                    <attribute name="topSpeed" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                </entity>
            </model>
            """
        try assertBroken(xml, code: .missingEntity, line: 6, element: #"<entity name="SportCar">"#, mentions: ["'Vehicle'"])
    }

    func testPropertyShadowingInheritedProperty() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                    <attribute name="model" optional="YES" attributeType="String"/>
                </entity>
                <entity name="SportCar" parentEntity="Car">
                    <attribute name="topSpeed" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
                    <attribute name="model" optional="YES" attributeType="String"/>
                </entity>
            </model>
            """
        let error = try assertBroken(
            xml, code: .duplicateProperty, line: 9, element: #"<attribute name="model">"#, mentions: ["'model'"])
        XCTAssertEqual(error?.entityName, "SportCar")
        XCTAssertEqual(error?.propertyName, "model")
    }

    // MARK: Duplicates

    func testDuplicateEntityNames() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                </entity>
                <entity name="Person">
                    <attribute name="name" attributeType="String"/>
                </entity>
                <entity name="Car">
                    <attribute name="colour" attributeType="String"/>
                </entity>
            </model>
            """
        try assertBroken(xml, code: .duplicateEntity, line: 9, element: #"<entity name="Car">"#, mentions: ["'Car'"])
    }

    func testDuplicatePropertyNames() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                    <attribute name="colour" attributeType="String"/>
                    <relationship name="plate" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Car"/>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .duplicateProperty, line: 6, element: #"<relationship name="plate">"#, mentions: ["'Car'", "'plate'"])
    }

    // MARK: Configurations and fetch requests

    func testConfigurationMemberEntityMissing() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                </entity>
                <configuration name="Cloud">
                    <memberEntity name="Car"/>
                    <memberEntity name="Ghost"/>
                </configuration>
            </model>
            """
        try assertBroken(
            xml, code: .missingEntity, line: 8, element: #"<memberEntity name="Ghost">"#, mentions: ["'Cloud'", "'Ghost'"])
    }

    func testFetchRequestOnMissingEntity() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="plate" attributeType="String"/>
                </entity>
                <fetchRequest name="AllCars" entity="Car"/>
                <fetchRequest name="AllGhosts" entity="Ghost" predicateString="name != nil"/>
            </model>
            """
        try assertBroken(
            xml, code: .missingEntity, line: 7, element: #"<fetchRequest name="AllGhosts">"#, mentions: ["'AllGhosts'", "'Ghost'"])
    }

    func testFetchedPropertyOnMissingEntity() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <fetchedProperty name="ghosts" optional="YES">
                        <fetchRequest name="fetchedPropertyFetchRequest" entity="Ghost"/>
                    </fetchedProperty>
                </entity>
            </model>
            """
        try assertBroken(
            xml, code: .missingEntity, line: 4, element: #"<fetchedProperty name="ghosts">"#, mentions: ["'Ghost'"])
    }

    func testMultiLineStartTagIsPlacedOnItsFirstLine() throws {
        let xml = """
            \(Self.header)
                <entity name="Car">
                    <attribute name="size"
                        attributeType="Integer 128"
                        optional="YES"/>
                </entity>
            </model>
            """
        try assertBroken(xml, code: .unknownAttributeType, line: 4, element: #"<attribute name="size">"#, mentions: [])
    }

    // MARK: Packages and paths

    private static func currentVersionPlist(_ name: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>_XCCurrentVersionName</key>
        \t<string>\(name)</string>
        </dict>
        </plist>
        """
    }

    private static let goodContents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Item">
                <attribute name="title" attributeType="String"/>
            </entity>
        </model>
        """

    /// A `Model.xcdatamodeld` with the given versions (each a valid one-entity model).
    private func writePackage(versions: [String], currentVersion: Data? = nil) throws -> URL {
        let package = try temporaryFolder("Model.xcdatamodeld")
        for version in versions {
            let folder = package.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(Self.goodContents.utf8).write(to: folder.appendingPathComponent("contents"))
        }
        if let currentVersion {
            try currentVersion.write(to: package.appendingPathComponent(".xccurrentversion"))
        }
        return package
    }

    /// Checks the error from both loaders, the model initializer and `XcodeModelPackage`.
    private func checkPackage(
        _ package: URL, code: ModelError.Code, file expectedFile: URL, mentions: [String],
        file testFile: StaticString = #filePath, line testLine: UInt = #line
    ) {
        let error = loadError(package, file: testFile, line: testLine)
        check(
            error, code: code, file: expectedFile, line: nil, element: nil, mentions: mentions, file: testFile, line: testLine)
        do throws(ModelError) {
            let loaded = try XcodeModelPackage(contentsOf: package)
            XCTFail("XcodeModelPackage read a broken package: \(loaded.versionNames)", file: testFile, line: testLine)
        } catch let packageError {
            XCTAssertEqual(packageError, error, "XcodeModelPackage should report the same", file: testFile, line: testLine)
        }
    }

    func testPackageWithValidCurrentVersionLoads() throws {
        let package = try writePackage(versions: ["Model", "Model 2"], currentVersion: Data(Self.currentVersionPlist("Model 2.xcdatamodel").utf8))
        let model = try NSManagedObjectModel(validatingContentsOf: package)
        XCTAssertNotNil(model.entitiesByName["Item"])
        XCTAssertEqual(try XcodeModelPackage(contentsOf: package).currentVersionName, "Model 2")
    }

    func testPackageCurrentVersionNamesMissingVersion() throws {
        let package = try writePackage(
            versions: ["Model", "Model 2"], currentVersion: Data(Self.currentVersionPlist("Model 3.xcdatamodel").utf8))
        checkPackage(
            package, code: .missingVersion, file: package.appendingPathComponent(".xccurrentversion"),
            mentions: ["'Model 3.xcdatamodel'", "'Model.xcdatamodel'", "'Model 2.xcdatamodel'"])
    }

    func testPackageCurrentVersionIsNotAPropertyList() throws {
        let package = try writePackage(versions: ["Model", "Model 2"], currentVersion: Data("<<<not a plist".utf8))
        checkPackage(
            package, code: .malformedFile, file: package.appendingPathComponent(".xccurrentversion"),
            mentions: ["not a property list"])
    }

    /// Regression (fuzzer, FuzzCurrentVersion / FuzzLogFrame): a binary property list holding a set
    /// crashed the process inside Foundation; it is now a malformed-file error naming the object.
    func testPackageCurrentVersionIsABinaryPlistHoldingASet() throws {
        // bplist00, object 0: a set (0xC1) of object 1, the string "Model 2.xcdatamodel".
        var plist = Array("bplist00".utf8) + [0xC1, 0x01] + [0x5F, 0x10, 0x13] + Array("Model 2.xcdatamodel".utf8)
        let offsets = [UInt8(8), UInt8(10)]
        let table = plist.count
        plist += offsets
        plist += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 2] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        let package = try writePackage(versions: ["Model", "Model 2"], currentVersion: Data(plist))
        checkPackage(
            package, code: .malformedFile, file: package.appendingPathComponent(".xccurrentversion"),
            mentions: ["object 0 at byte 8 is a set"])
        plist[8] = 0xA1  // the same list with an array instead: Foundation reads it, the key is missing
        XCTAssertThrowsError(try XcodeModelPackage.currentVersionName(fromPropertyList: Data(plist))) { error in
            XCTAssertEqual((error as? ModelError)?.code, .missingVersion, "\(error)")
        }
    }

    func testPackageCurrentVersionIsAPropertyListWithoutTheKey() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>
            \t<key>SomethingElse</key>
            \t<string>Model.xcdatamodel</string>
            </dict>
            </plist>
            """
        let package = try writePackage(versions: ["Model", "Model 2"], currentVersion: Data(plist.utf8))
        checkPackage(
            package, code: .missingVersion, file: package.appendingPathComponent(".xccurrentversion"),
            mentions: ["_XCCurrentVersionName"])
    }

    func testPackageWithTwoVersionsAndNoCurrentVersion() throws {
        let package = try writePackage(versions: ["Model", "Model 2"])
        checkPackage(package, code: .missingVersion, file: package, mentions: ["2 versions", ".xccurrentversion"])
    }

    func testPackageWithZeroVersions() throws {
        let package = try writePackage(versions: [])
        checkPackage(package, code: .missingVersion, file: package, mentions: ["no .xcdatamodel version"])
    }

    func testPackageWhoseCurrentVersionHasNoContents() throws {
        let package = try writePackage(versions: ["Model"])
        try FileManager.default.removeItem(at: package.appendingPathComponent("Model.xcdatamodel/contents"))
        let error = loadError(package)
        check(
            error, code: .missingVersion, file: package.appendingPathComponent("Model.xcdatamodel/contents"), line: nil,
            element: nil, mentions: ["'Model'"])
    }

    /// A `.xcdatamodel` folder that lost its `contents` file says so.
    func testModelFolderWithoutContents() throws {
        let (folder, contents) = try writeModel(Self.goodContents)
        try FileManager.default.removeItem(at: contents)
        check(loadError(folder), code: .unreadableFile, file: folder, line: nil, element: nil, mentions: ["'contents'"])
    }

    func testPathThatDoesNotExist() throws {
        let missing = try temporaryFolder("here").appendingPathComponent("Nowhere.xcdatamodeld")
        check(loadError(missing), code: .unreadableFile, file: missing, line: nil, element: nil, mentions: [])
        let contents = missing.appendingPathComponent("Nowhere.xcdatamodel/contents")
        check(loadError(contents), code: .unreadableFile, file: contents, line: nil, element: nil, mentions: [])
    }

    // MARK: Models built in code

    private func entity(_ name: String, _ properties: [NSPropertyDescription] = []) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.properties = properties
        return entity
    }

    private func attribute(_ name: String, _ type: NSAttributeType = .stringAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        return attribute
    }

    private func relationship(_ name: String, to destination: NSEntityDescription?, toMany: Bool = false) -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.maxCount = toMany ? 0 : 1
        return relationship
    }

    private func assertFreezeFails(
        _ model: NSManagedObjectModel, code: ModelError.Code, entityName: String?, propertyName: String?, mentions: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do throws(ModelError) {
            try model.freeze()
            XCTFail("freeze() accepted a broken model", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, code, "error: \(error)", file: file, line: line)
            XCTAssertEqual(error.entityName, entityName, "error: \(error)", file: file, line: line)
            XCTAssertEqual(error.propertyName, propertyName, "error: \(error)", file: file, line: line)
            XCTAssertNil(error.file, file: file, line: line)
            XCTAssertNil(error.line, file: file, line: line)
            for value in mentions {
                XCTAssertTrue(error.message.contains(value), "message should name \(value): \(error.message)", file: file, line: line)
            }
        }
        XCTAssertFalse(model.isFrozen, "a model that failed to freeze must stay editable", file: file, line: line)
    }

    func testFreezeRejectsInverseThatDoesNotPointBack() {
        let car = entity("Car")
        let person = entity("Person")
        let owner = relationship("owner", to: person)
        let previousOwner = relationship("previousOwner", to: person)
        let cars = relationship("cars", to: car, toMany: true)
        owner.inverseRelationship = cars
        previousOwner.inverseRelationship = cars
        cars.inverseRelationship = previousOwner
        car.properties = [attribute("plate"), owner, previousOwner]
        person.properties = [attribute("name"), cars]
        let model = NSManagedObjectModel()
        model.entities = [car, person]
        assertFreezeFails(
            model, code: .invalidInverse, entityName: "Car", propertyName: "owner",
            mentions: ["'Person.cars'", "'Car.previousOwner'"])
    }

    func testFreezeRejectsRelationshipWithoutDestination() {
        let car = entity("Car", [attribute("plate"), relationship("owner", to: nil)])
        let model = NSManagedObjectModel()
        model.entities = [car]
        assertFreezeFails(
            model, code: .missingEntity, entityName: "Car", propertyName: "owner", mentions: ["destination"])
    }

    func testFreezeRejectsDestinationOutsideTheModel() {
        let stranger = entity("Stranger")
        let car = entity("Car", [relationship("owner", to: stranger)])
        let model = NSManagedObjectModel()
        model.entities = [car]
        assertFreezeFails(model, code: .missingEntity, entityName: "Car", propertyName: "owner", mentions: ["'Stranger'"])
        withExtendedLifetime(stranger) {}
    }

    func testFreezeRejectsInheritanceCycleMadeWithSubentities() {
        let a = entity("A", [attribute("a")])
        let b = entity("B", [attribute("b")])
        a.subentities = [b]
        b.subentities = [a]
        let model = NSManagedObjectModel()
        model.entities = [a, b]
        // Lookups on the cyclic entities must end.
        XCTAssertEqual(Set(a.properties.map(\.name)), ["a", "b"])
        XCTAssertTrue(a.isKindOf(entity: b))
        assertFreezeFails(model, code: .inheritanceCycle, entityName: "A", propertyName: nil, mentions: ["A → B → A"])
    }

    func testFreezeRejectsSelfSubentity() {
        let node = entity("Node", [attribute("value")])
        node.subentities = [node]
        let model = NSManagedObjectModel()
        model.entities = [node]
        assertFreezeFails(model, code: .inheritanceCycle, entityName: "Node", propertyName: nil, mentions: ["Node → Node"])
    }

    func testFreezeRejectsConstraintOnMissingProperty() {
        let car = entity("Car", [attribute("plate")])
        car.uniquenessConstraints = [["plate", "serialNumber"]]
        let model = NSManagedObjectModel()
        model.entities = [car]
        assertFreezeFails(
            model, code: .missingProperty, entityName: "Car", propertyName: "serialNumber", mentions: ["'serialNumber'"])
    }

    func testFreezeRejectsIndexOnMissingProperty() {
        let car = entity("Car", [attribute("plate")])
        car.indexes = [NSFetchIndexDescription(
            name: "byMileage", elements: [NSFetchIndexElementDescription(propertyName: "mileage", collationType: .binary)])]
        let model = NSManagedObjectModel()
        model.entities = [car]
        assertFreezeFails(
            model, code: .missingProperty, entityName: "Car", propertyName: "mileage", mentions: ["'byMileage'", "'mileage'"])
    }

    func testFreezeRejectsDuplicateEntityNames() {
        let model = NSManagedObjectModel()
        model.entities = [entity("Car"), entity("Car")]
        assertFreezeFails(model, code: .duplicateEntity, entityName: "Car", propertyName: nil, mentions: ["'Car'"])
    }

    func testFreezeRejectsMinCountAboveMaxCount() {
        let person = entity("Person")
        let friends = relationship("friends", to: person, toMany: true)
        friends.minCount = 5
        friends.maxCount = 3
        person.properties = [friends]
        let model = NSManagedObjectModel()
        model.entities = [person]
        assertFreezeFails(
            model, code: .invalidCount, entityName: "Person", propertyName: "friends", mentions: ["minCount 5", "maxCount 3"])
    }

    func testFreezeRejectsFetchRequestOnMissingEntity() {
        let model = NSManagedObjectModel()
        model.entities = [entity("Car", [attribute("plate")])]
        model.fetchRequestDescriptionsByName["AllGhosts"] = FetchRequestDescription(entityName: "Ghost")
        assertFreezeFails(model, code: .missingEntity, entityName: nil, propertyName: nil, mentions: ["'AllGhosts'", "'Ghost'"])
    }

    func testFreezeAcceptsAConsistentModelAndLookupsWork() throws {
        let vehicle = entity("Vehicle", [attribute("plate")])
        let car = entity("Car", [attribute("doors", .integer16AttributeType)])
        vehicle.subentities = [car]
        let person = entity("Person", [attribute("name")])
        let owner = relationship("owner", to: person)
        let vehicles = relationship("vehicles", to: vehicle, toMany: true)
        owner.inverseRelationship = vehicles
        vehicles.inverseRelationship = owner
        vehicle.properties = [attribute("plate"), owner]
        person.properties = [attribute("name"), vehicles]
        vehicle.uniquenessConstraints = [["plate"]]
        vehicle.indexes = [NSFetchIndexDescription(
            name: "byPlate", elements: [NSFetchIndexElementDescription(propertyName: "plate", collationType: .binary)])]
        let model = NSManagedObjectModel()
        model.entities = [vehicle, car, person]
        model.setEntities([vehicle, car], forConfigurationName: "Garage")
        model.fetchRequestDescriptionsByName["AllCars"] = FetchRequestDescription(entityName: "Car")

        try model.freeze()
        XCTAssertTrue(model.isFrozen)
        try model.freeze()  // freezing twice is harmless
        XCTAssertTrue(model.isFrozen)

        XCTAssertEqual(Set(model.entitiesByName.keys), ["Vehicle", "Car", "Person"])
        let frozenCar = try XCTUnwrap(model.entitiesByName["Car"])
        XCTAssertTrue(frozenCar === car)
        XCTAssertEqual(frozenCar.properties.map(\.name), ["plate", "owner", "doors"])
        XCTAssertEqual(frozenCar.attributesByName["doors"]?.attributeType, .integer16AttributeType)
        XCTAssertTrue(frozenCar.relationshipsByName["owner"] === owner)
        XCTAssertTrue(frozenCar.propertiesByName["plate"]?.entity === vehicle)
        XCTAssertTrue(frozenCar.superentity === vehicle)
        XCTAssertTrue(frozenCar.isKindOf(entity: vehicle))
        XCTAssertTrue(model.entitiesByName["Person"]?.relationshipsByName["vehicles"]?.inverseRelationship === owner)
        XCTAssertTrue(vehicle.indexes.first?.elements.first?.property === vehicle.propertiesByName["plate"])
        XCTAssertEqual(model.entities(forConfigurationName: "Garage")?.compactMap(\.name), ["Vehicle", "Car"])
        XCTAssertEqual(model.fetchRequestDescriptionsByName["AllCars"]?.entityName, "Car")
        XCTAssertEqual(frozenCar.versionHash, VersionHash.of(frozenCar))
        XCTAssertNil(model.entitiesByName["Ghost"])
        XCTAssertNil(frozenCar.propertiesByName["ghost"])
    }

    // MARK: Robustness

    /// Loads many deterministic mutations of a real model; each must load or throw `ModelError`
    /// (typed throws make anything else impossible), and none may crash or hang.
    func testMutatedRealModelNeverCrashesOrHangs() throws {
        let original = try Data(contentsOf: Fixtures.sampleModel.appendingPathComponent("SampleModel3.xcdatamodel/contents"))
        XCTAssertGreaterThan(original.count, 1000)
        let bytes = [UInt8](original)

        var mutations: [(String, Data)] = []
        for offset in stride(from: 0, to: bytes.count, by: 10) {
            mutations.append(("truncated at \(offset)", Data(bytes[..<offset])))
        }
        // Non-UTF-8 bytes are included: inside a name they used to crash FoundationXML's parser
        // (`testInvalidUTF8InElementName`); the loader now rejects them before parsing.
        let replacements: [UInt8] = [0x00, 0x3C, 0x3E, 0x22, 0x26, 0x0A, 0x3D, 0x2F, 0xFF, 0xC3, 0x80]
        for (position, offset) in stride(from: 3, to: bytes.count, by: 41).enumerated() {
            for mask: UInt8 in [0x01, 0x20, 0x80] {
                var flipped = bytes
                flipped[offset] ^= mask
                mutations.append(("byte \(offset) xor \(mask)", Data(flipped)))
            }
            var replaced = bytes
            replaced[offset] = replacements[position % replacements.count]
            mutations.append(("byte \(offset) set to \(replaced[offset])", Data(replaced)))
        }
        let text = String(decoding: original, as: UTF8.self)
        let pattern = try NSRegularExpression(pattern: #" [A-Za-z]+="[^"]*""#)
        let pairs = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text))
        XCTAssertGreaterThan(pairs.count, 50)
        for pair in pairs {
            let range = try XCTUnwrap(Range(pair.range, in: text))
            var mutated = text
            mutated.removeSubrange(range)
            mutations.append(("without \(text[range].dropFirst())", Data(mutated.utf8)))
        }
        XCTAssertGreaterThan(mutations.count, 300)
        XCTAssertTrue(original.allSatisfy { $0 < 0x80 }, "the fixture is expected to be ASCII")

        let (folder, contents) = try writeModel(original)
        XCTAssertNotNil(NSManagedObjectModel(contentsOf: folder), "the unmutated model should load")

        var loaded = 0
        var failed = 0
        for (label, data) in mutations {
            try data.write(to: contents)
            guard let outcome = Self.load(folder, timeout: 10) else {
                XCTFail("loading the model \(label) did not finish within 10 s")
                return
            }
            switch outcome {
            case .success:
                loaded += 1
            case .failure(let error):
                failed += 1
                XCTAssertEqual(error.file?.path, contents.path, "\(label): \(error)")
                XCTAssertFalse(error.message.isEmpty, "\(label): \(error)")
                if !data.isEmpty {
                    XCTAssertNotNil(error.line, "\(label): an error in a non-empty file should name a line: \(error)")
                }
            }
        }
        XCTAssertGreaterThan(loaded, 0)
        XCTAssertGreaterThan(failed, 0)
    }

    private final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Result<Void, ModelError>?
        func set(_ newValue: Result<Void, ModelError>) { lock.withLock { value = newValue } }
        func get() -> Result<Void, ModelError>? { lock.withLock { value } }
    }

    /// Loads on another thread so that a hang fails the test instead of blocking the run.
    private static func load(_ url: URL, timeout: TimeInterval) -> Result<Void, ModelError>? {
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            do throws(ModelError) {
                _ = try NSManagedObjectModel(validatingContentsOf: url)
                box.set(.success(()))
            } catch {
                box.set(.failure(error))
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return box.get()
    }
}
