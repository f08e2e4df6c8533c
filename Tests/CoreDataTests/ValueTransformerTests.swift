@testable import CoreData
import CoreDataArchive
import Foundation
import XCTest

/// A class of the app's own in transformable values: secure-codable, with a string field decoded
/// through `decodeObject(of:forKey:)` as Apple apps write it.
final class TestSwatch: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let name: String
    let red: Double
    let alpha: Float
    let steps: Int

    init(name: String, red: Double, alpha: Float = 1, steps: Int = 0) {
        self.name = name
        self.red = red
        self.alpha = alpha
        self.steps = steps
    }

    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "name")
        coder.encode(red, forKey: "red")
        coder.encode(alpha, forKey: "alpha")
        coder.encode(steps, forKey: "steps")
    }

    init?(coder: NSCoder) {
        guard let name = coder.decodeObject(of: NSString.self, forKey: "name") as String? else { return nil }
        self.name = name
        red = coder.decodeDouble(forKey: "red")
        alpha = coder.decodeFloat(forKey: "alpha")
        steps = coder.decodeInteger(forKey: "steps")
    }

    override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? TestSwatch else { return false }
        return name == other.name && red == other.red && alpha == other.alpha && steps == other.steps
    }

    override var hash: Int { name.hashValue }
}

/// A subclass allowing the app's class (and arrays of it), as Apple apps write one.
final class TestSwatchTransformer: NSSecureUnarchiveFromDataTransformer {
    static let name = NSValueTransformerName(rawValue: "TestSwatchTransformer")
    override class var allowedTopLevelClasses: [AnyClass] { [TestSwatch.self, NSArray.self] }
}

/// Stores whatever `Data` it is given as it is: put in the default transformer's place to write
/// damaged bytes into a store.
private final class RawBytesTransformer: ValueTransformer {
    override func transformedValue(_ value: Any?) -> Any? { value as? Data }
    override func reverseTransformedValue(_ value: Any?) -> Any? { value }
}

