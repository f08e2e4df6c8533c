/// The constants of the XML store's layout (`Formats/xml-store.md`).
public enum XMLStoreLayout {
    /// The first line of every file we write (`Formats/xml-store.md §1, §2`).
    public static let declaration = #"<?xml version="1.0" standalone="yes"?>"#
    /// The document type line Apple writes; the DTD is never loaded (`§1, §2`).
    public static let doctype = #"<!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">"#
    /// The store version written in `<version>`: the value Apple's files carry (`§1, §3`).
    public static let storeVersion: Int64 = 134_481_920
    /// The prefix of every object's `id` (`§1, §5`).
    public static let idPrefix = "z"
    /// The largest object number a file may use in an `id`, `idrefs` or `<nextObjectID>`, so that
    /// handing out the numbers after it can never overflow (`§1, §3, §5`).
    public static let largestObjectNumber: Int64 = 1 << 62
    /// How deep `<dict>` and `<array>` may nest in the metadata property list (`§1, §4`): the
    /// reader, the writer and the comparisons recurse once per level, so a hostile file must not
    /// choose the depth.
    public static let maximumMetadataDepth = 64
    /// The suffix of the file a save wrote beside the store before renaming it over, up to
    /// November 2026 (`§1, §11`); leftovers of it are still removed.
    public static let pendingFileSuffix = ".new"
    /// What a save's file beside the store is named after: the store's path, this, then
    /// ``pendingFileRandomDigits`` random hex digits (`§1, §11`).
    public static let pendingFilePrefix = ".new-"
    /// How many random hex digits end the name of a save's file beside the store (`§1, §11`).
    public static let pendingFileRandomDigits = 16
    /// How long, by default, a save waits for another process's lock, in seconds (`§1, §11`).
    public static let defaultLockTimeout: Double = 10
    /// How many times a save locks again when the store's name moved to another file meanwhile (`§11`).
    public static let lockAttempts = 8
    /// §11: the first and the longest pause between non-blocking tries for the lock, in
    /// microseconds, and how long (seconds) those tries go on before a blocking wait.
    public static let lockRetryPauses: (first: UInt32, longest: UInt32) = (20, 1_000)
    public static let lockPollingTime: Double = 0.02
    /// How many bytes the engine hands the decoder at a time (`§1, §12`).
    public static let readChunkSize = 262_144
    /// How many bytes the encoder collects before handing them to the file layer (`§1, §12`).
    public static let writeChunkSize = 1_048_576
}
