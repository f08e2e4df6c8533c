/// The class instance `value` holds, or `nil` when it holds a value of another kind.
///
/// For `isEqual(_:)` of managed objects and their IDs: a set of them compares elements at every
/// collision (a save builds several sets for its notifications), and `as? NSManagedObject`
/// from an `Any` walks the class hierarchy of the value's type, some 450 instructions, where
/// opening the existential and checking that its type is a class costs a tenth of that.
func classReference(_ value: Any) -> AnyObject? {
    func reference<T>(_ opened: T) -> AnyObject? {
        guard T.self is AnyObject.Type else { return nil }
        // T is a class type, so the value is one reference.
        return unsafeBitCast(opened, to: AnyObject.self)
    }
    return _openExistential(value, do: reference)
}
