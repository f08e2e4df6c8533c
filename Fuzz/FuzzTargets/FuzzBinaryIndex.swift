// Fuzz target: the binary store's object-ID index (Formats/binary-store.md §7).
//
// The input is a program. Its first part drives the in-memory `ObjectIndex` with set, remove,
// compact and lookup operations and checks every answer against a plain dictionary. The live
// entries are then written as index pages and an index directory into a data file on an
// in-memory file system, the rest of the input flips bytes of those payloads (before the page
// envelope, so checksums hold and the damage reaches the index decoder), and `loadIndex` reads
// them back: with no flips it must return exactly the entries written; with flips it must
// throw or return entries that satisfy the format's rules. Any crash, hang or sanitizer report
// is a bug.
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataTestModel
import FuzzBinarySupport

/// The body of the `FuzzBinaryIndex` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzBinaryIndex {
    /// Reads the input front to back; past the end every read is 0.
    private struct Program {
        let bytes: [UInt8]
        var position = 0
        var isAtEnd: Bool { position >= bytes.count }
        mutating func byte() -> UInt8 {
            defer { position += 1 }
            return position < bytes.count ? bytes[position] : 0
        }
        mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }
    }

    private struct Key: Hashable { var entityID: Int; var key: Int64 }

    /// A location the loader accepts: a slot of a page at or after the first page and before `dataEnd`.
    private static func location(_ seed: UInt16, dataEnd: UInt64) -> UInt64 {
        let first = UInt64(BinaryStoreLayout.firstPageOffset)
        let pageOffset = first + UInt64(seed) % max(1, dataEnd - first)
        return RecordLocation.page(offset: pageOffset, slot: Int(seed & 0x3F)).raw
    }

    /// Runs `bytes` as an index program: operations, pages written, bytes flipped, index loaded.
    ///
    /// Traps (`precondition`) when the index disagrees with the reference dictionary, an intact
    /// index does not load exactly, or a damaged one loads breaking the format's rules.
    public static func run(_ bytes: [UInt8]) {
        var program = Program(bytes: bytes)
        let entityCount = BinaryTestModel.catalog.entities.count
        // Locations point into the data pages the file is pretended to have before the index.
        let dataEnd = UInt64(BinaryStoreLayout.firstPageOffset) + 1 << 16

        // 1. Operations against the reference.
        var index = ObjectIndex()
        var reference: [Key: UInt64] = [:]
        let operations = Int(program.byte())
        for _ in 0..<operations {
            let op = program.byte()
            let entityID = Int(program.byte()) % entityCount
            let key = Int64(program.byte() % 96) + 1
            let target = Key(entityID: entityID, key: key)
            switch op % 4 {
            case 0:
                let value = location(program.u16(), dataEnd: dataEnd)
                index.set(entityID: entityID, key: key, location: value)
                reference[target] = value
            case 1:
                index.remove(entityID: entityID, key: key)
                reference[target] = nil
            case 2:
                index.compact()
            default:
                precondition(index.location(entityID: entityID, key: key) == reference[target], "lookup of \(entityID)/\(key) disagrees")
            }
        }
        precondition(index.liveCount == reference.count, "index has \(index.liveCount) live entries, reference \(reference.count)")
        var entries: [IndexEntry] = []
        index.forEachLiveEntry { entityID, key, location in
            precondition(reference[Key(entityID: entityID, key: key)] == location, "entry \(entityID)/\(key) disagrees")
            entries.append(IndexEntry(entityID: UInt32(entityID), primaryKey: key, location: location))
        }
        precondition(entries.count == reference.count, "forEachLiveEntry visited \(entries.count) of \(reference.count)")

        // 2. Pages of `perPage` entries, then the directory, as a checkpoint writes them.
        let perPage = Int(program.byte() % 16) + 1
        var payloads: [[UInt8]] = stride(from: 0, to: entries.count, by: perPage).map {
            IndexPageCodec.encodePage(entries[$0..<min($0 + perPage, entries.count)])
        }
        for page in payloads {
            let decoded = try? IndexPageCodec.decodePage(page, pageOffset: 0)
            precondition(decoded.map { IndexPageCodec.encodePage($0[...]) } == page, "an index page does not round-trip")
        }
        var flips = 0
        while !program.isAtEnd, !payloads.isEmpty {
            let page = Int(program.byte()) % payloads.count
            let at = Int(program.u16()) % max(1, payloads[page].count)
            let mask = program.byte()
            guard !payloads[page].isEmpty, mask != 0 else { continue }
            payloads[page][at] ^= mask
            flips += 1
        }
        var file: [UInt8] = Array(repeating: 0, count: Int(dataEnd))
        var pageOffsets: [UInt64] = []
        for payload in payloads {
            pageOffsets.append(UInt64(file.count))
            file += PageCodec.encode(kind: .index, payload: payload, generation: 1)
        }
        let directoryOffset = UInt64(file.count)
        if !payloads.isEmpty {
            file += PageCodec.encode(kind: .indexDirectory, payload: IndexPageCodec.encodeDirectory(
                pageOffsets: pageOffsets, totalEntries: UInt64(entries.count)), generation: 1)
        }
        let root = RootSlot(
            generation: 1, dataEnd: UInt64(file.count), indexDirectoryOffset: payloads.isEmpty ? 0 : directoryOffset,
            catalogOffset: 0, metadataOffset: 0, logSalt: 0, objectCount: UInt64(entries.count))
        let files = MemoryFileSystem(files: ["index.store": file])
        guard let handle = try? files.open("index.store", create: false, readOnly: true) else {
            preconditionFailure("the in-memory data file does not open")
        }

        // 3. Load it back.
        do {
            let loaded = try BinaryStore.loadIndex(handle, root: root, catalog: BinaryTestModel.catalog)
            var seen: [IndexEntry] = []
            loaded.forEachLiveEntry { seen.append(IndexEntry(entityID: UInt32($0), primaryKey: $1, location: $2)) }
            if flips == 0 {
                precondition(seen == entries, "loadIndex returned \(seen.count) entries, \(entries.count) were written")
            } else {
                precondition(seen.count == entries.count, "a damaged index loaded with \(seen.count) entries, the root says \(entries.count)")
                for (previous, next) in zip(seen, seen.dropFirst()) {
                    precondition((previous.entityID, previous.primaryKey) < (next.entityID, next.primaryKey), "loaded entries out of order")
                }
            }
        } catch {
            precondition(flips > 0, "an intact index failed to load: \(error)")
        }
    }
}
