import Foundation

// Apple's NSArray conveniences with this module's predicate and sort descriptor classes
// (Foundation on Linux declares them only for its own classes).

extension NSArray {
    /// The elements that satisfy `predicate`, in order.
    public func filtered(using predicate: NSPredicate) -> [Any] {
        filter { predicate.evaluate(with: $0) }
    }

    /// The elements ordered by `sortDescriptors` (stable).
    public func sortedArray(using sortDescriptors: [NSSortDescriptor]) -> [Any] {
        NSSortDescriptor.sorted(Array(self), using: sortDescriptors)
    }
}
