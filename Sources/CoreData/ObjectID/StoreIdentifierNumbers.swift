import Synchronization

/// A number for each store identifier the process has seen, the same for equal identifiers.
///
/// A context's registry keys objects by (entity, primary key, store identifier), so that an ID
/// made by another coordinator of the same store finds the same object (as `isEqual(_:)` says
/// they are the same). Keys hold the identifier's number instead of the string: comparing and
/// copying a number costs nothing, and a fetched object need not keep an `NSManagedObjectID`
/// to be found. Numbers start at 1 (0 stands for "no store", a temporary ID).
///
/// Threading: any thread; one lock, taken when a store's identifier is set, never per object.
/// Complexity: one dictionary lookup. The table keeps every identifier seen, a few dozen bytes
/// each, for the life of the process.
enum StoreIdentifierNumbers {
    private static let table = Mutex<[String: UInt32]>([:])

    static func number(for identifier: String) -> UInt32 {
        table.withLock { numbers in
            if let number = numbers[identifier] { return number }
            // UInt32 runs out after four billion distinct stores in one process.
            let number = UInt32(numbers.count + 1)
            numbers[identifier] = number
            return number
        }
    }
}
