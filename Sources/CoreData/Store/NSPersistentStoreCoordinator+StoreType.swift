import Foundation

/// Apple's other spellings of the coordinator's store-type API: the `StoreType`-typed Swift
/// overloads (iOS 15, macOS 12) and the Objective-C-era label of `registerStoreClass`. Each is
/// the string-typed method it names, unchanged; a custom type is
/// `NSPersistentStore.StoreType(rawValue: "MyStore")`.
extension NSPersistentStoreCoordinator {
    /// Registers a store class for a type name (Apple's Objective-C-era label); `nil` removes the
    /// registration.
    ///
    /// The same as ``registerStoreClass(_:type:)``: the class must subclass
    /// ``NSIncrementalStore`` or ``NSAtomicStore`` (anything else traps), registrations are
    /// process-wide, and a type must be registered before a store of it is added.
    /// Threading: safe from any thread.
    public class func registerStoreClass(_ storeClass: AnyClass?, forStoreType storeType: String) {
        registerStoreClass(storeClass, type: storeType)
    }

    /// Adds a store of a ``NSPersistentStore/StoreType`` (Apple's Swift spelling of
    /// ``addPersistentStore(ofType:configurationName:at:options:)``).
    ///
    /// - Parameters:
    ///   - storeType: `.binary`, `.xml`, `.inMemory`, `.sqlite` (see ``NSSQLiteStoreType``) or a
    ///     registered custom type.
    ///   - configuration: the model configuration whose entities the store holds; `nil` for all.
    ///   - storeURL: the store's file; ignored by the in-memory store.
    ///   - options: as for the string-typed method (migration, read-only, timeouts, …).
    /// - Returns: the added store.
    /// - Throws: the errors of ``addPersistentStore(ofType:configurationName:at:options:)``.
    @discardableResult
    public func addPersistentStore(
        type storeType: NSPersistentStore.StoreType, configuration: String? = nil, at storeURL: URL, options: [AnyHashable: Any]? = nil
    ) throws -> NSPersistentStore {
        try addPersistentStore(ofType: storeType.rawValue, configurationName: configuration, at: storeURL, options: options)
    }

    /// Removes the store at `url` from this coordinator if it was added, and deletes its files
    /// (Apple's Swift spelling of ``destroyPersistentStore(at:ofType:options:)``).
    ///
    /// - Throws: the errors of ``destroyPersistentStore(at:ofType:options:)`` (a binary store
    ///   another process still has open is not deleted).
    public func destroyPersistentStore(at url: URL, type storeType: NSPersistentStore.StoreType, options: [AnyHashable: Any]? = nil) throws {
        try destroyPersistentStore(at: url, ofType: storeType.rawValue, options: options)
    }

    /// Replaces the metadata of the store at `url` without adding it (Apple's Swift spelling of
    /// ``setMetadata(_:forPersistentStoreOfType:at:options:)``); the store's own keys are kept
    /// when `metadata` leaves them out.
    ///
    /// - Throws: the errors of ``setMetadata(_:forPersistentStoreOfType:at:options:)``.
    public class func setMetadata(_ metadata: [String: Any]?, type storeType: NSPersistentStore.StoreType, at url: URL, options: [AnyHashable: Any]? = nil) throws {
        try setMetadata(metadata, forPersistentStoreOfType: storeType.rawValue, at: url, options: options)
    }
}
