import CoreDataBinaryFormat
import Foundation
import XCTest

/// The zero check of a preallocated log tail (wal.md §5, §7): one nonzero byte anywhere makes
/// the tail a torn save, not preallocation.
final class ZeroBytesTests: XCTestCase {
    func testEveryPositionOfANonzeroByteIsSeen() {
        XCTAssertTrue(ZeroBytes.areAll([UInt8]()))
        XCTAssertTrue(ZeroBytes.areAll([UInt8(0)]))
        XCTAssertFalse(ZeroBytes.areAll([UInt8(1)]))
        for count in [2, 3, 7, 8, 9, 63, 64, 65, 4_097] {
            XCTAssertTrue(ZeroBytes.areAll([UInt8](repeating: 0, count: count)), "\(count) zeros")
            for position in Set([0, 1, count / 2, count - 2, count - 1]) {
                var bytes = [UInt8](repeating: 0, count: count)
                bytes[position] = 0x80
                XCTAssertFalse(ZeroBytes.areAll(bytes), "\(count) bytes, nonzero at \(position)")
            }
        }
        // A run of the same nonzero byte: equal neighbours, but not zero.
        XCTAssertFalse(ZeroBytes.areAll([UInt8](repeating: 0xFF, count: 1 << 20)))
    }

    func testAMebibyteOfZerosAndItsSlicesAndData() {
        var tail = [UInt8](repeating: 0, count: 1 << 20)
        XCTAssertTrue(ZeroBytes.areAll(tail))
        XCTAssertTrue(ZeroBytes.areAll(Data(tail)))
        tail[(1 << 20) - 1] = 1
        XCTAssertFalse(ZeroBytes.areAll(tail))
        XCTAssertTrue(ZeroBytes.areAll(tail[..<((1 << 20) - 1)]), "a slice ends before the nonzero byte")
        XCTAssertFalse(ZeroBytes.areAll(tail[1...]), "a slice that starts past 0 still reaches it")
        tail[(1 << 20) - 1] = 0
        tail[0] = 1
        XCTAssertTrue(ZeroBytes.areAll(tail[1...]), "a slice's first byte is where it starts, not the array's")
        XCTAssertFalse(ZeroBytes.areAll(tail[0...]))
        let data = Data(tail)
        XCTAssertTrue(ZeroBytes.areAll(data[1...]), "a Data slice with a nonzero start index")
        XCTAssertFalse(ZeroBytes.areAll(data))
    }
}
