#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a ``FaultInjectingFileSystem`` does at a chosen operation. Operations are counted from 1
/// in the order they happen: every write, sync, truncate, rename, remove, directory sync and file
/// creation is one operation; reads, sizes and existence checks are not (reads have their own
/// count, for ``failRead(code:at:persistent:)``).
package enum FaultPlan: Sendable, Equatable, CustomStringConvertible {
    /// Every operation succeeds.
    case none
    /// The process dies during operation `at`: the operation is in flight (a write or truncate
    /// reached the page cache, whole or in part, a rename or remove reached the folder), it throws,
    /// and every later call throws too, as nothing runs in a dead process.
    case crash(at: Int)
    /// Operation `at` fails with `code` (`EIO` or `ENOSPC`) and has no effect, except that a
    /// failed write with `ENOSPC` leaves its first whole sectors behind and a failed sync loses
    /// the file's unsynced writes (they stay readable but never become durable, as with Linux's
    /// writeback errors). Later operations succeed, or fail the same way when `persistent`.
    case fail(code: Int32, at: Int, persistent: Bool)
    /// Read number `at` (reads are counted on their own, from 1, so the numbers of the other
    /// operations stay as they are) fails with `code` and returns nothing, as a `pread` that
    /// meets a bad sector does. Later reads succeed, or fail the same way when `persistent`.
    case failRead(code: Int32, at: Int, persistent: Bool)

    package var description: String {
        switch self {
        case .none: return "no fault"
        case .crash(let at): return "crash at op \(at)"
        case .fail(let code, let at, let persistent): return "\(Self.name(of: code)) at op \(at)\(persistent ? " and after" : " once")"
        case .failRead(let code, let at, let persistent): return "\(Self.name(of: code)) at read \(at)\(persistent ? " and after" : " once")"
        }
    }

    package static func name(of code: Int32) -> String {
        switch code {
        case EIO: return "EIO"
        case ENOSPC: return "ENOSPC"
        default: return "errno \(code)"
        }
    }
}