private enum TransformerFixture {
    /// `Keeper`: `label` (String), `value` (Transformable, no transformer name), `swatch`
    /// (Transformable, `TestSwatchTransformer`), `keyed` (Transformable, `NSKeyedUnarchiveFromData`).
    static let model: NSManagedObjectModel = {
        ValueTransformer.setValueTransformer(TestSwatchTransformer(), forName: TestSwatchTransformer.name)
        NSPersistentStoreCoordinator.registerStoreClass(DictionaryIncrementalStore.self, type: DictionaryIncrementalStore.storeType)
        NSPersistentStoreCoordinator.registerStoreClass(JSONAtomicStore.self, type: JSONAtomicStore.storeType)
        func attribute(_ name: String, _ type: NSAttributeType, transformer: String? = nil) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            attribute.valueTransformerName = transformer
            return attribute
        }
        let keeper = NSEntityDescription()
        keeper.name = "Keeper"
        keeper.properties = [
            attribute("label", .stringAttributeType),
            attribute("value", .transformableAttributeType),
            attribute("swatch", .transformableAttributeType, transformer: TestSwatchTransformer.name.rawValue),
            attribute("keyed", .transformableAttributeType, transformer: "NSKeyedUnarchiveFromData"),
        ]
        let model = NSManagedObjectModel()
        model.entities = [keeper]
        return model
    }()

    /// The values of Apple's allowed classes, each with the check of what reads back.
    nonisolated(unsafe) static let samples: [(name: String, value: Any, check: (Any?) -> Bool)] = [
        ("strings", ["a", "b", "ç"], { ($0 as? [String]) == ["a", "b", "ç"] }),
        ("dictionary", ["count": 3, "ratio": 2.5, "on": true, "names": ["x", "y"]] as [String: Any], { value in
            guard let dictionary = value as? [String: Any] else { return false }
            return dictionary["count"] as? Int == 3 && dictionary["ratio"] as? Double == 2.5
                && dictionary["on"] as? Bool == true && dictionary["names"] as? [String] == ["x", "y"]
        }),
        ("string", "hello", { $0 as? String == "hello" }),
        ("integer", 42, { $0 as? Int == 42 }),
        ("large integer", Int64.min, { $0 as? Int64 == Int64.min }),
        ("double", 3.25, { $0 as? Double == 3.25 }),
        ("bool", true, { $0 as? Bool == true }),
        ("date", Date(timeIntervalSinceReferenceDate: 12_345.5), { $0 as? Date == Date(timeIntervalSinceReferenceDate: 12_345.5) }),
        ("url", URL(string: "https://example.com/a?b=c")!, { $0 as? URL == URL(string: "https://example.com/a?b=c") }),
        ("file url", URL(fileURLWithPath: "/tmp/some file.txt"), { ($0 as? URL)?.path == "/tmp/some file.txt" }),
        ("uuid", UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, { $0 as? UUID == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") }),
        ("set", Set(["x", "y"]), { ($0 as? Set<String>) == ["x", "y"] }),
        ("data", Data([0, 1, 2, 255]), { $0 as? Data == Data([0, 1, 2, 255]) }),
        ("null", NSNull(), { $0 is NSNull }),
        ("nested", [["a": [1, 2]], ["b": Date(timeIntervalSinceReferenceDate: 0)]] as [Any], { value in
            guard let array = value as? [[String: Any]], array.count == 2 else { return false }
            return array[0]["a"] as? [Int] == [1, 2] && array[1]["b"] as? Date == Date(timeIntervalSinceReferenceDate: 0)
        }),
    ]

    /// An archive laid out as Apple's `NSKeyedArchiver` writes it for an `NSMutableDictionary`
    /// holding an `NSMutableString`, an `NSMutableArray` of strings and numbers, an `NSDate`, an
    /// `NSUUID`, an `NSURL` relative to a base `NSURL`, `NSNull`, an `NSSet`, `NSMutableData`, plain
    /// data and a large negative integer: the mutable classes and the URL base are forms Foundation on
    /// Linux never writes. (Built with Python's `plistlib` in Apple's object layout.)
    static let appleArchive = Data(base64Encoded: [
        "YnBsaXN0MDDUAQIDBAUGBwpYJHZlcnNpb25ZJGFyY2hpdmVyVCR0b3BYJG9iamVjdHMSAAGGoF8QD05TS2V5ZWRBcmNoaXZlctEI",
        "CVRyb290gAGvECkLDCcuMjM0NTY3ODxERUhMTVBUVVZZX2BjZGdpamtsb3R1eX1+f4CBglUkbnVsbNMNDg8QGyZXTlMua2V5c1pO",
        "Uy5vYmplY3RzViRjbGFzc6oREhMUFRYXGBkagASADIAPgBKAGIAbgCCAI4AlgCeqHB0eHyAhIiMkJYADgAuADoARgBeAGoAfgCKA",
        "JIAmgCjSKCkqK1okY2xhc3NuYW1lWCRjbGFzc2VzXxAPTlNNdXRhYmxlU3RyaW5noyosLVhOU1N0cmluZ1hOU09iamVjdNIvDzAx",
        "WU5TLnN0cmluZ1lHcm9jZXJpZXOAAlV0aXRsZVRtaWxrVGVnZ3MQDCNABAAAAAAAAAnSKCk5Ol5OU011dGFibGVBcnJheaM5Oy1X",
        "TlNBcnJhedIODz1DpT4/QEFCgAWABoAHgAiACYAKVWl0ZW1z0igpRkdWTlNEYXRlokYt0kkPSktXTlMudGltZSNBxNyTgCAAAIAN",
        "VHdoZW7SKClOT1ZOU1VVSUSiTi3SUQ9SU1xOUy51dWlkYnl0ZXNPEBDmIeH4w2xJWpP8DCR6Pm5fgBBSaWRfEBlodHRwczovL2V4",
        "YW1wbGUuY29tL3Nob3Av0igpV1hVTlNVUkyiVy3TWlsPXF1eV05TLmJhc2VbTlMucmVsYXRpdmWAAIATgBRZbGlzdD9pZD0301pb",
        "D2FiXoAVgBZUbGlua9IoKWVmVk5TTnVsbKJlLdEPaIAZV25vdGhpbmdUZm9vZFZ3ZWVrbHnSKCltblVOU1NldKJtLdIOD3BzonFy",
        "gByAHYAeVHRhZ3PSKCl2d11OU011dGFibGVEYXRho3Z4LVZOU0RhdGHSeg97fFdOUy5kYXRhRAABAv+AIVRibG9iQgkIU3JhdxP/",
        "3////////1NiaWfSKCmDhF8QE05TTXV0YWJsZURpY3Rpb25hcnmjg4UtXE5TRGljdGlvbmFyeQAIABEAGgAkACkAMgA3AEkATABR",
        "AFMAfwCFAIwAlACfAKYAsQCzALUAtwC5ALsAvQC/AMEAwwDFANAA0gDUANYA2ADaANwA3gDgAOIA5ADmAOsA9gD/AREBFQEeAScB",
        "LAE2AUABQgFIAU0BUgFUAV0BXgFjAXIBdgF+AYMBiQGLAY0BjwGRAZMBlQGbAaABpwGqAa8BtwHAAcIBxwHMAdMB1gHbAegB+wH9",
        "AgACHAIhAicCKgIxAjkCRQJHAkkCSwJVAlwCXgJgAmUCagJxAnQCdwJ5AoEChgKNApICmAKbAqACowKlAqcCqQKuArMCwQLFAswC",
        "0QLZAt4C4ALlAugC7AL1AvkC/gMUAxgAAAAAAAACAQAAAAAAAACGAAAAAAAAAAAAAAAAAAADJQ==",
    ].joined())!

    /// What ``appleArchive`` must read as.
    static func checkAppleArchive(_ value: Any?, file: StaticString = #filePath, line: UInt = #line) {
        guard let dictionary = value as? [String: Any] else { return XCTFail("not a dictionary: \(String(describing: value))", file: file, line: line) }
        XCTAssertEqual(dictionary["title"] as? String, "Groceries", file: file, line: line)
        guard let items = dictionary["items"] as? [Any], items.count == 5 else { return XCTFail("items: \(String(describing: dictionary["items"]))", file: file, line: line) }
        XCTAssertEqual(items[0] as? String, "milk", file: file, line: line)
        XCTAssertEqual(items[2] as? Int, 12, file: file, line: line)
        XCTAssertEqual(items[3] as? Double, 2.5, file: file, line: line)
        XCTAssertEqual(items[4] as? Bool, true, file: file, line: line)
        XCTAssertEqual(dictionary["when"] as? Date, Date(timeIntervalSinceReferenceDate: 700_000_000.25), file: file, line: line)
        XCTAssertEqual(dictionary["id"] as? UUID, UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), file: file, line: line)
        XCTAssertEqual((dictionary["link"] as? URL)?.absoluteString, "https://example.com/shop/list?id=7", file: file, line: line)
        XCTAssertTrue(dictionary["nothing"] is NSNull, file: file, line: line)
        XCTAssertEqual(dictionary["tags"] as? Set<String>, ["food", "weekly"], file: file, line: line)
        XCTAssertEqual(dictionary["blob"] as? Data, Data([0, 1, 2, 255]), file: file, line: line)
        XCTAssertEqual(dictionary["raw"] as? Data, Data([9, 8]), file: file, line: line)
        XCTAssertEqual(dictionary["big"] as? Int64, -9_007_199_254_740_993, file: file, line: line)
    }

    /// Archives that must read as nil, never crash: not a property list, cut short, a property
    /// list that is no archive, nesting past the decoder's limit, an object of a class the
    /// default transformer does not allow, no bytes at all, and archives built by hand (Python's
    /// `plistlib`) that make Foundation's `NSKeyedUnarchiver` on Linux trap or overflow its stack:
    /// an array containing itself, a dictionary with more keys than values, a `$class` that is a
    /// string, an `NSString` whose `NS.string` is itself, plus an `NSUUID` of 3 bytes, an `NSURL`
    /// whose `NS.relative` is a number and a UID past `$objects`.
    static func damagedArchives() throws -> [(name: String, bytes: Data)] {
        let valid = try NSKeyedArchiver.archivedData(withRootObject: ["k": ["a", "b"], "n": 1] as [String: Any], requiringSecureCoding: true)
        var flipped = [UInt8](valid)
        for index in stride(from: 9, to: flipped.count, by: 5) { flipped[index] ^= 0xA5 }
        // Arrays nested past the decoder's depth limit, written with the package's own writer.
        let depth = KeyedUnarchiver.maximumDepth + 10
        var entries: [ArchivePlistValue] = [.string("$null")]
        for level in 0..<depth { entries.append(.dictionary([(.string("NS.objects"), .array([.uid(UInt64(level + 2))])), (.string("$class"), .uid(UInt64(depth + 2)))])) }
        entries.append(.string("bottom"))
        entries.append(.dictionary([(.string("$classname"), .string("NSArray")), (.string("$classes"), .array([.string("NSArray"), .string("NSObject")]))]))
        let deep = BinaryPropertyListWriter.write(.dictionary([
            (.string("$version"), .integer(100_000)), (.string("$archiver"), .string("NSKeyedArchiver")),
            (.string("$top"), .dictionary([(.string("root"), .uid(1))])), (.string("$objects"), .array(entries)),
        ]))
        return [
            // Behind the archive magic: bytes without it are a nameless value of before November
            // 2026, kept raw (TransformableValues.objectValue(fromStored:_:)).
            ("garbage", Data("bplist00".utf8) + Data((0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })),
            ("truncated", valid.prefix(valid.count / 2)),
            ("flipped", Data(flipped)),
            ("plist, not an archive", try PropertyListSerialization.data(fromPropertyList: ["a": 1], format: .binary, options: 0)),
            ("array containing itself", Data(base64Encoded: "YnBsaXN0MDDUAQIDBAUGFBdZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKjBwgOVSRudWxs0gkKCwxWJGNsYXNzWk5TLm9iamVjdHOAAqENgAHSDxARElgkY2xhc3Nlc1okY2xhc3NuYW1lohITV05TQXJyYXlYTlNPYmplY3TRFRZUcm9vdIABEgABhqAIERskKTJESE5TWmVnaWtweYSHj5iboKIAAAAAAAABAQAAAAAAAAAYAAAAAAAAAAAAAAAAAAAApw==")!),
            ("dictionary keys and values differ", Data(base64Encoded: "YnBsaXN0MDDUAQIDBAUGGh1ZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKlBwgSExRVJG51bGzTCQoLDA0QViRjbGFzc1dOUy5rZXlzWk5TLm9iamVjdHOABKIOD4ACgAOhEYACUWFRYtIVFhcYWCRjbGFzc2VzWiRjbGFzc25hbWWiGBlcTlNEaWN0aW9uYXJ5WE5TT2JqZWN00RscVHJvb3SAARIAAYagCBEbJCkyREpQV15mcXN2eHp8foCCh5Cbnqu0t7y+AAAAAAAAAQEAAAAAAAAAHgAAAAAAAAAAAAAAAAAAAMM=")!),
            ("$class is a string", Data(base64Encoded: "YnBsaXN0MDDUAQIDBAUGDxJZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKjBwgOVSRudWxs0gkKCwxWJGNsYXNzWk5TLm9iamVjdHOAAqENgAJRYdEQEVRyb290gAESAAGGoAgRGyQpMkRITlNaZWdpa21wdXcAAAAAAAABAQAAAAAAAAATAAAAAAAAAAAAAAAAAAAAfA==")!),
            ("string containing itself", Data(base64Encoded: "YnBsaXN0MDDUAQIDBAUGExZZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKjBwgNVSRudWxs0gkKCwxWJGNsYXNzWU5TLnN0cmluZ4ACgAHSDg8QEVgkY2xhc3Nlc1okY2xhc3NuYW1lohESWE5TU3RyaW5nWE5TT2JqZWN00RQVVHJvb3SAARIAAYagCBEbJCkyREhOU1pkZmhtdoGEjZaZnqAAAAAAAAABAQAAAAAAAAAXAAAAAAAAAAAAAAAAAAAApQ==")!),
            ("uuid of 3 bytes", Data(base64Encoded: "YnBsaXN0MDDUAQIDBAUGExZZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKjBwgNVSRudWxs0gkKCwxWJGNsYXNzXE5TLnV1aWRieXRlc4ACQwECA9IODxARWCRjbGFzc2VzWiRjbGFzc25hbWWiERJWTlNVVUlEWE5TT2JqZWN00RQVVHJvb3SAARIAAYagCBEbJCkyREhOU1pnaW1ye4aJkJmcoaMAAAAAAAABAQAAAAAAAAAXAAAAAAAAAAAAAAAAAAAAqA==")!),
            ("url that is a number", Data(base64Encoded: "YnBsaXN0MDDUAQIDBAUGFhlZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKkBwgPEFUkbnVsbNMJCgsMDQ5WJGNsYXNzV05TLmJhc2VbTlMucmVsYXRpdmWAA4AAgAIQBdIREhMUWCRjbGFzc2VzWiRjbGFzc25hbWWiFBVVTlNVUkxYTlNPYmplY3TRFxhUcm9vdIABEgABhqAIERskKTJESU9WXWVxc3V3eX6HkpWbpKesrgAAAAAAAAEBAAAAAAAAABoAAAAAAAAAAAAAAAAAAACz")!),
            ("uid past $objects", Data(base64Encoded: "YnBsaXN0MDDUAQIDBAUGFBdZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKjBwgOVSRudWxs0gkKCwxWJGNsYXNzWk5TLm9iamVjdHOAAqENgGPSDxARElgkY2xhc3Nlc1okY2xhc3NuYW1lohITV05TQXJyYXlYTlNPYmplY3TRFRZUcm9vdIABEgABhqAIERskKTJESE5TWmVnaWtweYSHj5iboKIAAAAAAAABAQAAAAAAAAAYAAAAAAAAAAAAAAAAAAAApw==")!),
            ("too deep", deep),
            ("class not allowed", try NSKeyedArchiver.archivedData(withRootObject: TestSwatch(name: "x", red: 1), requiringSecureCoding: true)),
            ("magic only", Data("bplist00".utf8)),
        ]
    }
}

