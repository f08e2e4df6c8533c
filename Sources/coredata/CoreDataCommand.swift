import ArgumentParser
import CoreData

/// `coredata`: looks inside Core Data model and store files without writing code.
@main
struct CoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata",
        abstract: "Inspect Core Data for Linux model and store files.",
        discussion: """
            Reads binary stores (and their STORE-wal logs), XML stores and Apple's Core Data SQLite \
            stores with the same decoders the library uses, so it works without the app's model. Commands that only read open \
            the store read-only and never change a byte of it; checkpoint and compact take the \
            store's exclusive lock. info, verify and dump read every kind; log, pages, checkpoint \
            and compact apply to binary stores only (an XML store has no log or pages: it is \
            rewritten whole on every save; an SQLite store keeps SQLite's files; exit status 7). convert copies a store to the other \
            type through migratePersistentStore.

            Example session:
              coredata info Library.store
              coredata verify Library.store
              coredata dump Library.store --entity Book --where 'pages > 300'
              coredata log Library.store --json
              coredata convert Library.store Library.xml --to xml --model Library.xcdatamodeld
              coredata verify Library.xml

            Every failure prints one line, "coredata: PROBLEM", on standard error.

            \(ExitStatus.table)
            """,
        version: CoreDataLinuxVersion,
        subcommands: [
            InfoCommand.self, VerifyCommand.self, DumpCommand.self, LogCommand.self, PagesCommand.self,
            CheckpointCommand.self, CompactCommand.self, ConvertCommand.self, MigrateCommand.self, ModelCommand.self,
            HistoryCommand.self,
        ]
    )
}
