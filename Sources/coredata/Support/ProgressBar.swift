import Foundation

/// A progress bar on standard error, drawn only when it is a terminal, so logs and pipes get
/// only the final summary.
final class ProgressBar {
    private let label: String
    private let enabled: Bool
    private var drawn = false
    private static let width = 30

    init(label: String, enabled: Bool = Console.errorIsTerminal) {
        self.label = label
        self.enabled = enabled
    }

    /// Redraws the bar at `done` of `total`.
    func update(done: Int, total: Int) {
        guard enabled else { return }
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let filled = Int(fraction * Double(Self.width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: Self.width - filled)
        Console.writeError("\r\(label) [\(bar)] \(Int(fraction * 100))% (\(done)/\(total) records)")
        drawn = true
    }

    /// Redraws the bar at a fraction (0…1) of work that has no record count.
    func update(fraction: Double) {
        guard enabled else { return }
        let clamped = max(0, min(1, fraction))
        let filled = Int(clamped * Double(Self.width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: Self.width - filled)
        Console.writeError("\r\(label) [\(bar)] \(Int(clamped * 100))%")
        drawn = true
    }

    /// Ends the bar's line, when one was drawn.
    func finish() {
        if drawn { Console.writeError("\n") }
        drawn = false
    }
}

/// Draws a `Progress`'s fraction on a ``ProgressBar`` from a thread of its own while the
/// caller's thread does the work (a migration reports into the `Progress` current on that thread).
final class ProgressWatcher: @unchecked Sendable {
    private let progress: Progress
    private let bar: ProgressBar
    private let lock = NSLock()
    private var running = true
    private let finished = DispatchSemaphore(value: 0)

    /// Starts drawing; call ``stop()`` when the work is done.
    init(_ progress: Progress, label: String) {
        self.progress = progress
        bar = ProgressBar(label: label)
        Thread { [self] in
            while lock.withLock({ running }) {
                lock.withLock { bar.update(fraction: progress.fractionCompleted) }
                Thread.sleep(forTimeInterval: 0.1)
            }
            finished.signal()
        }.start()
    }

    /// Draws the last state, ends the bar's line and waits for the drawing thread.
    func stop() {
        lock.withLock { running = false }
        finished.wait()
        bar.update(fraction: progress.fractionCompleted)
        bar.finish()
    }
}
