import XCTest
@testable import CoreDataPageCodec

final class PageCodecTests: XCTestCase {
    func testCompressionRoundTripsAndShrinksRepetitiveData() throws {
        let text = Array(String(repeating: "name=Ada Lovelace;age=36;", count: 200).utf8)
        let block = try PageCompression.compress(text)
        XCTAssertLessThan(block.count, text.count / 4)
        XCTAssertEqual(try PageCompression.decompress(block, length: text.count), text)
    }

    func testEmptyInputRoundTrips() throws {
        let block = try PageCompression.compress([])
        XCTAssertEqual(try PageCompression.decompress(block, length: 0), [])
    }

    func testDamagedBlockThrowsInsteadOfCrashing() throws {
        let text = Array(String(repeating: "abcdefgh", count: 100).utf8)
        var block = try PageCompression.compress(text)
        block[block.count / 2] ^= 0xFF
        block.removeLast(3)
        XCTAssertThrowsError(try PageCompression.decompress(block, length: text.count))
        XCTAssertThrowsError(try PageCompression.decompress([0xFF, 0xFF, 0xFF], length: 100))
    }

    func testWrongExpectedLengthIsCorruption() throws {
        let block = try PageCompression.compress(Array("hello hello hello".utf8))
        XCTAssertEqual(
            try? PageCompression.decompress(block, length: 3), nil,
            "a block must decode to exactly the recorded length")
        XCTAssertThrowsError(try PageCompression.decompress(block, length: -1)) { error in
            XCTAssertEqual(error as? PageCompression.Error, .lengthOutOfRange(-1))
        }
    }

    func testXXH3MatchesReferenceValues() {
        // Reference values from xxHash's own test vectors (XXH3_64bits, seed 0).
        XCTAssertEqual(PageChecksum.xxh3([]), 0x2D06_8005_38D3_94C2)
        XCTAssertNotEqual(PageChecksum.xxh3([1]), PageChecksum.xxh3([2]))
        XCTAssertNotEqual(PageChecksum.xxh3([1], seed: 1), PageChecksum.xxh3([1], seed: 2))
    }
}
