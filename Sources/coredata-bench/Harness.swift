import Foundation

/// Wall-clock time of one closure, in seconds.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Peak resident memory of this process, reset before each workload so each reports its own.
enum PeakMemory {
    /// Resets the kernel's high-water mark (`VmHWM`); Linux ≥ 4.0.
    static func reset() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// Returns freed heap memory to the system (glibc keeps it otherwise), so that the resident
    /// size is what is live and a following ``reset()`` measures one workload's own peak.
    static func trim() { _ = glibcMallocTrim(0) }

    /// `VmRSS` in bytes now, 0 where `/proc` is missing.
    static func resident() -> Int { field("VmRSS:") }

    /// `VmHWM` in bytes, 0 where `/proc` is missing.
    static func read() -> Int { field("VmHWM:") }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.split(separator: " ").dropFirst().first ?? "0"
            return (Int(digits) ?? 0) * 1024
        }
        return 0
    }
}

/// A scratch folder for one side of one repetition, removed afterwards.
struct Scratch {
    let path: String

    init(_ label: String) {
        path = NSTemporaryDirectory() + "coredata-bench-\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Bytes of the files in the folder whose names start with `prefix`.
    func size(prefix: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { $0.hasPrefix(prefix) }.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: file(name))
            return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
    }
}

/// Progress on standard error, redrawn in place on a terminal.
struct ProgressLine {
    let total: Int
    private(set) var done = 0
    private let isTerminal = isatty(STDERR_FILENO) != 0

    init(total: Int) { self.total = total }

    mutating func step(_ label: String) {
        done += 1
        let width = 24
        let filled = total > 0 ? width * done / total : width
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let line = "[\(bar)] \(done)/\(total) \(label)"
        if isTerminal {
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        } else {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

/// glibc's `malloc_trim` (declared in `malloc.h`, which the Glibc module does not export).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
