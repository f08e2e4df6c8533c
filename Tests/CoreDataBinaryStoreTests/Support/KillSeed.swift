import Foundation

/// The seed of a process-kill suite's random kill timings. It is printed when the suite starts,
/// so that any run, a failing one included, can be replayed: `COREDATA_KILL_SEED=S` makes the
/// suite draw the same timings again. (Where the children are when the kills land still depends
/// on the machine's speed; the seed fixes the waits the suite chooses.)
enum KillSeed {
    static let variable = "COREDATA_KILL_SEED"

    /// `COREDATA_KILL_SEED` when it holds a number, else a new random seed; printed as `suite`'s.
    static func make(suite: String) -> UInt64 {
        let seed = ProcessInfo.processInfo.environment[variable].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("\(suite): seed \(seed) (\(variable)=\(seed) replays the kill timings)")
        return seed
    }
}