/// Runs `body` once per store kind with `model`, as ``forEachStore(file:line:function:_:)`` does
/// with the shared model, leaving out the kinds `except` names (with why).
private func forEachStore(
    model: NSManagedObjectModel, except: [StoreKind: String] = [:], file: StaticString = #filePath, line: UInt = #line,
    _ body: (StoreKind, NSPersistentContainer) throws -> Void
) {
    for kind in StoreKind.allCases where except[kind] == nil {
        do {
            try body(kind, kind.makeContainer(model: model, file: file, line: line))
        } catch {
            XCTFail("[\(kind)] \(error)", file: file, line: line)
        }
    }
}

/// The stores that keep the bytes a transformer produced (the user stores keep objects' values).
private let keepsArchivedBytes: [StoreKind: String] = [
    .incremental: "DictionaryIncrementalStore keeps objects' values, not their archives",
    .atomic: "JSONAtomicStore keeps objects' values, not their archives",
]

/// The stores that can keep every value of Apple's allowed classes.
private let keepsAllowedValues: [StoreKind: String] = [
    .atomic: "JSONAtomicStore, like any atomic store, stores transformable values itself, and it keeps only Data",
]

final class ValueTransformerTests: XCTestCase {
    private var model: NSManagedObjectModel { TransformerFixture.model }

