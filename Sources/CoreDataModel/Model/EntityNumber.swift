import Synchronization

/// A process-wide number standing for one entity name: equal names get equal numbers.
///
/// ``StoreObjectID`` carries it instead of the name, so an ID is two machine words with no
/// reference count: copying, hashing and comparing one costs a few instructions, and a
/// ``StoreValue`` holding one fits in 24 bytes (a row's value slots are the bulk of a fetch's
/// memory).
///
/// Threading: any thread. Making a number from a name takes one lock and one dictionary lookup,
/// so hot paths make it once (a store per catalog entity, the object graph per entity
/// description) and reuse it; reading ``name`` takes no lock.
/// Memory: the table keeps every distinct name it was given, for the life of the process.
public struct EntityNumber: Hashable, Sendable, CustomStringConvertible {
    /// The number, dense from 0 in the order names were first seen in this process. It is not
    /// stable across processes: never write it to a file.
    public let rawValue: UInt32

    /// The number of `name`, giving it the next one when the process has not seen it before.
    public init(_ name: String) {
        rawValue = EntityNameTable.number(for: name)
    }

    /// The entity name this number stands for.
    public var name: String { EntityNameTable.name(of: rawValue) }

    /// The entity name.
    public var description: String { name }
}

/// The names behind entity numbers.
///
/// Names are read without a lock: a number exists only after its name was written under the
/// lock and the lock released, so whoever holds a number got it through that release (or
/// through a `Sendable` hand-over that orders after it) and sees the write. Storage is chunks
/// of doubling size that never move or shrink, so a reader never sees a buffer being replaced.
enum EntityNameTable {
    /// Chunk `c` holds `firstChunkSize << c` names: 27 chunks cover every `UInt32`.
    private static let firstChunkSize = 64
    private static let chunkCount = 27

    /// The numbers by name; its count is the next number.
    private static let lock = Mutex<[String: UInt32]>([:])

    /// The chunk directory, written only under `lock`, read without it (see above).
    nonisolated(unsafe) private static let chunks: UnsafeMutablePointer<UnsafeMutablePointer<String>?> = {
        let directory = UnsafeMutablePointer<UnsafeMutablePointer<String>?>.allocate(capacity: chunkCount)
        directory.initialize(repeating: nil, count: chunkCount)
        return directory
    }()

    static func number(for name: String) -> UInt32 {
        lock.withLock { numbers in
            if let number = numbers[name] { return number }
            let number = numbers.count
            // Only a program making billions of names gets here: memory runs out long before a
            // file could hold that many.
            precondition(number < Int(UInt32.max), "CoreData: more than \(UInt32.max) distinct entity names in one process")
            let (chunk, offset) = position(of: number)
            if offset == 0 {
                let storage = UnsafeMutablePointer<String>.allocate(capacity: firstChunkSize << chunk)
                chunks[chunk] = storage
            }
            // The chunk is never read past `count`, so only written slots are initialized.
            (chunks[chunk].unsafelyUnwrapped + offset).initialize(to: name)
            numbers[name] = UInt32(number)
            return UInt32(number)
        }
    }

    static func name(of number: UInt32) -> String {
        let (chunk, offset) = position(of: Int(number))
        assert(chunk < chunkCount && chunks[chunk] != nil, "CoreData: entity number \(number) was never handed out")
        return chunks[chunk].unsafelyUnwrapped[offset]
    }

    /// Chunk `c` starts at `firstChunkSize * (2^c - 1)`.
    private static func position(of number: Int) -> (chunk: Int, offset: Int) {
        let scaled = number / firstChunkSize + 1
        let chunk = Int.bitWidth - 1 - scaled.leadingZeroBitCount
        return (chunk, number - firstChunkSize * ((1 << chunk) - 1))
    }
}
