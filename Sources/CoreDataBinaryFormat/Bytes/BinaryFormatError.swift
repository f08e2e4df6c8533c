/// Why bytes of a binary store or its log could not be decoded: where, and what was wrong there.
///
/// Decoders throw it for any damage (a wrong magic, a length past the end, a checksum mismatch,
/// an unknown tag); they never trap on bytes from a file.
public struct BinaryFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the damage is, e.g. `data file offset 69632 (data page), slot 3`.
    public var location: String
    /// What is wrong there.
    public var problem: String

    public init(_ location: String, _ problem: String) {
        self.location = location
        self.problem = problem
    }

    /// The same error with `context` prepended to its location.
    public func within(_ context: String) -> BinaryFormatError {
        BinaryFormatError(location.isEmpty ? context : "\(context), \(location)", problem)
    }

    public var description: String { location.isEmpty ? problem : "\(location): \(problem)" }
}
