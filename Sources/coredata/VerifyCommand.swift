import ArgumentParser
import CoreData
import CoreDataBinaryStore
import CoreDataSQLiteStore
import CoreDataXMLFormat

/// `coredata verify STORE`: the full integrity check, every damaged location listed.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every page, record, index entry and log frame of a store.",
        discussion: """
            A binary store: reads both files whole and lists every damaged location on standard output, one per \
            line ("damaged: LOCATION: PROBLEM"), then exits with status 1; an intact store exits \
            with 0. Works on stores too damaged to open. Takes a shared lock, so a writer cannot \
            change the store meanwhile, and writes nothing.

            A damaged last save in the log cannot be told from a save a crash cut short \
            (Formats/wal.md §7): verify notes it and the store opens without it.

            An XML store: reads the whole file with the store's reader, then maps every object \
            to a row as the store does, and lists every problem with its line. Malformed XML \
            stops the reader, so only the first such problem is listed. Without --model the \
            objects are checked against the model the file describes (entities the metadata's \
            version hashes list, values that parse as their written types, ids, references, \
            arities); with --model, against the app's model as the store checks them when it \
            opens, which also catches a misspelt property name. XML has no checksums: a changed \
            character inside a string value reads as a valid, different string.

            An Apple SQLite store (Core Data's NSSQLiteStoreType file): SQLite's PRAGMA \
            integrity_check, the bookkeeping tables (Z_PRIMARYKEY, Z_METADATA, Z_MODELCACHE) and \
            Z_METADATA's row, every row's Z_ENT naming an entity of its table, and each root \
            entity's Z_MAX at least the largest Z_PK of its table. Which columns are to-one \
            relationships only the model says: with --model, the tables must be the model's \
            (status 6 otherwise), every value is checked against its attribute's type and every \
            reference against the relationship's destination, and the store is opened read-only \
            with the model as an app would. A reference to a row that is gone (as a batch delete \
            leaves it; the store reads it as no destination) is a note, not damage. Reads in one \
            read transaction, so a concurrent save cannot fall between two checks.

            Example:
              coredata verify Library.store && echo intact
              coredata verify Library.xml --model Library.xcdatamodeld
              coredata verify Library.sqlite --model Library.xcdatamodeld
              coredata verify Library.store --json
            """
    )

    @OptionGroup var arguments: StoreArguments

    @Option(help: "An XML or Apple SQLite store only: check its objects against this model (.xcdatamodeld, .xcdatamodel or contents file).")
    var model: String?

    @Option(name: .customLong("model-version"), help: "The version of a .xcdatamodeld package to use (default: its current one).")
    var modelVersion: String?

    func validate() throws {
        if modelVersion != nil, model == nil { throw ValidationError("--model-version needs --model") }
    }

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            switch try StoreKind.detect(path: path) {
            case .xml: return try verifyXML(path)
            case .sqlite: return try verifySQLite(path)
            case .binary: break
            }
            if model != nil { throw CLIError(.notApplicable, "\(path) is a binary store: --model applies to XML stores only, and to Apple SQLite stores (a binary store's records are checked by their checksums)") }
            let report = try StoreAccess.withSharedLock(path, command: "verify") { BinaryStore.verify(path: path) }
            if arguments.json {
                Console.print(json(report, path: path).pretty)
            } else {
                for issue in report.issues { Console.print("damaged: \(issue.location): \(issue.problem)") }
                for note in report.notes { Console.print("note: \(note)") }
                if report.isIntact {
                    let objects = report.objectsByEntity.values.reduce(0, +)
                    let pages = report.pagesByKind.values.reduce(0, +)
                    let external = report.externalFiles > 0 ? ", \(report.externalFiles) external data files" : ""
                    Console.print("intact: \(objects) objects, \(pages) pages, \(report.logCommits) saves in the log\(external)")
                }
            }
            if !report.isIntact {
                throw CLIError(.damaged, "\(path) is damaged: \(report.issues.count) damaged location\(report.issues.count == 1 ? "" : "s"), the first at \(report.issues[0].location)")
            }
        }
    }

    /// An XML store: the whole file through the reader, then every object through the row
    /// mapping with the model the file describes (Formats/xml-store.md §12).
    private func verifyXML(_ path: String) throws(CLIError) {
        let loadedModel = try model.map { (modelPath: String) throws(CLIError) -> NSManagedObjectModel in
            try ModelLoading.load(modelPath, version: modelVersion)
        }
        let (problems, contents) = try XMLStoreAccess.problems(path, model: loadedModel, modelPath: model)
        let counts = contents.map { $0.objectIDsByEntity.mapValues(\.count) } ?? [:]
        let location: (XMLStoreError) -> String = { $0.line > 0 ? "line \($0.line)" : "file" }
        if arguments.json {
            Console.print(JSONValue.object([
                ("store", .string(path)),
                ("format", .string("xml")),
                ("intact", .bool(problems.isEmpty)),
                ("issues", .array(problems.map { .object([("location", .string(location($0))), ("problem", .string($0.message))]) })),
                ("notes", .array(contents == nil ? [.string(Self.stoppedNote)] : [])),
                ("objectsByEntity", .counts(counts)),
            ]).pretty)
        } else {
            for problem in problems { Console.print("damaged: \(location(problem)): \(problem.message)") }
            if contents == nil { Console.print("note: \(Self.stoppedNote)") }
            if problems.isEmpty {
                Console.print("intact: \(counts.values.reduce(0, +)) objects, XML store of \(contents?.fileBytes ?? 0) bytes")
            }
        }
        if let first = problems.first {
            throw CLIError(.damaged, "\(path) is damaged: \(problems.count) damaged location\(problems.count == 1 ? "" : "s"), the first at \(location(first))")
        }
    }

    /// An Apple SQLite store: SQLite's integrity check, the bookkeeping tables, every row's
    /// entity and the key counters; with --model every value and reference
    /// (Formats/apple-sqlite-store.md §3–§6).
    private func verifySQLite(_ path: String) throws(CLIError) {
        let loadedModel = try model.map { (modelPath: String) throws(CLIError) -> NSManagedObjectModel in
            try ModelLoading.load(modelPath, version: modelVersion)
        }
        let report = try SQLiteStoreAccess.verify(path, model: loadedModel, modelPath: model)
        let counts = report.objectsByEntity
        if arguments.json {
            Console.print(JSONValue.object([
                ("store", .string(path)),
                ("format", .string("sqlite")),
                ("intact", .bool(report.isIntact)),
                ("issues", .array(report.issues.map { .object([("location", .string($0.location)), ("problem", .string($0.problem))]) })),
                ("notes", .array(report.notes.map { .string($0) })),
                ("objectsByEntity", .counts(counts)),
            ]).pretty)
        } else {
            for issue in report.issues { Console.print("damaged: \(issue.location): \(issue.problem)") }
            for note in report.notes { Console.print("note: \(note)") }
            if report.isIntact {
                let bytes = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
                Console.print("intact: \(counts.values.reduce(0, +)) objects, Apple SQLite store of \(bytes) bytes\(loadedModel == nil ? "" : ", every value checked against the model")")
            }
        }
        if let first = report.issues.first {
            throw CLIError(.damaged, "\(path) is damaged: \(report.issues.count) damaged location\(report.issues.count == 1 ? "" : "s"), the first at \(first.location)")
        }
    }

    private static let stoppedNote = "the XML is malformed there, so nothing after it was read"

    private func json(_ report: BinaryStoreVerification, path: String) -> JSONValue {
        .object([
            ("store", .string(path)),
            ("intact", .bool(report.isIntact)),
            ("issues", .array(report.issues.map { .object([("location", .string($0.location)), ("problem", .string($0.problem))]) })),
            ("notes", .array(report.notes.map { .string($0) })),
            ("objectsByEntity", .counts(report.objectsByEntity)),
            ("pagesByKind", .counts(report.pagesByKind)),
            ("pageRecords", .integer(Int64(report.pageRecords))),
            ("logCommits", .integer(Int64(report.logCommits))),
            ("logFrames", .integer(Int64(report.logFrames))),
            ("externalFiles", .integer(Int64(report.externalFiles))),
            ("externalBytes", .integer(Int64(report.externalBytes))),
            ("orphanedExternalFiles", .array(report.orphanedExternalFiles.map { .string($0) })),
        ])
    }
}
