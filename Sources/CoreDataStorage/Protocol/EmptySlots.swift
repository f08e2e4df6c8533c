extension Array {
    /// `count` empty slots (`nil`s): what a row or an object starts from.
    ///
    /// Built by `reserveCapacity` and appends, whose allocation is specialized in the caller. `Array(repeating:count:)` and
    /// `Array(unsafeUninitializedCapacity:initializingWith:)` allocate through the standard
    /// library's unspecialized entry point, which looks the storage class's generic metadata up
    /// on every call: about 360 of its 580 instructions for a `StoreValue?` row of five slots
    /// (`repeating:` also copies its value through the element type's value witnesses). This
    /// way takes about 290 (callgrind, Swift 6.3.1; BENCHMARKS.md, *Record encoding in one
    /// piece, and slot arrays without a metadata lookup*).
    @inlinable
    package static func emptySlots<Wrapped>(_ count: Int) -> [Wrapped?] where Element == Wrapped? {
        guard count > 0 else { return [] }
        var slots: [Wrapped?] = []
        slots.reserveCapacity(count)
        for _ in 0..<count { slots.append(nil) }
        return slots
    }
}
