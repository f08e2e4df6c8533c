extension Set {
    /// A set of `elements` in a table with room for twice their number: for the sets of objects
    /// and IDs that a save's and a change's notifications hold, one element per changed object.
    ///
    /// `Set(_:)` sizes its table to the count. Swift's sets probe linearly, so filling that
    /// table passes about 0.8 occupied buckets per insert (measured: 0.77), and each compares two
    /// objects or IDs through `isEqual(_:)` from `Any`, some 300 instructions. With twice the room
    /// that falls to about 0.2, for 8 to 16 bytes more per element while the notification lives.
    ///
    /// Complexity: O(n).
    init<C: Collection>(sparselyFrom elements: C) where C.Element == Element {
        self.init(minimumCapacity: elements.count * 2)
        for element in elements { insert(element) }
    }
}
