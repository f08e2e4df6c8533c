import CoreDataArchive
import Foundation
import XCTest

/// The keyed-archive layer (Formats/keyed-archive.md §4–§5): the frame, generic object access, the
/// unarchiver's value classes and its limits.
final class KeyedArchiveTests: XCTestCase {
    func testFrameAndGenericObjectAccess() throws {
        var builder = ArchiveBuilder()
        let root = builder.reserve()
        let name = builder.string("Ada")
        let tags = builder.array([builder.string("x"), builder.string("y")], mutable: true)
        builder.set(root, ["Person", "NSObject"], [
            ("name", .uid(name)), ("age", .int(36)), ("active", .bool(true)), ("ratio", .real(0.5)),
            ("blob", .data([1, 2])), ("tags", .uid(tags)), ("nothing", .uid(0)),
        ])
        let archive = try KeyedArchive(data: builder.data)
        XCTAssertEqual(archive.topKeys, ["root"])
        XCTAssertEqual(try archive.rootReference(), ArchiveReference(root))
        let person = try archive.object(at: archive.rootReference())
        XCTAssertEqual(person.className, "Person")
        XCTAssertEqual(person.classChain, ["Person", "NSObject"])
        XCTAssertEqual(person.keys, ["active", "age", "blob", "name", "nothing", "ratio", "tags"])
        XCTAssertEqual(try person.string(forKey: "name"), "Ada")
        XCTAssertEqual(try person.integer(forKey: "age"), 36)
        XCTAssertEqual(try person.bool(forKey: "active"), true)
        XCTAssertEqual(try person.double(forKey: "ratio"), 0.5)
        XCTAssertEqual(try person.data(forKey: "blob"), Data([1, 2]))
        XCTAssertNil(try person.string(forKey: "nothing"))
        XCTAssertNil(try person.reference(forKey: "nothing"))
        XCTAssertNil(try person.string(forKey: "missing"))
        XCTAssertEqual(person.value(forKey: "age"), .integer(36))
        let tagList = try archive.object(at: XCTUnwrap(person.reference(forKey: "tags")))
        XCTAssertTrue(tagList.isKind(of: "NSArray"))
        XCTAssertEqual(try tagList.references(forKey: "NS.objects").count, 2)
        XCTAssertEqual(try archive.entry(at: ArchiveReference(0)), .null)
        XCTAssertEqual(try archive.entry(at: ArchiveReference(name)), .value(.string("Ada")))
    }

    func testTypedFieldsNameWhatTheyFound() throws {
        var builder = ArchiveBuilder()
        let root = builder.reserve()
        let list = builder.array([])
        builder.set(root, ["Thing", "NSObject"], [("list", .uid(list)), ("count", .inlineString("three"))])
        let thing = try KeyedArchive(data: builder.data).object(at: ArchiveReference(root))
        XCTAssertThrowsError(try thing.string(forKey: "list")) { error in
            XCTAssertEqual("\(error)", "object 1 (Thing): list refers to object 2, an NSArray, expected an NSString")
            XCTAssertEqual((error as? KeyedArchiveError)?.kind, .wrongClass)
        }
        XCTAssertThrowsError(try thing.integer(forKey: "count")) { error in
            XCTAssertEqual("\(error)", "object 1 (Thing): count is a string, expected an integer")
        }
        XCTAssertThrowsError(try thing.reference(forKey: "count")) { error in
            XCTAssertEqual("\(error)", "object 1 (Thing): count is a string, expected a reference")
        }
    }

