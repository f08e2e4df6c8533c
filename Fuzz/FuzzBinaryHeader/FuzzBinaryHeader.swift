// libFuzzer's entry point for FuzzBinaryHeader; the body is Fuzz/FuzzTargets/FuzzBinaryHeader.swift, where
// `swift test` (CoreDataFuzzReplayTests) replays the seed corpus through it without libFuzzer.
import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzTargets.FuzzBinaryHeader.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
