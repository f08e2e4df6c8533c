/// The constants of the write-ahead log, each defined once here (Formats/wal.md §1).
public enum LogLayout {
    /// §2: the first 8 bytes of every log.
    public static let magic: [UInt8] = Array("CDBSWAL1".utf8)
    /// §2: the log format version.
    public static let formatVersion: UInt32 = 1
    /// §2: the log header's size.
    public static let headerSize = 64
    /// §3: where the first frame starts.
    public static let firstFrameOffset = 64
    /// §3: the frame header's size.
    public static let frameHeaderSize = 32
    /// §3: the checksum after each frame's payload.
    public static let frameTrailerSize = 8
    /// §3: the frame magic (`CDFR`).
    public static let frameMagic: UInt32 = 0x5246_4443
    /// §3: flag bit of a save's last frame.
    public static let commitFlag: UInt8 = 1
    /// §3: a frame's payload stays under this unless one entry is larger.
    public static let maximumFramePayload = 1 << 20
    /// §4: the largest entry body accepted.
    public static let maximumEntrySize = 1 << 30
    /// §4: kind, length and checksum before each entry body.
    public static let entryHeaderSize = 9
    /// §6: a background checkpoint starts when the log grows past this.
    public static let defaultCheckpointThreshold = 64 << 20
    /// §5: small group writes zero-fill the log up to the next multiple of this, so the syncs
    /// of the saves after them overwrite allocated bytes instead of growing the file.
    public static let preallocationStep = 1 << 20
    /// §9: a writer that shares the store reserves at least this many primary keys at a time.
    public static let keyReservation: Int64 = 4_096
    /// §9: the first and the longest pause between non-blocking tries for the write lock, in
    /// microseconds, and how long (seconds) those tries go on before a blocking wait.
    public static let lockRetryPauses: (first: UInt32, longest: UInt32) = (20, 1_000)
    public static let lockPollingTime: Double = 0.02
    /// §9: how long, by default, a writer waits for the write lock, in seconds.
    public static let defaultLockTimeout: Double = 10
}
