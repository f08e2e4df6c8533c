extension Array {
    /// `count` empty slots (`nil`s): what a row or an object starts from.
    ///
    /// `Array(repeating: nil, count:)` copies its repeated value through the element type's
    /// value witnesses once per element (about 130 instructions a slot for `StoreValue?`); writing
    /// `nil` into fresh storage is a few stores.
    @inlinable
    package static func emptySlots<Wrapped>(_ count: Int) -> [Wrapped?] where Element == Wrapped? {
        guard count > 0 else { return [] }
        return [Wrapped?](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            for index in 0..<count { (base + index).initialize(to: nil) }
            initialized = count
        }
    }
}
