import CoreDataBinaryFormat
import Foundation

/// A closed store file extended by hand as a checkpoint would extend it (Formats/binary-store.md
/// §3, §9): pages appended after its data end, then a root one generation newer that names them,
/// written into the slot the current root is not in. Tests use it to put pages on disk that
/// today's writer would not write.
struct AppendedCheckpoint {
    private var bytes: [UInt8]
    private let slot: Int
    /// The new root; its data end is set when it is written.
    var root: RootSlot

    /// Reads the file at `path`, whose current root is `root` in slot `slot`.
    ///
    /// - Throws: when the file cannot be read, or it does not end at the root's data end.
    init(path: String, root: RootSlot, slot: Int) throws {
        bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard UInt64(bytes.count) == root.dataEnd else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSDebugDescriptionErrorKey: "\(path) holds \(bytes.count) bytes, not its root's data end \(root.dataEnd)"])
        }
        self.slot = slot
        self.root = root
        self.root.generation = root.generation + 1
    }

    /// Appends a page of `kind` holding `payload`; returns its offset.
    mutating func append(_ kind: PageKind, _ payload: [UInt8]) -> UInt64 {
        let offset = UInt64(bytes.count)
        bytes += PageCodec.encode(kind: kind, payload: payload, generation: root.generation)
        return offset
    }

    /// Writes the pages and the new root to `path`.
    mutating func write(to path: String) throws {
        root.dataEnd = UInt64(bytes.count)
        let slotOffset = BinaryStoreLayout.rootSlotOffsets[1 - slot]
        bytes.replaceSubrange(slotOffset..<(slotOffset + BinaryStoreLayout.rootSlotSize), with: root.encoded())
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
