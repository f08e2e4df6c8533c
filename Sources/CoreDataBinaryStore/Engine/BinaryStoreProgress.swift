/// Reports how far a checkpoint or compaction got: `done` of `total` records copied.
///
/// Called on the thread that runs the operation, with saves paused: it must return quickly and
/// must not call into the store. Called at most once per 1,024 records and once at the end.
public typealias BinaryStoreProgress = (_ done: Int, _ total: Int) -> Void

/// Calls a ``BinaryStoreProgress`` every 1,024 steps and at the end.
struct ProgressCounter {
    static let interval = 1_024
    let total: Int
    let report: BinaryStoreProgress?
    private(set) var done = 0

    init(total: Int, report: BinaryStoreProgress?) {
        self.total = total
        self.report = report
    }

    mutating func step() {
        done += 1
        if done % Self.interval == 0 { report?(done, total) }
    }

    func finish() { report?(total, total) }
}
