import CoreDataModel
import Foundation
import XCTest

/// Apple's version hashes (`Formats/model-version-hash.md`, "Apple's hashes"): every entity hash
/// of every version of the CoreDataPlus sample model, computed from the `.xcdatamodeld` source,
/// equals the one Xcode wrote to `VersionInfo.plist`; the store metadata Apple's SQLite store
/// wrote (hashes and their digest) agree too.
final class AppleVersionHashTests: XCTestCase {
    static let compiled = Fixtures.root.appendingPathComponent("apple-compiled")
    static let versions = ["SampleModel", "SampleModel2", "SampleModel3"]

    /// `NSManagedObjectModel_VersionHashes` of `VersionInfo.plist`: version → entity → hash.
    private func versionInfoHashes() throws -> [String: [String: Data]] {
        let data = try Data(contentsOf: Self.compiled.appendingPathComponent("SampleModel.momd/VersionInfo.plist"))
        let plist = try XCTUnwrap(PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        return try XCTUnwrap(plist["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
    }

    private func model(_ version: String) throws -> NSManagedObjectModel {
        try XcodeModelPackage(contentsOf: Fixtures.sampleModel).loadModel(version: version)
    }

    func testEveryEntityHashEqualsXcodes() throws {
        let expected = try versionInfoHashes()
        XCTAssertEqual(Set(expected.keys), Set(Self.versions))
        var compared = 0, matched = 0
        for version in Self.versions {
            let ours = try model(version).appleEntityVersionHashesByName
            let theirs = try XCTUnwrap(expected[version])
            XCTAssertEqual(Set(ours.keys), Set(theirs.keys), version)
            for (name, hash) in theirs {
                compared += 1
                if ours[name] == hash { matched += 1 }
                XCTAssertEqual(ours[name]?.hex, hash.hex, "\(version).\(name)")
            }
        }
        XCTAssertEqual(compared, 13)
        XCTAssertEqual(matched, 13)
    }

    /// The compiled `.mom` files load to the same Apple hashes as the source.
    func testCompiledModelsGiveTheSameHashes() throws {
        let expected = try versionInfoHashes()
        for version in Self.versions {
            let url = Self.compiled.appendingPathComponent("SampleModel.momd/\(version).mom")
            let compiledModel = try NSManagedObjectModel(validatingContentsOf: url)
            XCTAssertEqual(compiledModel.appleEntityVersionHashesByName, expected[version], version)
        }
    }

    /// `SampleModel_V1.sqlite` and `SampleModel_V2.sqlite` were saved by Apple's SQLite store with
    /// versions 1 and 2: their metadata's `NSStoreModelVersionHashes` and
    /// `NSStoreModelVersionHashesDigest` equal ours.
    func testAppleStoreMetadataAgrees() throws {
        for (file, version) in [("SampleModel_V1.sqlite", "SampleModel"), ("SampleModel_V2.sqlite", "SampleModel2")] {
            let metadata = try Self.storeMetadata(Self.compiled.appendingPathComponent(file))
            let model = try model(version)
            XCTAssertEqual(metadata["NSStoreModelVersionHashes"] as? [String: Data], model.appleEntityVersionHashesByName, file)
            XCTAssertEqual(metadata["NSStoreModelVersionHashesDigest"] as? String, model.appleEntityVersionHashesDigest, file)
        }
    }

    /// Fields the fixtures never vary still change the hash where Apple's layout says they do.
    func testFieldsOutsideTheFixturesChangeTheHash() throws {
        let base = try model("SampleModel3")
        let reference = base.appleEntityVersionHashesByName
        func changed(_ edit: (NSManagedObjectModel) -> Void) throws -> [String: Data] {
            let copy = try model("SampleModel3")
            edit(copy)
            return copy.appleEntityVersionHashesByName
        }
        let edits: [(String, (NSManagedObjectModel) -> Void)] = [
            ("entity modifier", { $0.entitiesByName["Maker"]!.versionHashModifier = "2" }),
            ("property modifier", { $0.entitiesByName["Maker"]!.attributesByName["name"]!.versionHashModifier = "2" }),
            ("abstract", { $0.entitiesByName["Maker"]!.isAbstract = true }),
            ("read-only", { $0.entitiesByName["Maker"]!.attributesByName["name"]!.isReadOnly = true }),
            ("external storage", { $0.entitiesByName["Maker"]!.attributesByName["name"]!.allowsExternalBinaryDataStorage = true }),
            ("ordered", { $0.entitiesByName["Maker"]!.relationshipsByName["cars"]!.isOrdered = true }),
        ]
        for (label, edit) in edits {
            XCTAssertNotEqual(try changed(edit)["Maker"], reference["Maker"], label)
        }
        // What Apple leaves out: class name, user info, renaming identifier, delete rule.
        let ignored = try changed { model in
            let maker = model.entitiesByName["Maker"]!
            maker.managedObjectClassName = "Other"
            maker.userInfo = ["key": "value"]
            maker.renamingIdentifier = "OldMaker"
            maker.relationshipsByName["cars"]!.deleteRule = .cascadeDeleteRule
        }
        XCTAssertEqual(ignored["Maker"], reference["Maker"])
        XCTAssertEqual(base.appleVersionChecksum.count, 44)
    }

    /// The `Z_METADATA.Z_PLIST` of an SQLite file without an SQLite library: the metadata binary
    /// plist is stored whole in one page, so find `bplist00` and take the length its trailer
    /// declares (offset table offset + objects × offset size + 32).
    static func storeMetadata(_ url: URL) throws -> [String: Any] {
        let bytes = [UInt8](try Data(contentsOf: url))
        let magic = Array("bplist00".utf8)
        var start = 0
        while start + magic.count <= bytes.count {
            if Array(bytes[start..<start + magic.count]) == magic {
                for length in stride(from: 40, through: min(bytes.count - start, 1 << 16), by: 1) {
                    let trailer = start + length - 32
                    let offsetSize = Int(bytes[trailer + 6])
                    let objects = bytes[trailer + 8..<trailer + 16].reduce(0) { $0 << 8 | Int($1) }
                    let tableOffset = bytes[trailer + 24..<trailer + 32].reduce(0) { $0 << 8 | Int($1) }
                    guard (1...8).contains(offsetSize), objects > 0, objects < length,
                          tableOffset + objects * offsetSize + 32 == length else { continue }
                    let data = Data(bytes[start..<start + length])
                    if let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
                       plist["NSStoreModelVersionHashes"] != nil {
                        return plist
                    }
                }
            }
            start += 1
        }
        throw CocoaError(.fileReadCorruptFile)
    }
}
