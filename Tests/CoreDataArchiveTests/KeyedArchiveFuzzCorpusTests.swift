// The keyed-archive fuzz target's seed corpus (Fuzz/Corpus/FuzzKeyedArchive): Apple's archives
// from the conformance fixtures (Tests/CoreDataModelTests/Fixtures: the compiled mapping model, Xcode's four value expressions, the
// compiled models, and two of them with model features added: derived-*) and hand-made archives of every expression and predicate class, written by
// this test with `COREDATA_WRITE_FUZZ_CORPUS=1` (Fuzz/make-corpus.sh sets it). Every corpus file,
// regression inputs included, is replayed through the decoders the fuzz target drives.
import CoreDataArchive
import CoreDataPredicate
import Foundation
import XCTest

final class KeyedArchiveFuzzCorpusTests: XCTestCase {
    private var corpus: URL {
        Conformance.repositoryRoot.appendingPathComponent("Fuzz/Corpus/FuzzKeyedArchive", isDirectory: true)
    }

    private var writing: Bool { ProcessInfo.processInfo.environment["COREDATA_WRITE_FUZZ_CORPUS"] == "1" }

    /// Fails when a seed is missing or stale; writes it instead in write mode.
    private func keep(_ seeds: [(String, Data)]) throws -> [String] {
        var missing: [String] = []
        for (name, data) in seeds {
            let file = corpus.appendingPathComponent(name)
            if (try? Data(contentsOf: file)) == data { continue }
            if writing {
                try FileManager.default.createDirectory(at: corpus, withIntermediateDirectories: true)
                try data.write(to: file)
            } else {
                missing.append(name)
            }
        }
        return missing
    }

    func testCorpusHoldsTheHandMadeArchives() throws {
        let missing = try keep(Self.handMade())
        XCTAssertTrue(missing.isEmpty, "seeds missing from \(corpus.path): \(missing); run `bash Fuzz/make-corpus.sh`")
    }

    func testCorpusHoldsApplesArchives() throws {
        var seeds = [("apple-V2toV3.cdm", try Conformance.data(Conformance.mappingModel))]
        for (index, blob) in try Conformance.valueExpressionBlobs().enumerated() {
            seeds.append(("apple-valueexpression-\(index + 1)", blob))
        }
        for name in ["SampleModel.mom", "SampleModel2.mom", "SampleModel3.mom"] {
            seeds.append(("apple-\(name)", try Conformance.data(Conformance.momd.appendingPathComponent(name))))
        }
        // Apple's SampleModel3 with fetch requests, fetched, derived and composite properties and
        // configurations added (Fixtures/derived, Formats/compiled-model.md §2.2, §2.3).
        for name in ["SampleModel3+Templates.mom", "SampleModel3+Composite.mom"] {
            seeds.append(("derived-\(name)", try Conformance.data(Conformance.root.appendingPathComponent("derived/\(name)"))))
        }
        let missing = try keep(seeds)
        XCTAssertTrue(missing.isEmpty, "seeds missing from \(corpus.path): \(missing); run `bash Fuzz/make-corpus.sh`")
    }

