import ArgumentParser
import CoreDataBinaryStore

/// `coredata verify STORE`: the full integrity check, every damaged location listed.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every page, record, index entry and log frame of a store.",
        discussion: """
            Reads both files whole and lists every damaged location on standard output, one per \
            line ("damaged: LOCATION: PROBLEM"), then exits with status 1; an intact store exits \
            with 0. Works on stores too damaged to open. Takes a shared lock, so a writer cannot \
            change the store meanwhile, and writes nothing.

            A damaged last save in the log cannot be told from a save a crash cut short \
            (Formats/wal.md §7): verify notes it and the store opens without it.

            Example:
              coredata verify Library.store && echo intact
              coredata verify Library.store --json
            """
    )

    @OptionGroup var arguments: StoreArguments

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            let report = try StoreAccess.withSharedLock(path, command: "verify") { BinaryStore.verify(path: path) }
            if arguments.json {
                Console.print(json(report, path: path).pretty)
            } else {
                for issue in report.issues { Console.print("damaged: \(issue.location): \(issue.problem)") }
                for note in report.notes { Console.print("note: \(note)") }
                if report.isIntact {
                    let objects = report.objectsByEntity.values.reduce(0, +)
                    let pages = report.pagesByKind.values.reduce(0, +)
                    Console.print("intact: \(objects) objects, \(pages) pages, \(report.logCommits) saves in the log")
                }
            }
            if !report.isIntact {
                throw CLIError(.damaged, "\(path) is damaged: \(report.issues.count) damaged location\(report.issues.count == 1 ? "" : "s"), the first at \(report.issues[0].location)")
            }
        }
    }

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
        ])
    }
}
