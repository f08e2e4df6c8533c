// Runs every row of FormatTable: parse, compare with the expected tree, print, parse the printed
// form again, and evaluate against People.all.
import XCTest
@testable import CoreDataPredicate

final class FormatTableTests: XCTestCase {
    func testTableIsLargeEnough() {
        XCTAssertGreaterThanOrEqual(FormatTable.all.count, 200)
    }

    func testEveryFormatParsesToItsTree() {
        for row in FormatTable.all {
            guard let parsed = parse(row) else { continue }
            XCTAssertEqual(parsed, row.tree, "tree of \(row.format): got \(parsed.predicateFormat)", file: row.file, line: row.line)
            XCTAssertEqual(parsed.hash, row.tree.hash, "hash of \(row.format)", file: row.file, line: row.line)
        }
    }

    func testEveryFormatPrintsInAppleStyle() {
        for row in FormatTable.all {
            guard let parsed = parse(row) else { continue }
            XCTAssertEqual(parsed.predicateFormat, row.printed, "printed form of \(row.format)", file: row.file, line: row.line)
            XCTAssertEqual(parsed.description, row.printed, file: row.file, line: row.line)
        }
    }

    func testEveryPrintedFormParsesBackToAnEqualPredicate() {
        for row in FormatTable.all {
            guard let parsed = parse(row) else { continue }
            do {
                let reparsed = try NSPredicate(validatingFormat: parsed.predicateFormat)
                XCTAssertEqual(reparsed, parsed, "round trip of \(row.format) via \(parsed.predicateFormat)", file: row.file, line: row.line)
                XCTAssertEqual(reparsed.predicateFormat, parsed.predicateFormat, "printing is stable for \(row.format)", file: row.file, line: row.line)
                XCTAssertEqual(People.selected(by: reparsed), row.selects, "selection after round trip of \(row.format)", file: row.file, line: row.line)
            } catch {
                XCTFail("printed form of \(row.format) does not parse: \(error)", file: row.file, line: row.line)
            }
        }
    }

    func testEveryFormatSelectsTheExpectedPeople() {
        for row in FormatTable.all {
            guard let parsed = parse(row) else { continue }
            XCTAssertEqual(People.selected(by: parsed), row.selects, "selection of \(row.format)", file: row.file, line: row.line)
        }
    }

    func testTrappingInitializerGivesTheSameTree() {
        for row in FormatTable.all {
            let predicate = NSPredicate(format: row.format, argumentArray: row.arguments.map { $0 as Any })
            XCTAssertEqual(predicate, row.tree, row.format, file: row.file, line: row.line)
        }
    }

    func testParsedPredicatesAreTheSubclassApplesParserReturns() {
        for row in FormatTable.all {
            guard let parsed = parse(row) else { continue }
            XCTAssertTrue(type(of: parsed) == type(of: row.tree), "class of \(row.format)", file: row.file, line: row.line)
        }
    }

    private func parse(_ row: FormatCase) -> NSPredicate? {
        do {
            return try NSPredicate(validatingFormat: row.format, argumentArray: row.arguments)
        } catch {
            XCTFail("\(row.format) does not parse: \(error)", file: row.file, line: row.line)
            return nil
        }
    }
}
