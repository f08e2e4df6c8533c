import ArgumentParser
import CoreDataBinaryStore
import CoreDataStorage

/// A failure `coredata` reports as one line on standard error and an ``ExitStatus``.
struct CLIError: Error, CustomStringConvertible {
    var status: ExitStatus
    var message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    var description: String { message }

    /// Another process holds the lock of the store at `path`.
    static func locked(_ path: String) -> CLIError {
        CLIError(.locked, "\(path) is locked by another process that has it open; try again when it is closed")
    }

    /// The failure of a store operation on `path`.
    static func store(_ error: StoreError, path: String) -> CLIError {
        if error.isLockConflict { return locked(path) }
        switch error {
        case .corrupt(let detail):
            return CLIError(.damaged, "\(path) is damaged: \(detail.hasPrefix(path + ": ") ? String(detail.dropFirst(path.count + 2)) : detail)")
        case .io(let detail):
            return CLIError(.unreadable, "\(path) cannot be read: \(detail)")
        default:
            return CLIError(.internalError, "\(path): \(error)")
        }
    }
}

/// Runs a command's body, turning every failure into one line on standard error and the exit
/// status of its kind: never a crash trace for bad input.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as CLIError {
        Console.error(error.message)
        throw error.status.code
    } catch let error as ExitCode {
        throw error
    } catch let error as StoreError {
        Console.error("\(error)")
        throw ExitStatus.internalError.code
    } catch {
        Console.error("unexpected error: \(error)")
        throw ExitStatus.internalError.code
    }
}
