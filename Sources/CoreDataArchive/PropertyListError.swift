/// A binary property list that ``BinaryPropertyList`` rejected: what is wrong, and where.
///
/// The message names the object number (the index in the list's offset table) and the byte offset
/// in the input when the problem belongs to one; ``objectNumber`` and ``byteOffset`` carry the same
/// numbers for code. Formats/keyed-archive.md §2–§3 lists every check.
public struct PropertyListError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The whole message, starting with `binary property list:`.
    public let message: String
    /// The object the problem belongs to, when there is one.
    public let objectNumber: Int?
    /// The byte of the input where the problem is, when there is one.
    public let byteOffset: Int?

    /// An error saying `problem`, located at `object` and `byte` when given.
    public init(_ problem: String, object: Int? = nil, byte: Int? = nil) {
        objectNumber = object
        byteOffset = byte
        var location = ""
        switch (object, byte) {
        case let (object?, byte?): location = "object \(object) at byte \(byte): "
        case let (object?, nil): location = "object \(object): "
        case let (nil, byte?): location = "at byte \(byte): "
        case (nil, nil): break
        }
        message = "binary property list: " + location + problem
    }

    /// ``message``.
    public var description: String { message }
}
