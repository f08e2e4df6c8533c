import CoreDataBinaryFormat
import Foundation
import XCTest

/// Pages (binary-store.md §4), root slots (§3), headers (§2) and log frames (wal.md §3).
final class PageAndFrameTests: XCTestCase {
    func testCompressiblePageUsesLZ4AndRoundTrips() throws {
        let payload = [UInt8](repeating: 7, count: 10_000)
        let page = PageCodec.encode(kind: .data, payload: payload, generation: 3)
        let header = try PageHeader(decoding: page, at: 4096)
        XCTAssertEqual(header.codec, 1)
        XCTAssertLessThan(header.storedLength, payload.count)
        XCTAssertEqual(header.generation, 3)
        XCTAssertEqual(try PageCodec.decodePayload(header, page: page, at: 4096), payload)
    }

    func testIncompressiblePageIsStoredAsIs() throws {
        var generator = SystemRandomNumberGenerator()
        let payload = (0..<2_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let page = PageCodec.encode(kind: .index, payload: payload, generation: 1)
        let header = try PageHeader(decoding: page, at: 4096)
        XCTAssertEqual(header.codec, 0)
        XCTAssertEqual(try PageCodec.decodePayload(header, page: page, at: 4096), payload)
    }

    func testEveryFlippedBitOfAPageIsCaught() throws {
        let page = PageCodec.encode(kind: .catalog, payload: Array("catalog bytes of a small store".utf8), generation: 1)
        for index in page.indices {
            var damaged = page
            damaged[index] ^= 0x10
            do {
                let header = try PageHeader(decoding: damaged, at: 8192)
                _ = try PageCodec.decodePayload(header, page: damaged, at: 8192)
                XCTFail("flip at byte \(index) went unnoticed")
            } catch {
                XCTAssertTrue(error.location.hasPrefix("data file offset 8192"), error.description)
            }
        }
    }

    func testFileHeaderAndRootSlotsRoundTripAndRejectDamage() throws {
        let uuid = UUID()
        let header = FileHeader(storeUUID: uuid, created: 1_700_000_000_000)
        XCTAssertEqual(try FileHeader(decoding: header.encoded()), header)
        var wrongMagic = header.encoded()
        wrongMagic[0] = 0x53
        XCTAssertThrowsError(try FileHeader(decoding: wrongMagic)) { XCTAssertTrue("\($0)".contains("not a binary store"), "\($0)") }
        var damaged = header.encoded()
        damaged[20] ^= 1
        XCTAssertThrowsError(try FileHeader(decoding: damaged)) { XCTAssertTrue("\($0)".contains("damaged"), "\($0)") }

        let root = RootSlot(generation: 4, dataEnd: 90_000, indexDirectoryOffset: 80_000, catalogOffset: 85_000, metadataOffset: 86_000, logSalt: 0xDEAD_BEEF, objectCount: 12)
        XCTAssertEqual(RootSlot.decode(root.encoded()), .valid(root))
        XCTAssertEqual(RootSlot.decode([UInt8](repeating: 0, count: 128)), .unused)
        var slot = root.encoded()
        slot[9] ^= 4
        guard case .damaged = RootSlot.decode(slot) else { return XCTFail("a damaged slot decoded") }
    }

    func testFramesChainTheirChecksums() throws {
        var log: [UInt8] = []
        let salt: UInt64 = 0x1234_5678
        let first = LogFrameCodec.append(payload: [1, 2, 3], commit: false, salt: salt, sequence: 1, previousChecksum: salt, to: &log)
        let firstLength = log.count
        LogFrameCodec.append(payload: [4, 5], commit: true, salt: salt, sequence: 2, previousChecksum: first, to: &log)
        let frame1 = Array(log[0..<firstLength])
        let frame2 = Array(log[firstLength...])
        XCTAssertTrue(LogFrameCodec.isValid(frame1, seed: salt))
        XCTAssertTrue(LogFrameCodec.isValid(frame2, seed: first))
        // The second frame does not validate after any other first frame.
        XCTAssertFalse(LogFrameCodec.isValid(frame2, seed: salt))
        let header = try XCTUnwrap(LogFrameHeader(decoding: frame2))
        XCTAssertTrue(header.isCommit)
        XCTAssertEqual(header.sequence, 2)
        XCTAssertEqual(header.payloadLength, 2)
    }

    func testEntriesSplitAndCheckTheirBodies() throws {
        var writer = ByteWriter()
        LogEntryCodec.append(kind: .put, body: [9, 9, 9][...], to: &writer)
        LogEntryCodec.append(kind: .metadata, body: [1][...], to: &writer)
        let entries = try LogEntryCodec.entries(of: writer.bytes, frameOffset: 64)
        XCTAssertEqual(entries.map(\.kind), [.put, .metadata])
        XCTAssertEqual(entries[0].body, 9..<12)
        var damaged = writer.bytes
        damaged[10] ^= 1
        XCTAssertThrowsError(try LogEntryCodec.entries(of: damaged, frameOffset: 64)) {
            XCTAssertTrue("\($0)".contains("log offset 96"), "\($0)")
        }
    }

    func testDataPageBuilderAndReader() throws {
        var builder = DataPageBuilder()
        let records: [[UInt8]] = [[1, 2, 3], [4], [5, 6]]
        for record in records { _ = builder.add(record) }
        let page = try DataPage(payload: builder.finish(), pageOffset: 4096)
        XCTAssertEqual(page.count, 3)
        for (slot, record) in records.enumerated() {
            XCTAssertEqual(Array(page.payload[try XCTUnwrap(page.range(of: slot))]), record)
        }
        XCTAssertNil(page.range(of: 3))
        XCTAssertThrowsError(try DataPage(payload: [9, 0, 0, 0], pageOffset: 4096))
    }
}
