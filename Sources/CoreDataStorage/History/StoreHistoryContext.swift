import Foundation

/// Who makes a change, as a store records it in persistent history: the saving context's
/// author and name and the process. The object graph fills it in for every save and batch
/// request; a store that records no history ignores it.
public struct StoreHistoryContext: Sendable, Equatable {
    /// The context's `transactionAuthor`.
    public var author: String?
    /// The context's `name`.
    public var contextName: String?
    /// The process that saves.
    public var processID: Int32
    /// The process's bundle identifier; on Linux the executable's name.
    public var bundleID: String
    /// For each updated object, the properties the save changed. An updated object missing here
    /// is recorded with every property its row names.
    public var updatedProperties: [StoreObjectID: [String]]

    public init(
        author: String? = nil, contextName: String? = nil, processID: Int32 = StoreHistoryContext.currentProcessID,
        bundleID: String = StoreHistoryContext.currentBundleID, updatedProperties: [StoreObjectID: [String]] = [:]
    ) {
        self.author = author
        self.contextName = contextName
        self.processID = processID
        self.bundleID = bundleID
        self.updatedProperties = updatedProperties
    }

    /// This process's ID.
    public static var currentProcessID: Int32 { ProcessInfo.processInfo.processIdentifier }

    /// `Bundle.main.bundleIdentifier`, or the executable's name where there is no bundle (Linux).
    public static let currentBundleID: String = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
}