    func testUnarchiverDecodesFoundationValueClasses() throws {
        var builder = ArchiveBuilder()
        let root = builder.reserve()
        let string = builder.object(["NSMutableString", "NSString", "NSObject"], [("NS.string", .uid(builder.string("mutable")))])
        let number = builder.add(.int(7))
        let real = builder.add(.real(2.5))
        let flag = builder.add(.bool(true))
        let data = builder.object(["NSMutableData", "NSData", "NSObject"], [("NS.data", .data([0xCA, 0xFE]))])
        let date = builder.object(["NSDate", "NSObject"], [("NS.time", .real(700_000_000))])
        let uuidBytes: [UInt8] = Array(0..<16)
        let uuid = builder.object(["NSUUID", "NSObject"], [("NS.uuidbytes", .data(uuidBytes))])
        let null = builder.object(["NSNull", "NSObject"])
        let url = builder.object(["NSURL", "NSObject"], [("NS.base", .uid(0)), ("NS.relative", .uid(builder.string("https://example.com/a")))])
        let set = builder.object(["NSSet", "NSObject"], [("NS.objects", .uids([number, real]))])
        let ordered = builder.object(["NSMutableOrderedSet", "NSOrderedSet", "NSObject"], [("NS.objects", .uids([flag]))])
        let dictionary = builder.dictionary(keys: [builder.string("k")], values: [number])
        let custom = builder.object(["Custom", "NSObject"], [("x", .int(1))])
        builder.set(root, ArchiveBuilder.mutableArrayChain, [
            ("NS.objects", .uids([string, number, real, flag, data, date, uuid, null, url, set, ordered, dictionary, custom, 0])),
        ])
        let archive = try KeyedArchive(data: builder.data)
        let unarchiver = KeyedUnarchiver(archive: archive)
        let value = try unarchiver.decode(archive.rootReference())
        guard case .array(let elements) = value else { return XCTFail("not an array: \(value)") }
        XCTAssertEqual(elements.count, 14)
        XCTAssertEqual(elements[0], .string("mutable"))
        XCTAssertEqual(elements[1], .integer(7))
        XCTAssertEqual(elements[2], .real(2.5))
        XCTAssertEqual(elements[3], .bool(true))
        XCTAssertEqual(elements[4], .data(Data([0xCA, 0xFE])))
        XCTAssertEqual(elements[5], .date(Date(timeIntervalSinceReferenceDate: 700_000_000)))
        XCTAssertEqual(elements[6], .uuid(UUID(uuidString: "00010203-0405-0607-0809-0A0B0C0D0E0F")!))
        XCTAssertEqual(elements[7], .null)
        XCTAssertEqual(elements[8], .url(URL(string: "https://example.com/a")!))
        XCTAssertEqual(elements[9], .set([.integer(7), .real(2.5)]))
        XCTAssertEqual(elements[10], .orderedSet([.bool(true)]))
        XCTAssertEqual(elements[11], .dictionary(keys: [.string("k")], values: [.integer(7)]))
        guard case .object(let object) = elements[12] else { return XCTFail("custom class decoded: \(elements[12])") }
        XCTAssertEqual(object.className, "Custom")
        XCTAssertEqual(elements[13], .null)
        XCTAssertEqual(unarchiver.depth, 0)

        let foundation = try XCTUnwrap(value.foundationValue as? [Any])
        XCTAssertEqual(foundation[0] as? String, "mutable")
        XCTAssertEqual(foundation[1] as? Int, 7)
        XCTAssertEqual((foundation[9] as? Set<AnyHashable>)?.count, 2)
        XCTAssertEqual((foundation[11] as? [AnyHashable: Any])?["k"] as? Int, 7)
        XCTAssertTrue(foundation[13] is NSNull)
    }

    /// A per-class decoder walks fields and descends through the unarchiver, as a compiled-model
    /// decoder would: back-references (an entity's model) stay references.
    func testPerClassDecodingWithBackReferences() throws {
        var builder = ArchiveBuilder()
        let model = builder.reserve()
        let entity = builder.reserve()
        builder.set(entity, ["Entity", "NSObject"], [("name", .uid(builder.string("Car"))), ("model", .uid(model))])
        let entities = builder.array([entity])
        builder.set(model, ["Model", "NSObject"], [("entities", .uid(entities))])
        let archive = try KeyedArchive(data: builder.data)
        let unarchiver = KeyedUnarchiver(archive: archive)
        let names = try unarchiver.withObject(archive.rootReference()) { (model) throws(KeyedArchiveError) -> [String] in
            guard let entities = try model.reference(forKey: "entities") else { return [] }
            let list = try unarchiver.withObject(entities) { (list) throws(KeyedArchiveError) in
                try unarchiver.elements(of: list)
            }
            var names: [String] = []
            for reference in list {
                let name = try unarchiver.withObject(reference) { (entity) throws(KeyedArchiveError) -> String in
                    XCTAssertEqual(try entity.reference(forKey: "model"), model.reference)
                    return try entity.string(forKey: "name") ?? ""
                }
                names.append(name)
            }
            return names
        }
        XCTAssertEqual(names, ["Car"])
        XCTAssertEqual(unarchiver.visitedObjects, 3)
        // Generic decoding leaves classes it does not know to the caller.
        guard case .object(let decoded)? = try unarchiver.decode(forKey: "model", in: archive.object(at: ArchiveReference(entity))) else {
            return XCTFail("the model decoded as a value")
        }
        XCTAssertEqual(decoded.className, "Model")
    }

