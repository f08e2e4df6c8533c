import CoreDataPageCodec

/// What survives on disk when the machine stops, given what the dead process had written and
/// synced (``FaultInjectingFileSystem/powerLoss(_:)``). Whole 512-byte sectors are atomic;
/// nothing else is.
package enum PowerLossPolicy: Sendable, Hashable, CustomStringConvertible {
    /// Only the process died: the kernel still writes back everything it was given, and every
    /// create, rename and remove stands.
    case processCrash
    /// Only what was synced: file contents as of their last sync, folder entries as of the
    /// folder's last sync.
    case dropUnsynced
    /// The unsynced writes of each file reach the disk in order, but the last one is cut at a
    /// sector boundary inside it (which one, `seed` picks); a write within one sector is lost whole.
    /// Folder entries as of the folder's last sync.
    case tearLastWrite(seed: UInt64)
    /// The file sizes were journaled but the data was not: synced contents, with every byte past
    /// the synced end read as zero (ext4 `data=writeback`, XFS). Folder entries as of the last sync.
    case zeroFillExtensions
    /// A random subset of the unsynced sectors (and truncates), applied in a random order, and a
    /// random prefix of the unsynced folder changes (`seed` picks).
    case randomSubset(seed: UInt64)
    /// Like ``randomSubset(seed:)``, but each unsynced sector piece ends up old, new, or holding
    /// random bytes, a third each (`seed` picks): the drive wrote garbage where the power failed.
    /// Only the bytes the unsynced write covered change; the rest of its sector keeps what it
    /// held (powersafe overwrite, which SQLite also assumes).
    case garbageSectors(seed: UInt64)

    package var description: String {
        switch self {
        case .processCrash: return "process crash"
        case .dropUnsynced: return "drop unsynced"
        case .tearLastWrite(let seed): return "tear last write (seed \(seed))"
        case .zeroFillExtensions: return "zero-fill extensions"
        case .randomSubset(let seed): return "random subset (seed \(seed))"
        case .garbageSectors(let seed): return "garbage sectors (seed \(seed))"
        }
    }
}

/// The files on a disk after a crash, by path.
package struct DiskImage: Sendable, Equatable {
    package var files: [String: [UInt8]] = [:]
    /// Folders made by the store (its external-data folder), which may be empty.
    package var directories: Set<String> = []

    package init(files: [String: [UInt8]] = [:], directories: Set<String> = []) {
        self.files = files
        self.directories = directories
    }

    /// A hash of every path and byte, to tell images apart cheaply.
    package var fingerprint: UInt64 {
        var hash: UInt64 = 0
        for path in files.keys.sorted() {
            hash = PageChecksum.xxh3(Array(path.utf8), seed: hash)
            hash = PageChecksum.xxh3(files[path] ?? [], seed: hash)
        }
        for directory in directories.sorted() { hash = PageChecksum.xxh3(Array(directory.utf8), seed: hash) }
        return hash
    }
}

/// SplitMix64: a small seeded generator, so every scenario is reproducible from its seed.
package struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The seeds of a crash point's seeded power-loss policies: fixed per operation number, so a
/// failure printed as "crash at op N, garbage sectors (seed S)" replays exactly.
package enum CrashSeeds {
    package static func seeds(for operation: Int, count: Int) -> [UInt64] {
        let base = UInt64(operation)
        return (0..<UInt64(count)).map { index in index == 0 ? base : base &* (7_919 &+ index &* 96_769) &+ index }
    }
}
