import ArgumentParser
import CoreData

/// `coredata`: looks inside Core Data model and store files without writing code.
@main
struct CoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata",
        abstract: "Inspect Core Data for Linux model and store files.",
        discussion: """
            Loads Xcode model files (.xcdatamodeld, .xcdatamodel) and, as the store formats land, \
            binary and XML store files, using the same decoders the library uses.
            """,
        version: CoreDataLinuxVersion,
        subcommands: [ModelCommand.self]
    )
}
