import CoreData
import CoreDataSQLiteStore
import CoreDataStorage
import Foundation
import XCTest

/// The SQL translation of fetches on Apple's SQLite store (`Formats/apple-sqlite-store.md` §10)
/// against the reference evaluator: every predicate of the table runs once with SQL picking the
/// candidates and once over the loaded rows alone, on the store Core Data wrote, and the two must
/// return the same objects in the same order.
final class AppleSQLiteFetchTranslationTests: XCTestCase {
    /// Predicates over the CoreDataPlus sample (125 cars of 10 makers, 20 people), with whether
    /// SQL alone decides them (`true`) or only narrows the candidates (`false`).
    static let predicates: [(String, Bool)] = [
        ("maker == 'FIAT'", true),
        ("maker != 'FIAT'", true),
        ("maker == nil", true),
        ("maker != nil", true),
        ("markedForDeletionAsOf == nil", true),
        ("markedForDeletionAsOf != nil", true),
        ("numberPlate BEGINSWITH '1'", true),
        ("numberPlate ENDSWITH '9'", true),
        ("model CONTAINS 'an'", true),
        ("model CONTAINS[c] 'AN'", false),
        ("maker IN {'BMW', 'Kia', 'Nobody'}", true),
        ("NOT (maker IN {'BMW', 'Kia'})", true),
        ("maker == 'FIAT' AND model == 'Panda'", true),
        ("maker == 'BMW' OR model == 'Clio'", true),
        ("NOT (maker == 'FIAT')", true),
        ("NOT (model != 'Panda' AND maker == 'FIAT')", true),
        ("maker LIKE 'F*'", false),
        ("maker MATCHES '.*a.*'", false),
        ("maker == 'FIAT' AND model LIKE[c] 'p*'", false),
        ("maker == 'FIAT' OR model LIKE[c] 'p*'", false),
        ("owner == nil", true),
        ("owner != nil", true),
        ("owner.firstName == 'Bret'", true),
        ("owner.firstName BEGINSWITH 'B' AND owner.lastName != 'Munger'", true),
        ("owner.updatedAt > %@", true),
        ("owner.firstName ==[c] 'bret'", false),
        // Cars without an owner read owner.firstName as nil: != matches them, == nil too.
        ("owner.firstName != 'Bret'", true),
        ("owner.firstName == nil", true),
        ("NOT (owner.firstName != 'Bret')", true),
        ("owner == nil OR owner.lastName == 'Munger'", true),
        // Only ExpensiveSportCar has the attribute: other cars read it as nil, which SQL's
        // column (shared by the table) cannot tell from a stored nil.
        ("isLimitedEdition == YES", false),
        ("isLimitedEdition == NO", false),
        ("isLimitedEdition != YES", false),
        ("TRUEPREDICATE", true),
        ("FALSEPREDICATE", true),
        ("numberPlate < '5'", false),
        ("numberPlate.length > 2", false),
    ]

    static let personPredicates: [(String, Bool)] = [
        ("ANY cars.maker == 'FIAT'", true),
        ("ANY cars.model == 'Aventador LP750-4'", true),
        ("NOT (ANY cars.maker == 'FIAT')", true),
        ("ALL cars.maker == 'FIAT'", false),
        ("cars.@count > 5", false),
        ("updatedAt < %@", true),
        ("updatedAt BETWEEN %@", true),
        ("firstName IN %@", true),
        ("firstName == 'Bret' AND lastName BEGINSWITH 'N'", true),
        ("SUBQUERY(cars, $c, $c.maker == 'BMW').@count > 0", false),
    ]

    static let expensiveCarPredicates: [(String, Bool)] = [
        ("isLimitedEdition == YES", true),
        ("isLimitedEdition == NO", true),
        ("isLimitedEdition != YES", true),
        ("isLimitedEdition == YES OR maker == 'BMW'", true),
    ]

    static let tables = [("Car", predicates), ("Person", personPredicates), ("ExpensiveSportCar", expensiveCarPredicates)]

    private func openStores() throws -> (translated: AppleSQLiteStore, evaluated: AppleSQLiteStore, model: NSManagedObjectModel) {
        let url = try MigrationFixtures.folder().appendingPathComponent("Sample.sqlite")
        try FileManager.default.copyItem(at: AppleSQLiteStoreTests.fixtures.appendingPathComponent("SampleModel_V1.sqlite"), to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        let model = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage).loadModel(version: "SampleModel")
        // A coordinator freezes the model, as the stores expect.
        _ = NSPersistentStoreCoordinator(managedObjectModel: model)
        var options = AppleSQLiteStoreOptions()
        options.readOnly = true
        let translated = try AppleSQLiteStore(path: url.path, model: model, metadata: StoreMetadata(), options: options)
        options.translatesFetchesToSQL = false
        let evaluated = try AppleSQLiteStore(path: url.path, model: model, metadata: StoreMetadata(), options: options)
        return (translated, evaluated, model)
    }

    static func arguments(for format: String) -> [Any] {
        let middle = Date(timeIntervalSinceReferenceDate: 639_503_569.6386)
        if format.contains("BETWEEN") { return [[Date(timeIntervalSinceReferenceDate: 639_503_569.6383), middle]] }
        if format.contains("IN %@") { return [["Bret", "Alex", "Nobody"]] }
        return format.contains("%@") ? [middle] : []
    }

    func testEveryPredicateGivesTheEvaluatorsAnswer() throws {
        let (translated, evaluated, model) = try openStores()
        var exact = 0
        var total = 0
        for (entityName, table) in Self.tables {
            let entity = try XCTUnwrap(model.entitiesByName[entityName])
            for (format, expectExact) in table {
                let predicate = NSPredicate(format: format, argumentArray: Self.arguments(for: format))
                for sorted in [false, true] {
                    var request = StoreFetchRequest(entity: entity, predicate: predicate)
                    if sorted {
                        request.sortDescriptors = [NSSortDescriptor(key: entityName == "Person" ? "lastName" : "numberPlate", ascending: false)]
                        request.limit = 7
                        request.offset = 2
                    }
                    for type in [StoreFetchRequest.ResultType.objectIDs, .count] {
                        request.resultType = type
                        let viaSQL = try translated.execute(request)
                        let reference = try evaluated.execute(request)
                        switch (viaSQL, reference) {
                        case (.objectIDs(let a), .objectIDs(let b)): XCTAssertEqual(a, b, "\(entityName): \(format) sorted \(sorted)")
                        case (.count(let a), .count(let b)): XCTAssertEqual(a, b, "\(entityName): \(format) sorted \(sorted)")
                        default: XCTFail("\(format): result kinds differ")
                        }
                    }
                }
                total += 1
                if expectExact { exact += 1 }
            }
        }
        // The table must exercise both kinds, and some predicates must select nothing or all.
        XCTAssertGreaterThan(exact, 30)
        XCTAssertGreaterThan(total - exact, 8)
        print("sql translation: \(total) predicates, \(exact) decided by SQL alone, \(total - exact) narrowed and re-checked")
    }

    func testTheTranslationIsExactWhereTheTableSaysSo() throws {
        let (translated, _, model) = try openStores()
        for (entityName, table) in Self.tables {
            let entity = try XCTUnwrap(model.entitiesByName[entityName])
            for (format, expectExact) in table {
                let predicate = NSPredicate(format: format, argumentArray: Self.arguments(for: format))
                XCTAssertEqual(translated.translatesExactly(predicate, for: entity), expectExact, format)
            }
        }
    }
}
