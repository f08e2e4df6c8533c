// libFuzzer's entry point for FuzzBinaryRecord; the body is Fuzz/FuzzTargets/FuzzBinaryRecord.swift, where
// `swift test` (CoreDataFuzzReplayTests) replays the seed corpus through it without libFuzzer.
import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzTargets.FuzzBinaryRecord.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
