// libFuzzer's entry point for FuzzAppleSQLiteStore; the body is Fuzz/FuzzTargets/FuzzAppleSQLiteStore.swift, where
// `swift test` (CoreDataFuzzReplayTests) replays the seed corpus through it without libFuzzer.
import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzTargets.FuzzAppleSQLiteStore.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
