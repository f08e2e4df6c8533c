import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard output and error for the commands.
enum Console {
    /// Writes one line to standard output.
    static func print(_ line: String) {
        Swift.print(line)
    }

    /// Writes `coredata: MESSAGE` to standard error as exactly one line.
    static func error(_ message: String) {
        let line = message.split(whereSeparator: \.isNewline).joined(separator: "; ")
        writeError("coredata: \(line)\n")
    }

    /// Writes raw text to standard error (the progress bar).
    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Whether standard error is a terminal (the progress bar draws only there).
    static var errorIsTerminal: Bool { isatty(2) == 1 }
}