    // MARK: The transformers and their names

    func testBuiltInTransformersAreRegisteredUnderApplesNames() throws {
        XCTAssertEqual(NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue, "NSSecureUnarchiveFromData")
        XCTAssertEqual(NSValueTransformerName.keyedUnarchiveFromDataTransformerName.rawValue, "NSKeyedUnarchiveFromData")
        XCTAssertEqual(NSValueTransformerName.unarchiveFromDataTransformerName.rawValue, "NSUnarchiveFromData")
        XCTAssertEqual(NSValueTransformerName.negateBooleanTransformerName.rawValue, "NSNegateBoolean")
        XCTAssertEqual(NSValueTransformerName.isNilTransformerName.rawValue, "NSIsNil")
        XCTAssertEqual(NSValueTransformerName.isNotNilTransformerName.rawValue, "NSIsNotNil")

        let names = Set(ValueTransformer.valueTransformerNames())
        for name: NSValueTransformerName in [.secureUnarchiveFromDataTransformerName, .keyedUnarchiveFromDataTransformerName, .negateBooleanTransformerName, .isNilTransformerName, .isNotNilTransformerName] {
            XCTAssertTrue(names.contains(name), "\(name.rawValue) is not registered")
        }
        XCTAssertNil(ValueTransformer.valueTransformer(forName: .unarchiveFromDataTransformerName), "no NSArchiver on Linux")
        XCTAssertTrue(ValueTransformer.valueTransformer(forName: .secureUnarchiveFromDataTransformerName) is NSSecureUnarchiveFromDataTransformer)

        // `ValueTransformer(forName:)` hands out the registered transformer itself.
        let secure = try XCTUnwrap(ValueTransformer(forName: .secureUnarchiveFromDataTransformerName))
        XCTAssertTrue(secure === ValueTransformer.valueTransformer(forName: .secureUnarchiveFromDataTransformerName))
        XCTAssertNotNil(NSSecureUnarchiveFromDataTransformer(forName: .secureUnarchiveFromDataTransformerName))
        XCTAssertNil(NSSecureUnarchiveFromDataTransformer(forName: .negateBooleanTransformerName), "registered, but of another class")
        XCTAssertNil(ValueTransformer(forName: NSValueTransformerName("NoSuchTransformer")))

        XCTAssertEqual(NSSecureUnarchiveFromDataTransformer.allowedTopLevelClasses.map { NSStringFromClass($0) },
                       ["NSArray", "NSDictionary", "NSSet", "NSString", "NSNumber", "NSDate", "NSData", "NSURL", "NSUUID", "NSNull"])
        XCTAssertTrue(NSSecureUnarchiveFromDataTransformer.allowsReverseTransformation())

        let negate = try XCTUnwrap(ValueTransformer(forName: .negateBooleanTransformerName))
        XCTAssertEqual(negate.transformedValue(true) as? Bool, false)
        XCTAssertEqual(negate.reverseTransformedValue(NSNumber(value: false)) as? Bool, true)
        let isNil = try XCTUnwrap(ValueTransformer(forName: .isNilTransformerName))
        XCTAssertEqual(isNil.transformedValue(nil) as? Bool, true)
        XCTAssertEqual(isNil.transformedValue("x") as? Bool, false)
        XCTAssertEqual(ValueTransformer(forName: .isNotNilTransformerName)?.transformedValue(NSNull()) as? Bool, false)
    }

