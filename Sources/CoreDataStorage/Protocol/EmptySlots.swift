extension Array {
    /// `count` empty slots (`nil`s): what a row or an object starts from.
    ///
    /// Optimized builds use `reserveCapacity` and appends, whose allocation is specialized in
    /// the caller. `Array(repeating:count:)` and
    /// `Array(unsafeUninitializedCapacity:initializingWith:)` allocate through the standard
    /// library's unspecialized entry point, which looks the storage class's generic metadata up
    /// on every call: about 360 of its 580 instructions for a `StoreValue?` row of five slots
    /// (`repeating:` also copies its value through the element type's value witnesses). This
    /// way takes about 290 (callgrind, Swift 6.3.1; BENCHMARKS.md, *Record encoding in one
    /// piece, and slot arrays without a metadata lookup*).
    ///
    /// Debug builds keep one initializing closure: unspecialized, each `append` is a generic call
    /// of its own, which made the crash suites 1.5 times slower.
    @inlinable
    package static func emptySlots<Wrapped>(_ count: Int) -> [Wrapped?] where Element == Wrapped? {
        guard count > 0 else { return [] }
        #if DEBUG
        return [Wrapped?](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            for index in 0..<count { (base + index).initialize(to: nil) }
            initialized = count
        }
        #else
        var slots: [Wrapped?] = []
        slots.reserveCapacity(count)
        for _ in 0..<count { slots.append(nil) }
        return slots
        #endif
    }
}