    /// Found by FuzzKeyedArchive (Fuzz/Corpus/FuzzKeyedArchive/regression-nsstring-refers-to-itself):
    /// an `NSMutableString` whose `NS.string` referred to itself made `string(forKey:)` recurse
    /// until the stack overflowed. The string inside an `NSString` (and the bytes inside an
    /// `NSData`) are now read as plain values only.
    func testStringAndDataWrappersThatReferToThemselves() throws {
        var builder = ArchiveBuilder()
        let string = builder.reserve()
        builder.set(string, ["NSMutableString", "NSString", "NSObject"], [("NS.string", .uid(string))])
        let data = builder.reserve()
        builder.set(data, ["NSMutableData", "NSData", "NSObject"], [("NS.data", .uid(data))])
        let holder = builder.object(["Holder", "NSObject"], [("text", .uid(string)), ("bytes", .uid(data))])
        let archive = try KeyedArchive(data: builder.data)
        let object = try archive.object(at: ArchiveReference(holder))
        XCTAssertThrowsError(try object.string(forKey: "text")) { error in
            XCTAssertEqual("\(error)", "object \(string) (NSMutableString): NS.string refers to object \(string), an NSMutableString, expected a string")
        }
        XCTAssertThrowsError(try object.data(forKey: "bytes")) { error in
            XCTAssertEqual("\(error)", "object \(data) (NSMutableData): NS.data refers to object \(data), an NSMutableData, expected data")
        }
        XCTAssertThrowsError(try KeyedUnarchiver(archive: archive).decode(ArchiveReference(string)))
        XCTAssertThrowsError(try KeyedUnarchiver(archive: archive).decode(ArchiveReference(data)))
        // One level of wrapping is what Foundation writes, and reads.
        var plain = ArchiveBuilder()
        let text = plain.object(["NSMutableString", "NSString", "NSObject"], [("NS.string", .uid(plain.string("fine")))])
        let outer = plain.object(["Holder", "NSObject"], [("text", .uid(text))])
        XCTAssertEqual(try KeyedArchive(data: plain.data).object(at: ArchiveReference(outer)).string(forKey: "text"), "fine")
    }

    // MARK: - Hostile archives

    func testHostileArchivesThrowTheirOwnMessages() {
        for (name, bytes, kind, fragment) in Self.hostileArchives() {
            XCTAssertThrowsError(try Self.decodeEverything(bytes), name) { error in
                guard let error = error as? KeyedArchiveError else { return XCTFail("\(name): \(error)") }
                XCTAssertEqual(error.kind, kind, "\(name): \(error.message)")
                XCTAssertTrue(error.message.contains(fragment), "\(name): \(error.message)")
            }
        }
    }

    /// Opens the archive and decodes its root generically.
    static func decodeEverything(_ bytes: [UInt8]) throws {
        let archive = try KeyedArchive(bytes: bytes)
        _ = try KeyedUnarchiver(archive: archive).decode(archive.rootReference())
    }

