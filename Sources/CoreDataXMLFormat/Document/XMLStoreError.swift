/// Why the bytes of an XML store, or their meaning against a model, were refused: what is wrong
/// and on which line (`Formats/xml-store.md §12`).
public struct XMLStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line of the element at fault; 0 when the error concerns the whole file.
    public var line: Int
    /// What is wrong, in words, naming the element, value or id at fault.
    public var message: String

    /// Creates an error about `line` (0 for the whole file).
    public init(line: Int, _ message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { line > 0 ? "line \(line): \(message)" : message }
}