    /// Every corpus input decodes or throws; the hand-made ones decode to what they were made as.
    func testEveryCorpusInputIsHandled() throws {
        let files = try FileManager.default.contentsOfDirectory(at: corpus, includingPropertiesForKeys: nil)
        XCTAssertGreaterThanOrEqual(files.count, Self.handMade().count)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            guard let archive = try? KeyedArchive(bytes: bytes) else { continue }
            let unarchiver = KeyedUnarchiver(archive: archive, objectBudget: 20_000)
            for index in 0..<archive.objectCount {
                if case .object(let object)? = try? archive.entry(at: ArchiveReference(index)) {
                    for key in object.keys {
                        _ = try? object.string(forKey: key)
                        _ = try? object.data(forKey: key)
                        _ = try? object.integer(forKey: key)
                        _ = try? object.references(forKey: key)
                    }
                }
                _ = try? unarchiver.decode(ArchiveReference(index))
            }
            for key in archive.topKeys {
                let root = try archive.rootReference(key)
                _ = (try? ArchivedExpressionDecoder(archive: archive).expression(at: root))?.description
                _ = (try? ArchivedExpressionDecoder(archive: archive).predicate(at: root))?.predicateFormat
            }
        }
        let predicate = try Data(contentsOf: corpus.appendingPathComponent("made-predicate"))
        XCTAssertEqual(
            try ArchivedExpressionDecoder.predicate(fromArchive: predicate).predicateFormat,
            "(age < 30 AND name ==[c] \"Ada\") OR NOT ANY tags BEGINSWITH[cd] \"x\"")
        let subquery = try Data(contentsOf: corpus.appendingPathComponent("made-subquery"))
        XCTAssertEqual(
            try ArchivedExpressionDecoder.expression(fromArchive: subquery).description,
            "TERNARY(SUBQUERY(books, $b, $b.pages > 300).@count > 0, \"reader\", {1, 2} UNION tags)")
    }

    // MARK: - Hand-made seeds

    static func handMade() -> [(String, Data)] {
        var seeds: [(String, Data)] = []

        var predicate = ArchiveBuilder()
        let young = predicate.comparison(predicate.keyPath("age"), 0, predicate.constant(number: 30))
        let named = predicate.comparison(predicate.keyPath("name"), 4, predicate.constant(string: "Ada"), options: 1)
        let tagged = predicate.comparison(predicate.keyPath("tags"), 8, predicate.constant(string: "x"), modifier: 2, options: 3)
        let and = predicate.compound(1, [young, named])
        let not = predicate.compound(0, [tagged])
        let or = predicate.compound(2, [and, not])
        seeds.append(("made-predicate", Data(predicate.build(top: ["root": or]))))

        var subquery = ArchiveBuilder()
        let long = subquery.comparison(subquery.keyPath("pages", operand: subquery.variable("b")), 2, subquery.constant(number: 300))
        let query = subquery.object(
            ["NSSubqueryExpression", "NSExpression", "NSObject"],
            [("NSExpression", .uid(subquery.keyPath("books"))), ("NSVariable", .uid(subquery.string("b"))),
             ("NSSubpredicate", .uid(long)), ("NSExpressionType", .int(13))])
        let count = subquery.keyPath("@count", operand: query)
        let any = subquery.comparison(count, 2, subquery.constant(number: 0))
        let union = subquery.object(
            ["NSSetExpression", "NSExpression", "NSObject"],
            [("NSExpressionType", .int(5)),
             ("NSLeftExpression", .uid(subquery.aggregate([subquery.constant(number: 1), subquery.constant(number: 2)]))),
             ("NSRightExpression", .uid(subquery.keyPath("tags")))])
        let ternary = subquery.object(
            ["NSTernaryExpression", "NSExpression", "NSObject"],
            [("NSPredicate", .uid(any)), ("NSTrueExpression", .uid(subquery.constant(string: "reader"))),
             ("NSFalseExpression", .uid(union)), ("NSExpressionType", .int(20))])
        seeds.append(("made-subquery", Data(subquery.build(top: ["root": ternary]))))

        var functions = ArchiveBuilder()
        let sum = functions.builtin("sum:", arguments: [functions.keyPath("pages"), functions.constant(number: 2)])
        let added = functions.builtin("add:to:", arguments: [sum, functions.constant(number: 1)])
        let request = functions.function(
            "fetchRequestForSourceEntityNamed:predicateString:", operand: functions.variable("manager"),
            arguments: [functions.constant(string: "Car"), functions.constant(string: "TRUEPREDICATE")])
        let fetch = functions.object(
            ["NSFetchRequestExpression", "NSExpression", "NSObject"],
            [("NSMOCExpression", .uid(functions.keyPath("sourceContext", operand: functions.variable("manager")))),
             ("NSCountOnlyFlag", .bool(false)), ("NSExpressionType", .int(50)), ("NSFRExpression", .uid(request))])
        seeds.append(("made-functions", Data(functions.build(top: ["root": added, "fetch": fetch]))))

        var values = ArchiveBuilder()
        let root = values.reserve()
        let date = values.object(["NSDate", "NSObject"], [("NS.time", .real(700_000_000))])
        let uuid = values.object(["NSUUID", "NSObject"], [("NS.uuidbytes", .data(Array(0..<16)))])
        let url = values.object(["NSURL", "NSObject"], [("NS.base", .uid(0)), ("NS.relative", .uid(values.string("https://example.com")))])
        let set = values.object(["NSMutableSet", "NSSet", "NSObject"], [("NS.objects", .uids([values.add(.int(1)), values.add(.real(2.5))]))])
        let data = values.object(["NSMutableData", "NSData", "NSObject"], [("NS.data", .data([1, 2, 3]))])
        let dictionary = values.dictionary(keys: [values.string("k")], values: [values.add(.bool(true))])
        let text = values.object(["NSMutableString", "NSString", "NSObject"], [("NS.string", .uid(values.string("é😀")))])
        var previous = values.string("leaf")
        for _ in 0..<6 { previous = values.array([previous, previous]) }
        let list = values.array([date, uuid, url, set, data, dictionary, text, previous, values.object(["NSNull", "NSObject"])], mutable: true)
        values.set(root, ["NSConstantValueExpression", "NSExpression", "NSObject"], [("NSConstantValue", .uid(list)), ("NSExpressionType", .int(0))])
        seeds.append(("made-values", Data(values.build(top: ["root": root]))))

        var cycle = ArchiveBuilder()
        let loop = cycle.reserve()
        cycle.set(loop, ["NSFunctionExpression", "NSExpression", "NSObject"],
                  [("NSOperand", .uid(loop)), ("NSSelectorName", .uid(cycle.string("f:"))), ("NSArguments", .uid(cycle.array([loop])))])
        seeds.append(("made-cycle", Data(cycle.build(top: ["root": loop]))))
        return seeds
    }
}
