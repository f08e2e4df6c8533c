import ArgumentParser
import CoreData

/// `coredata`: looks inside Core Data model and store files without writing code.
@main
struct CoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata",
        abstract: "Inspect Core Data for Linux model and store files.",
        discussion: """
            Reads binary stores (and their STORE-wal logs) with the same decoders the library \
            uses, so it works without the app's model. Commands that only read open the store \
            read-only and never change a byte of it; checkpoint and compact take the store's \
            exclusive lock. XML stores are recognised but not read yet (exit status 7).

            Example session:
              coredata info Library.store
              coredata verify Library.store
              coredata dump Library.store --entity Book --where 'pages > 300'
              coredata log Library.store --json

            Every failure prints one line, "coredata: PROBLEM", on standard error.

            \(ExitStatus.table)
            """,
        version: CoreDataLinuxVersion,
        subcommands: [
            InfoCommand.self, VerifyCommand.self, DumpCommand.self, LogCommand.self, PagesCommand.self,
            CheckpointCommand.self, CompactCommand.self, ModelCommand.self,
        ]
    )
}
