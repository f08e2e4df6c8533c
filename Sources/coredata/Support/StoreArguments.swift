import ArgumentParser

/// The store argument and `--json`, shared by the store commands.
struct StoreArguments: ParsableArguments {
    @Argument(help: "The store file: a binary store (its log is STORE-wal), an XML store or an Apple SQLite store.")
    var store: String

    @Flag(help: "Print machine-readable JSON instead of text.")
    var json = false
}
