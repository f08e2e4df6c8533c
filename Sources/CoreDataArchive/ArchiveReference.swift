/// A reference to one entry of a keyed archive's `$objects` array: what a keyed-archiver UID holds.
///
/// Index 0 is `$null` by convention; ``KeyedArchive`` validates every UID it holds against the
/// length of `$objects` when it opens, so a reference taken from an archive is always in range
/// for that archive.
public struct ArchiveReference: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The index in `$objects`.
    public let index: Int

    /// A reference to `$objects[index]`. References built by hand are checked when used.
    public init(_ index: Int) {
        self.index = index
    }

    /// Whether this is UID 0, `$null`.
    public var isNull: Bool { index == 0 }

    /// `object N`, as messages name archive objects.
    public var description: String { "object \(index)" }

    /// Orders by index.
    public static func < (lhs: ArchiveReference, rhs: ArchiveReference) -> Bool { lhs.index < rhs.index }
}