    /// Apple's direction: forwards unarchives data, the reverse archives a value.
    func testSecureTransformerArchivesInReverseAndUnarchivesForwards() throws {
        let transformer = NSSecureUnarchiveFromDataTransformer()
        let data = try XCTUnwrap(transformer.reverseTransformedValue(["a", "b"]) as? Data)
        XCTAssertEqual(transformer.transformedValue(data) as? [String], ["a", "b"])
        XCTAssertNil(transformer.transformedValue(["a", "b"]), "an array is not data to unarchive")
        XCTAssertNil(transformer.reverseTransformedValue(nil))
        XCTAssertNil(transformer.transformedValue(nil))
    }

    // MARK: The bytes

    /// What the default transformer writes is an `NSKeyedArchiver` archive (the package's decoder
    /// checks `$archiver`, `$version`, `$top` and `$objects`) with the value under `root`, which
    /// Foundation's own unarchiver reads too, and which reads back.
    func testArchivesAreKeyedArchivesFoundationReads() throws {
        let transformer = NSSecureUnarchiveFromDataTransformer()
        let rootClasses: [String: String] = [
            "strings": "NSArray", "dictionary": "NSDictionary", "set": "NSSet", "date": "NSDate", "url": "NSURL", "file url": "NSURL",
            "uuid": "NSUUID", "null": "NSNull", "nested": "NSArray",
        ]
        for sample in TransformerFixture.samples {
            let data = try XCTUnwrap(transformer.reverseTransformedValue(sample.value) as? Data, sample.name)
            XCTAssertEqual(Array(data.prefix(8)), Array("bplist00".utf8), sample.name)
            let archive = try KeyedArchive(data: data)
            XCTAssertEqual(archive.topKeys, ["root"], sample.name)
            let root = try archive.rootReference()
            switch try archive.entry(at: root) {
            case .object(let object):
                XCTAssertEqual(object.className, rootClasses[sample.name], sample.name)
            case .value:
                XCTAssertNil(rootClasses[sample.name], "\(sample.name): a plain value at the root")
            case .null:
                XCTFail("\(sample.name): $null at the root")
            }
            XCTAssertTrue(sample.check(transformer.transformedValue(data)), "\(sample.name) did not read back: \(String(describing: transformer.transformedValue(data)))")
            let foundation = try NSKeyedUnarchiver.unarchivedObject(ofClasses: NSSecureUnarchiveFromDataTransformer.allowedTopLevelClasses, from: data)
            XCTAssertTrue(sample.check(foundation), "\(sample.name) as Foundation's unarchiver reads it: \(String(describing: foundation))")
        }
    }

