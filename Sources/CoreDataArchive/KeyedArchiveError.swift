/// A keyed archive that could not be read or decoded: what is wrong, and at which archive object.
///
/// Object numbers in messages are indices in the archive's `$objects` array (what
/// `plistlib`/`plutil` dumps show), not the property list's object numbers, except for
/// ``Kind/propertyList`` errors, which come from the property list layer.
public struct KeyedArchiveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem, for code that handles some differently.
    public enum Kind: Sendable, Equatable {
        /// The bytes are not a valid binary property list (``propertyListError`` says why).
        case propertyList
        /// A valid property list that is not an `NSKeyedArchiver` archive: `$archiver`, `$version`,
        /// `$top` or `$objects` missing or wrong, a UID past `$objects`.
        case notAnArchive
        /// An object is malformed: no `$class`, a field of the wrong kind, a bad element.
        case malformed
        /// An object of another class than the one expected where a type is expected.
        case wrongClass
        /// A class the decoder does not know (and no hook decoded it).
        case unknownClass
        /// An object that contains itself on the current decoding path.
        case referenceCycle
        /// Nesting deeper than the decoder's limit.
        case tooDeep
        /// More objects decoded than the decoder's budget allows.
        case budgetExceeded
        /// A caller's hook threw an error that is not a `KeyedArchiveError`.
        case hookFailed
    }

    /// The kind of problem.
    public let kind: Kind
    /// The whole message.
    public let message: String
    /// The `$objects` index the problem belongs to, when there is one.
    public let object: Int?
    /// The property list error behind a ``Kind/propertyList`` error.
    public let propertyListError: PropertyListError?

    /// An error of `kind` saying `message` about `object`.
    public init(_ kind: Kind, _ message: String, object: Int? = nil) {
        self.kind = kind
        self.message = message
        self.object = object
        self.propertyListError = nil
    }

    /// The archive's bytes are not a binary property list.
    public init(_ error: PropertyListError) {
        kind = .propertyList
        message = error.message
        object = nil
        propertyListError = error
    }

    /// ``message``.
    public var description: String { message }
}
