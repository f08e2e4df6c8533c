// The nesting limits keep parsing, printing and evaluating within a small thread stack.
import Foundation
import XCTest
@testable import CoreDataPredicate

final class NestingLimitTests: XCTestCase {
    /// The deepest inputs the parser accepts, each exercising a different recursion path.
    private let deepest: [String] = [
        String(repeating: "(", count: 200) + "a == 1" + String(repeating: ")", count: 200),
        String(repeating: "NOT ", count: 97) + "a == 1",
        "x == " + String(repeating: "(1 - ", count: 97) + "1" + String(repeating: ")", count: 97),
        "x == " + String(repeating: "abs(", count: 97) + "1" + String(repeating: ")", count: 97),
        String(repeating: "SUBQUERY(a, $v, ", count: 32) + "b == 1" + String(repeating: ").@count == 1", count: 32),
        "x == " + String(repeating: "-", count: 97) + "1",
        "x == " + String(repeating: "2 ** ", count: 97) + "1",
    ]

    /// Measured on x86_64 Linux: the deepest inputs need under 256 KiB of stack in release builds and
    /// under 2 MiB in debug builds (Linux threads get 8 MiB by default). The test runs them on a
    /// 4 MiB thread so that it passes in both and fails if the frames grow a lot.
    func testDeepestAcceptedInputsFitInASmallThreadStack() {
        let done = expectation(description: "finished on a 4 MiB stack")
        let inputs = deepest
        let thread = Thread {
            for format in inputs {
                guard let predicate = try? NSPredicate(validatingFormat: format) else { continue }
                let printed = predicate.predicateFormat
                _ = try? NSPredicate(validatingFormat: printed)
                _ = predicate.evaluate(with: ["a": [["b": 1]], "x": 1])
                _ = predicate.isEqual(predicate.withSubstitutionVariables(["v": 1]))
            }
            done.fulfill()
        }
        thread.stackSize = 4 * 1024 * 1024
        thread.start()
        wait(for: [done], timeout: 60)
    }

    func testDeepestInputsAreAccepted() throws {
        for format in deepest {
            XCTAssertNoThrow(try NSPredicate(validatingFormat: format), String(format.prefix(30)))
        }
    }
}
