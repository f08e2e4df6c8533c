import CoreDataModel
import XCTest

/// Name → slot in a property layout: names that share a fingerprint (length and first byte)
/// are told apart by comparing them; names the layout lacks give nil.
final class PropertyLayoutTests: XCTestCase {
    func testSlotsOfNamesThatShareAFingerprint() {
        let names = ["axb", "ayb", "azb", "name", "naïve", "", "a", "avery_long_attribute_name_past_fifteen_bytes", "title"]
        let layout = PropertyLayout(entityName: "E", names: names)
        for (slot, name) in names.enumerated() {
            XCTAssertEqual(layout.slot(of: name), slot, name)
        }
        for missing in ["awb", "nam", "names", "naive", "b", "Title", "avery_long_attribute_name_past_fifteen_byteZ"] {
            XCTAssertNil(layout.slot(of: missing), missing)
        }
    }

    func testADuplicateNameKeepsItsFirstSlot() {
        let layout = PropertyLayout(entityName: "E", names: ["a", "b", "a"])
        XCTAssertEqual(layout.slot(of: "a"), 0)
        XCTAssertEqual(layout.slot(of: "b"), 1)
    }

    /// Swift compares strings by canonical equivalence: a name written decomposed finds the
    /// slot of the same name written composed, as a dictionary lookup would.
    func testCanonicallyEquivalentNamesFindTheSameSlot() {
        let layout = PropertyLayout(entityName: "E", names: ["caf\u{E9}", "x"])
        XCTAssertEqual(layout.slot(of: "cafe\u{301}"), 0)
        let kelvin = PropertyLayout(entityName: "E", names: ["\u{212A}"])
        XCTAssertEqual(kelvin.slot(of: "K"), 0)
    }

    /// Bridged and computed strings find the same slot as literals.
    func testNamesMadeAtRunTimeFindTheirSlots() {
        let layout = PropertyLayout(entityName: "E", names: ["firstName", "lastName"])
        let built = ["first", "Name"].joined()
        XCTAssertEqual(layout.slot(of: built), 0)
        XCTAssertEqual(layout.slot(of: String("xlastName".dropFirst())), 1)
    }
}
