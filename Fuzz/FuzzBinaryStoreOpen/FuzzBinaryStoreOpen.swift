// libFuzzer's entry point for FuzzBinaryStoreOpen; the body is Fuzz/FuzzTargets/FuzzBinaryStoreOpen.swift,
// where `swift test` (CoreDataFuzzReplayTests) replays the seed corpus through it without libFuzzer.
//
// With COREDATA_FUZZ_MAKE_CORPUS=<folder> set, the binary instead writes the seed corpora of the
// binary targets into that folder and exits (Fuzz/make-corpus.sh): of all of them, or of those
// COREDATA_FUZZ_MAKE_CORPUS_TARGETS names (separated by spaces).
import Foundation
import FuzzTargets

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    if let folder = ProcessInfo.processInfo.environment["COREDATA_FUZZ_MAKE_CORPUS"] {
        let targets = ProcessInfo.processInfo.environment["COREDATA_FUZZ_MAKE_CORPUS_TARGETS"].map { Set($0.split(separator: " ").map(String.init)) }
        do {
            try CorpusMaker.make(root: folder, targets: targets)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("make corpus: \(error)\n".utf8))
            exit(1)
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzTargets.FuzzBinaryStoreOpen.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