    /// Numbers keep their kind (Foundation's archiver on Linux writes `true` as `1`), and an
    /// object of the app's class is laid out as Foundation's unarchiver expects.
    func testNumbersKeepTheirKindsAndObjectsReadInFoundation() throws {
        let transformer = NSSecureUnarchiveFromDataTransformer()
        let data = try XCTUnwrap(transformer.reverseTransformedValue([1, true, 2.5, UInt64.max, -5, Float(0.5)] as [Any]) as? Data)
        let archive = try KeyedArchive(data: data)
        var plain: [ArchivedValue] = []
        for index in 1..<archive.objectCount {
            if case .value(let value)? = try? archive.entry(at: ArchiveReference(index)) { plain.append(value) }
        }
        XCTAssertTrue(plain.contains(.bool(true)), "\(plain)")
        XCTAssertTrue(plain.contains(.integer(1)), "\(plain)")
        XCTAssertTrue(plain.contains(.integer(-5)), "\(plain)")
        XCTAssertTrue(plain.contains(.unsignedInteger(UInt64.max)), "\(plain)")
        for read in [transformer.transformedValue(data), try NSKeyedUnarchiver.unarchivedObject(ofClasses: [NSArray.self, NSNumber.self], from: data)] {
            let numbers = try XCTUnwrap(read as? [NSNumber])
            XCTAssertEqual(numbers.map(\.int64Value)[0], 1)
            XCTAssertEqual(numbers[1].boolValue, true)
            XCTAssertEqual(numbers[2].doubleValue, 2.5)
            XCTAssertEqual(numbers[3].uint64Value, UInt64.max)
            XCTAssertEqual(numbers[4].int64Value, -5)
            XCTAssertEqual(numbers[5].floatValue, 0.5)
        }

        let swatches = TestSwatchTransformer()
        let pair = [TestSwatch(name: "teal", red: 0.25, alpha: 0.5, steps: 4), TestSwatch(name: "rosé", red: 1, steps: -1)]
        let swatchData = try XCTUnwrap(swatches.reverseTransformedValue(pair) as? Data)
        let foundation = try NSKeyedUnarchiver.unarchivedObject(ofClasses: [TestSwatch.self, NSArray.self, NSString.self], from: swatchData)
        XCTAssertEqual(foundation as? [TestSwatch], pair)
        // And what Foundation's archiver writes for them reads here.
        let written = try NSKeyedArchiver.archivedData(withRootObject: pair, requiringSecureCoding: true)
        XCTAssertEqual(swatches.transformedValue(written) as? [TestSwatch], pair)
    }

    /// An app's class archived under its bare name (as an Apple app's `@objc(TestSwatch)` class
    /// is) is found among the allowed classes by that name.
    func testClassesArchivedUnderTheirBareNameAreFound() throws {
        let entries: [ArchivePlistValue] = [
            .string("$null"),
            .dictionary([
                (.string("name"), .uid(2)), (.string("red"), .real(0.9)), (.string("alpha"), .real(1)), (.string("steps"), .integer(2)),
                (.string("$class"), .uid(3)),
            ]),
            .string("sand"),
            .dictionary([(.string("$classname"), .string("TestSwatch")), (.string("$classes"), .array([.string("TestSwatch"), .string("NSObject")]))]),
        ]
        let archived = BinaryPropertyListWriter.write(.dictionary([
            (.string("$version"), .integer(100_000)), (.string("$archiver"), .string("NSKeyedArchiver")),
            (.string("$top"), .dictionary([(.string("root"), .uid(1))])), (.string("$objects"), .array(entries)),
        ]))
        XCTAssertEqual(TestSwatchTransformer().transformedValue(archived) as? TestSwatch, TestSwatch(name: "sand", red: 0.9, steps: 2))
        // Not allowed by the default transformer, whatever its name.
        XCTAssertNil(NSSecureUnarchiveFromDataTransformer().transformedValue(archived))
    }

    /// Thousands of small collections archive and read in moments (Foundation's archiver on Linux
    /// takes minutes: its object table hashes every array by its count).
    func testManyCollectionsArchiveQuickly() throws {
        let transformer = NSSecureUnarchiveFromDataTransformer()
        let value: [Any] = (0..<20_000).map { [$0, ["x": $0]] as [Any] }
        let start = Date()
        let data = try XCTUnwrap(transformer.reverseTransformedValue(value) as? Data)
        let read = try XCTUnwrap(transformer.transformedValue(data) as? [[Any]])
        XCTAssertEqual(read.count, 20_000)
        XCTAssertEqual((read[19_999][1] as? [String: Int])?["x"], 19_999)
        XCTAssertLessThan(Date().timeIntervalSince(start), 30, "archiving is no longer linear")
    }

    /// An archive in Apple's layout, with the mutable classes and URL bases Apple writes, reads.
    func testApplesArchiveLayoutReads() throws {
        let transformer = try XCTUnwrap(ValueTransformer(forName: .secureUnarchiveFromDataTransformerName))
        TransformerFixture.checkAppleArchive(transformer.transformedValue(TransformerFixture.appleArchive))
    }

    /// Every truncation and many single-byte changes of valid archives: the decoder throws (the
    /// transformer gives nil) or reads a value, and never traps.
    func testCutAndFlippedArchivesNeverCrash() throws {
        let secure = NSSecureUnarchiveFromDataTransformer()
        let swatches = TestSwatchTransformer()
        let inputs: [(ValueTransformer, Data)] = [
            (secure, try XCTUnwrap(secure.reverseTransformedValue(["k": [1, 2.5, "s"], "d": Date(), "u": UUID()] as [String: Any]) as? Data)),
            (swatches, try XCTUnwrap(swatches.reverseTransformedValue([TestSwatch(name: "teal", red: 0.1, steps: 3)]) as? Data)),
            (secure, TransformerFixture.appleArchive),
        ]
        var readCount = 0
        for (transformer, data) in inputs {
            let bytes = [UInt8](data)
            for length in 0..<bytes.count where transformer.transformedValue(Data(bytes[..<length])) != nil { readCount += 1 }
            for index in bytes.indices {
                for mask: UInt8 in [0x01, 0xFF] {
                    var changed = bytes
                    changed[index] ^= mask
                    if transformer.transformedValue(Data(changed)) != nil { readCount += 1 }
                }
            }
        }
        XCTAssertGreaterThan(readCount, 0, "some changed archives still read (a changed string, say)")
        for (name, bytes) in try TransformerFixture.damagedArchives() {
            XCTAssertNil(secure.transformedValue(bytes), name)
        }
    }

