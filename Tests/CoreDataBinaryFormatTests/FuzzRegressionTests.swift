import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation
import XCTest

/// Inputs the binary-store fuzz targets (Fuzz/README.md) turned up, replayed through the normal
/// build from `Fixtures/fuzz-regressions/<Target>-<bug>`. Each must now throw, never trap.
final class FuzzRegressionTests: XCTestCase {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/fuzz-regressions")

    static func input(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// A FuzzBinaryStoreOpen input (checksums already valid): a 4-byte little-endian data-file
    /// length, the data file, the log. Written beside each other in a fresh folder.
    static func storeFiles(_ name: String) throws -> String {
        let bytes = try input(name)
        let length = min(Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24, bytes.count - 4)
        let path = BinaryTestModel.temporaryPath()
        try Data(bytes[4..<(4 + length)]).write(to: URL(fileURLWithPath: path))
        try Data(bytes[(4 + length)...]).write(to: URL(fileURLWithPath: path + "-wal"))
        return path
    }

    /// A committed save that puts a Tag (entity 2 of the golden catalog) and then logs a catalog
    /// naming only Item. Log replay decoded the put against the old catalog; opening then looked
    /// the entity up in the new one and trapped with "Index out of range". A logged catalog must
    /// extend the one before it (append-only, Formats/binary-store.md §6).
    func testLoggedCatalogThatDropsEntitiesIsDamageNotATrap() throws {
        let path = try Self.storeFiles("FuzzBinaryStoreOpen-log-catalog-shrinks")
        XCTAssertThrowsError(try BinaryStore(path: path, model: BinaryTestModel.model, metadata: StoreMetadata())) { error in
            guard case StoreError.corrupt(let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains("catalog"), detail)
        }
        let verification = BinaryStore.verify(path: path)
        XCTAssertFalse(verification.isIntact, "\(verification)")
    }

    func testCatalogExtends() {
        var base = Catalog()
        base.register(entity: "A", properties: ["x", "y"])
        var grown = base
        grown.register(entity: "A", properties: ["z"])
        grown.register(entity: "B", properties: [])
        XCTAssertTrue(grown.extends(base))
        XCTAssertTrue(base.extends(base))
        XCTAssertFalse(base.extends(grown))
        var renamed = Catalog()
        renamed.register(entity: "A", properties: ["y", "x"])
        XCTAssertFalse(renamed.extends(base))
    }

    /// An LZ4 page of 8 stored bytes claiming a decoded length of 1 GiB. The decoder allocated the
    /// whole 1 GiB before LZ4 failed (FuzzBinaryPage ran at ~270 executions/s with 1.2 GB resident);
    /// LZ4 cannot expand a byte into more than 255, so the header is now rejected.
    func testCompressedPageClaimingMoreThanLZ4CanMakeIsRejected() throws {
        let page = try Self.input("FuzzBinaryPage-lz4-decoded-length-1gib")
        XCTAssertThrowsError(try PageHeader(decoding: page, at: 4_096)) { error in
            XCTAssertTrue("\(error)".contains("more than LZ4"), "\(error)")
        }
        // Real pages stay accepted: a payload that compresses well, round-tripped.
        let payload = [UInt8](repeating: 7, count: 60_000)
        let encoded = PageCodec.encode(kind: .data, payload: payload, generation: 1)
        let header = try PageHeader(decoding: encoded, at: 4_096)
        XCTAssertEqual(header.codec, 1)
        XCTAssertEqual(try PageCodec.decodePayload(header, page: encoded, at: 4_096), payload)
    }

    /// A logged metadata entry whose binary property list holds a set (marker 0xC2). Foundation on
    /// Linux crashed the process (a null-pointer read bridging the set) instead of throwing; such
    /// lists are now rejected before Foundation sees them (`PropertyListBytes`).
    func testMetadataHoldingABinaryPlistSetIsDamageNotACrash() throws {
        let plist = try Self.input("FuzzLogFrame-metadata-bplist-set")
        XCTAssertThrowsError(try MetadataCodec.decode(plist, location: "log offset 624")) { error in
            XCTAssertTrue("\(error)".contains("log offset 624"), "\(error)")
            XCTAssertTrue("\(error)".contains("object 0 at byte 8 is a set"), "\(error)")
        }
        // Real metadata still decodes: the encoder's own binary list, every property-list type.
        let metadata = StoreMetadata(["s": "x", "n": 3, "d": 2.5, "b": true, "t": Date(timeIntervalSinceReferenceDate: 7),
                                      "data": Data([1, 2]), "a": [1, "two"], "dict": ["k": ["v"]]])
        let decoded = try MetadataCodec.decode(try MetadataCodec.encode(metadata), location: "metadata page")
        XCTAssertEqual(decoded["s"] as? String, "x")
        XCTAssertEqual(decoded["n"] as? Int, 3)
        XCTAssertEqual(decoded["t"] as? Date, Date(timeIntervalSinceReferenceDate: 7))
        XCTAssertEqual(decoded["data"] as? Data, Data([1, 2]))
        XCTAssertEqual((decoded["dict"] as? [String: Any])?["k"] as? [String], ["v"])
    }

    /// Damaged binary property lists are rejected with the place, never read out of bounds.
    func testBinaryPlistScreenRejectsMalformedTrailers() throws {
        var plist = try Self.input("FuzzLogFrame-metadata-bplist-set")
        plist[plist.count - 26] = 9  // offset size 9
        XCTAssertThrowsError(try MetadataCodec.decode(plist, location: "here")) { XCTAssertTrue("\($0)".contains("offset size 9"), "\($0)") }
        plist[plist.count - 26] = 1
        plist[plist.count - 8] = 0xFF  // the table offset's high byte: far past the trailer
        XCTAssertThrowsError(try MetadataCodec.decode(plist, location: "here")) { XCTAssertTrue("\($0)".contains("does not fit"), "\($0)") }
        XCTAssertThrowsError(try MetadataCodec.decode(Array("bplist00".utf8), location: "here")) {
            XCTAssertTrue("\($0)".contains("shorter than"), "\($0)")
        }
    }
}
