/// A store that other handles (coordinators in this process, other processes) change while it
/// is open, and that can tell when they did: the coordinator uses it for
/// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
public protocol ExternalChangeObserving: AnyObject, Sendable {
    /// Calls `onChange` on a background thread after each save or checkpoint published in the
    /// store by anyone, this handle included, until ``stopObservingChanges()`` or close. Saves
    /// that come close together may be reported once.
    func startObservingChanges(_ onChange: @escaping @Sendable () -> Void)
    func stopObservingChanges()
}