    // MARK: In stores

    /// A transformable attribute with no transformer name keeps every value of Apple's allowed
    /// classes, in every store, and what the file stores hold is the archive.
    func testNamelessTransformableKeepsAllowedValuesInEveryStore() {
        forEachStore(model: model, except: keepsAllowedValues) { kind, container in
            let context = container.viewContext
            // An incremental store's node gives NSNull as nil (Apple's NSIncrementalStoreNode does too).
            let samples = TransformerFixture.samples.filter { kind != .incremental || $0.name != "null" }
            for sample in samples {
                context.make("Keeper", ["label": sample.name, "value": sample.value])
            }
            try context.save()
            context.reset()
            let keepers = try context.all("Keeper")
            try require(keepers, count: samples.count, "keepers")
            for keeper in keepers {
                let label = keeper.value(forKey: "label") as? String ?? "?"
                guard let sample = TransformerFixture.samples.first(where: { $0.name == label }) else { continue }
                XCTAssertTrue(sample.check(keeper.value(forKey: "value")), "[\(kind)] \(label) read back as \(String(describing: keeper.value(forKey: "value")))")
            }
            guard let url = container.persistentStoreCoordinator.persistentStores.first?.url, [.binary, .xml, .appleSQLite].contains(kind) else { return }
            if kind != .binary {
                // The file holds the archive (base64 in the XML store's text); the binary store's
                // pages may be compressed.
                var bytes = (try? Data(contentsOf: url)) ?? Data()
                bytes += (try? Data(contentsOf: URL(fileURLWithPath: url.path + "-wal"))) ?? Data()
                let marker = kind == .xml ? Data("YnBsaXN0MD".utf8) : Data("NSKeyedArchiver".utf8)
                XCTAssertNotNil(bytes.range(of: marker), "[\(kind)] the store file holds no keyed archive")
            }
            // And reads back in a new coordinator.
            let reopened = try Self.reopen(container, kind: kind)
            let again = try reopened.viewContext.all("Keeper")
            XCTAssertEqual(again.count, TransformerFixture.samples.count, "[\(kind)] reopened")
            for keeper in again {
                let label = keeper.value(forKey: "label") as? String ?? "?"
                guard let sample = TransformerFixture.samples.first(where: { $0.name == label }) else { continue }
                XCTAssertTrue(sample.check(keeper.value(forKey: "value")), "[\(kind)] reopened: \(label)")
            }
        }
    }

    /// `Data` in a nameless transformable is archived too (as Apple's transformer does), in every
    /// store, the user stores included.
    /// A store written before November 2026 kept a nameless transformable's `Data` raw: it reads
    /// back as that `Data`, not as nil (which the next save would write over it).
    func testRawDataOfEarlierStoresStillReads() throws {
        let legacy = Data([1, 2, 3, 4])
        forEachStore(model: model, except: keepsArchivedBytes) { kind, container in
            let context = container.viewContext
            let secure = try XCTUnwrap(ValueTransformer.valueTransformer(forName: .secureUnarchiveFromDataTransformerName))
            ValueTransformer.setValueTransformer(RawBytesTransformer(), forName: .secureUnarchiveFromDataTransformerName)
            defer { ValueTransformer.setValueTransformer(secure, forName: .secureUnarchiveFromDataTransformerName) }
            context.make("Keeper", ["label": "legacy", "value": legacy])
            try context.save()
            ValueTransformer.setValueTransformer(secure, forName: .secureUnarchiveFromDataTransformerName)
            context.reset()
            XCTAssertEqual(try context.all("Keeper").first?.value(forKey: "value") as? Data, legacy, "[\(kind)]")
        }
    }

    func testDataInANamelessTransformableRoundTripsInEveryStore() {
        forEachStore(model: model) { kind, container in
            let context = container.viewContext
            context.make("Keeper", ["label": "blob", "value": Data([1, 2, 3])])
            try context.save()
            context.reset()
            let keepers = try context.all("Keeper")
            try require(keepers, count: 1, "keepers")
            XCTAssertEqual(keepers[0].value(forKey: "value") as? Data, Data([1, 2, 3]), "[\(kind)]")
        }
    }

    /// A subclass with its own allowed classes, registered under the model's name, keeps objects of
    /// the app's class and arrays of them.
    func testSubclassWithItsOwnAllowedClassesKeepsTheAppsObjects() {
        forEachStore(model: model, except: keepsAllowedValues) { kind, container in
            let context = container.viewContext
            let teal = TestSwatch(name: "teal", red: 0.0, alpha: 0.5, steps: 3)
            let pair = [TestSwatch(name: "red", red: 1), TestSwatch(name: "grey", red: 0.5, steps: -2)]
            context.make("Keeper", ["label": "one", "swatch": teal])
            context.make("Keeper", ["label": "two", "swatch": pair])
            try context.save()
            context.reset()
            let keepers = try context.all("Keeper", sortedBy: "label")
            try require(keepers, count: 2, "keepers")
            XCTAssertEqual(keepers[0].value(forKey: "swatch") as? TestSwatch, teal, "[\(kind)]")
            XCTAssertEqual(keepers[1].value(forKey: "swatch") as? [TestSwatch], pair, "[\(kind)]")
        }
    }

