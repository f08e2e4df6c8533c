/// Why a predicate or expression format string could not be parsed.
///
/// Thrown by ``NSPredicate/init(validatingFormat:argumentArray:)`` and
/// ``NSExpression/init(validatingFormat:argumentArray:)`` for strings that come from users or files.
/// ``NSPredicate/init(format:_:)`` treats the same condition as a programmer error, as Apple does,
/// and traps with ``description`` as its message.
///
/// Offsets count Unicode scalars from the start of ``formatString`` (for ASCII text, characters).
public struct NSPredicateSyntaxError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The format string that failed to parse.
    public var formatString: String
    /// Where the problem was found: Unicode scalars from the start of ``formatString``.
    public var offset: Int
    /// What was wrong, e.g. `expected ')', found end of input`.
    public var message: String

    /// Makes an error; the parser is the usual source.
    public init(formatString: String, offset: Int, message: String) {
        self.formatString = formatString
        self.offset = offset
        self.message = message
    }

    /// `Unable to parse the format string "<formatString>" at offset <offset>: <message>` —
    /// Apple's wording for the exception, with the position and the reason added.
    public var description: String {
        "Unable to parse the format string \"\(formatString)\" at offset \(offset): \(message)"
    }
}