    static func hostileArchives() -> [(String, [UInt8], KeyedArchiveError.Kind, String)] {
        var simple = ArchiveBuilder()
        _ = simple.string("root")
        var pastEnd = ArchiveBuilder()
        let holder = pastEnd.object(["Thing", "NSObject"], [("other", .uid(99))])
        var noClass = ArchiveBuilder()
        _ = noClass.add(.dict(keys: [], values: []))
        var cycle = ArchiveBuilder()
        let loop = cycle.reserve()
        cycle.set(loop, ArchiveBuilder.arrayChain, [("NS.objects", .uids([loop]))])
        var deep = ArchiveBuilder()
        let outer = deep.reserve()
        var inner = deep.array([])
        for _ in 0..<300 { inner = deep.array([inner]) }
        deep.set(outer, ArchiveBuilder.arrayChain, [("NS.objects", .uids([inner]))])
        var dictionaryCounts = ArchiveBuilder()
        _ = dictionaryCounts.object(["NSDictionary", "NSObject"], [("NS.keys", .uids([0, 0])), ("NS.objects", .uids([0]))])
        var badUUID = ArchiveBuilder()
        _ = badUUID.object(["NSUUID", "NSObject"], [("NS.uuidbytes", .data([1, 2, 3]))])
        var notList = PropertyListWriter()
        notList.add(.array([]))
        return [
            ("not a property list", Array("hello".utf8), .propertyList, "binary property list: input of 5 bytes is shorter"),
            ("top is not a dictionary", notList.encode(top: 0), .notAnArchive, "the top object of the property list is not a dictionary"),
            ("wrong $archiver", simple.build(archiver: "NSKeyedArchiverX"), .notAnArchive,
             "$archiver is the string \"NSKeyedArchiverX\", not \"NSKeyedArchiver\""),
            ("missing $archiver", simple.build(omit: ["$archiver"]), .notAnArchive, "the root dictionary has no $archiver"),
            ("wrong $version", simple.build(version: 7), .notAnArchive, "$version is the integer 7, not 100000"),
            ("missing $top", simple.build(omit: ["$top"]), .notAnArchive, "the root dictionary has no $top"),
            ("missing $objects", simple.build(omit: ["$objects"]), .notAnArchive, "the root dictionary has no $objects"),
            ("no root key", simple.build(top: ["other": 1]), .notAnArchive, "$top has no key \"root\" (it has \"other\")"),
            ("$top past $objects", simple.build(top: ["root": 50]), .notAnArchive, "$top[\"root\"] is UID 50, past the end of $objects (2 entries)"),
            ("UID past $objects", pastEnd.build(top: ["root": holder]), .notAnArchive,
             "object 1: other is UID 99, past the end of $objects (3 entries)"),
            ("dictionary without $class", noClass.build(), .malformed, "object 1 is a dictionary without $class"),
            ("reference cycle", cycle.build(top: ["root": loop]), .referenceCycle, "reference cycle at object 1"),
            ("nesting over the limit", deep.build(top: ["root": outer]), .tooDeep, "nesting deeper than 256 objects"),
            ("NSDictionary counts differ", dictionaryCounts.build(), .malformed, "has 2 NS.keys but 1 NS.objects"),
            ("NSUUID of 3 bytes", badUUID.build(), .malformed, "NS.uuidbytes holds 3 bytes, not 16"),
        ]
    }

    /// Each array refers twice to the one before, 60 levels: 2⁶⁰ paths. The budget stops the walk
    /// early and cleanly.
    func testSharedReferencesCannotBlowUp() throws {
        var builder = ArchiveBuilder()
        var previous = builder.string("leaf")
        for _ in 0..<60 { previous = builder.array([previous, previous]) }
        let archive = try KeyedArchive(data: Data(builder.build(top: ["root": previous])))
        let start = Date()
        let unarchiver = KeyedUnarchiver(archive: archive)
        XCTAssertThrowsError(try unarchiver.decode(archive.rootReference())) { error in
            XCTAssertEqual((error as? KeyedArchiveError)?.kind, .budgetExceeded)
            XCTAssertTrue("\(error)".contains("more than 100000 objects decoded"), "\(error)")
        }
        XCTAssertEqual(unarchiver.visitedObjects, KeyedUnarchiver.defaultObjectBudget)
        XCTAssertEqual(unarchiver.depth, 0, "the path unwinds after an error")
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
        // The budget is the caller's choice.
        let small = KeyedUnarchiver(archive: archive, objectBudget: 10)
        XCTAssertThrowsError(try small.decode(archive.rootReference()))
    }
}
