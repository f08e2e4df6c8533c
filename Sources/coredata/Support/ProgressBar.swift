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

    /// Ends the bar's line, when one was drawn.
    func finish() {
        if drawn { Console.writeError("\n") }
        drawn = false
    }
}