    /// `NSKeyedUnarchiveFromData` keeps any `NSCoding` object of the app, without an allowed list.
    func testKeyedUnarchiveFromDataKeepsTheAppsObjects() {
        forEachStore(model: model, except: keepsAllowedValues) { kind, container in
            let context = container.viewContext
            let value: [String: Any] = ["swatch": TestSwatch(name: "ochre", red: 0.8), "n": 7]
            context.make("Keeper", ["label": "keyed", "keyed": value])
            try context.save()
            context.reset()
            let keepers = try context.all("Keeper")
            try require(keepers, count: 1, "keepers")
            let read = keepers[0].value(forKey: "keyed") as? [String: Any]
            XCTAssertEqual(read?["swatch"] as? TestSwatch, TestSwatch(name: "ochre", red: 0.8), "[\(kind)]")
            XCTAssertEqual(read?["n"] as? Int, 7, "[\(kind)]")
        }
    }

    /// A value of a class the transformer does not allow is not saved: the save fails with a
    /// validation error naming the attribute and the class (Apple's transformer raises "Object of
    /// class … is not among allowed top level class list"), and the context can go on.
    func testValueOfADisallowedClassIsRefused() {
        struct NotAnObject { var x = 1 }
        forEachStore(model: model) { kind, container in
            let context = container.viewContext
            let cases: [(key: String, value: Any, mentions: String)] = [
                ("value", TestSwatch(name: "teal", red: 0), "TestSwatch"),
                ("value", [TestSwatch(name: "teal", red: 0)], "TestSwatch"),
                ("value", NotAnObject(), "NotAnObject"),
                ("swatch", "just a string", "a String (NSString) is not among the allowed classes"),
                ("swatch", [UUID()], "NSUUID"),
            ]
            for (key, value, mentions) in cases {
                let keeper = context.make("Keeper", ["label": "bad", key: value])
                XCTAssertThrowsError(try context.save(), "[\(kind)] \(key) = \(value)") { error in
                    let error = error as NSError
                    XCTAssertEqual(error.domain, NSCocoaErrorDomain)
                    XCTAssertEqual(error.code, NSManagedObjectValidationError, "[\(kind)] \(error)")
                    XCTAssertTrue(error.localizedDescription.contains("'\(key)' of Keeper"), "[\(kind)] \(error.localizedDescription)")
                    XCTAssertTrue(error.localizedDescription.contains(mentions), "[\(kind)] \(error.localizedDescription)")
                }
                context.delete(keeper)
            }
            context.make("Keeper", ["label": "good", "value": ["fine"]])
            try context.save()
            context.reset()
            XCTAssertEqual(try context.all("Keeper").first?.value(forKey: "value") as? [String], ["fine"], "[\(kind)]")
        }
    }

    /// Damaged archive bytes in a store read as nil (reported on standard error), never crash; the
    /// object's other values read, and a new value replaces the damaged one. Bytes in Apple's
    /// layout, stored the same way, read as Apple's value.
    func testDamagedArchiveBytesInAStoreReadAsNil() throws {
        let damaged = try TransformerFixture.damagedArchives()
        forEachStore(model: model, except: keepsArchivedBytes) { kind, container in
            let context = container.viewContext
            let secure = try XCTUnwrap(ValueTransformer.valueTransformer(forName: .secureUnarchiveFromDataTransformerName))
            // Bytes stored as they are: the raw transformer in the default one's place.
            ValueTransformer.setValueTransformer(RawBytesTransformer(), forName: .secureUnarchiveFromDataTransformerName)
            defer { ValueTransformer.setValueTransformer(secure, forName: .secureUnarchiveFromDataTransformerName) }
            for (name, bytes) in damaged { context.make("Keeper", ["label": name, "value": bytes]) }
            context.make("Keeper", ["label": "apple", "value": TransformerFixture.appleArchive])
            try context.save()
            ValueTransformer.setValueTransformer(secure, forName: .secureUnarchiveFromDataTransformerName)
            context.reset()

            let keepers = try context.all("Keeper")
            try require(keepers, count: damaged.count + 1, "keepers")
            for keeper in keepers {
                let label = keeper.value(forKey: "label") as? String
                if label == "apple" {
                    TransformerFixture.checkAppleArchive(keeper.value(forKey: "value"))
                } else {
                    XCTAssertNil(keeper.value(forKey: "value"), "[\(kind)] \(label ?? "?")")
                }
            }
            for keeper in keepers where keeper.value(forKey: "label") as? String != "apple" { keeper.setValue(["mended"], forKey: "value") }
            try context.save()
            context.reset()
            for keeper in try context.all("Keeper") where keeper.value(forKey: "label") as? String != "apple" {
                XCTAssertEqual(keeper.value(forKey: "value") as? [String], ["mended"], "[\(kind)]")
            }
        }
    }

    // MARK: Helpers

    /// A new container on the store file of `container` (whose store is removed first).
    private static func reopen(_ container: NSPersistentContainer, kind: StoreKind) throws -> NSPersistentContainer {
        let coordinator = container.persistentStoreCoordinator
        guard let store = coordinator.persistentStores.first, let url = store.url else { throw ScenarioStopped(description: "no store file") }
        try coordinator.remove(store)
        let reopened = NSPersistentContainer(name: "Reopened", managedObjectModel: container.managedObjectModel)
        let description = NSPersistentStoreDescription()
        description.type = kind.type
        description.url = url
        reopened.persistentStoreDescriptions = [description]
        var loadError: Error?
        reopened.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        return reopened
    }
}
