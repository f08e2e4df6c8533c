import CoreDataModel
import Foundation

/// A model, a coordinator, its stores and a main-queue context, set up in one place.
///
/// Matches Apple's `NSPersistentContainer`. `init(name:)` looks for `name.xcdatamodeld` (or a
/// copy named `name.momd`) in the main bundle, then among the resources of every loaded bundle
/// (SwiftPM's `Bundle.module` included), then next to the executable.
open class NSPersistentContainer: NSObject, @unchecked Sendable {
    /// The store type new descriptions get: the binary store (`Formats/binary-store.md`). Apple's
    /// default is SQLite; ``NSSQLiteStoreType`` opens the binary store here too.
    public static let defaultStoreType = NSBinaryStoreType

    /// The container's name; the default store file is `<name>.store` in ``defaultDirectoryURL()``.
    public let name: String
    /// The container's model.
    public let managedObjectModel: NSManagedObjectModel
    /// The container's coordinator.
    public let persistentStoreCoordinator: NSPersistentStoreCoordinator
    /// The stores `loadPersistentStores` adds.
    public var persistentStoreDescriptions: [NSPersistentStoreDescription]

    private let lock = NSLock()
    private var mainContext: NSManagedObjectContext?

    /// Creates a container whose model is the `name` model found in the app's bundles.
    ///
    /// A missing or broken model is a programmer error here, as on Apple platforms (where the
    /// container logs and fails later): this traps with what was searched and why it failed.
    public convenience init(name: String) {
        let model: NSManagedObjectModel
        do {
            model = try Self.findModel(named: name)
        } catch {
            preconditionFailure("CoreData: NSPersistentContainer(name: \"\(name)\"): \(error)")
        }
        self.init(name: name, managedObjectModel: model)
    }

    /// Creates a container with a model you loaded or built.
    public init(name: String, managedObjectModel model: NSManagedObjectModel) {
        self.name = name
        self.managedObjectModel = model
        self.persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: Self.defaultDirectoryURL().appendingPathComponent("\(name).store"))
        self.persistentStoreDescriptions = [description]
        super.init()
    }

    /// Where stores go by default: `$XDG_DATA_HOME/<executable>` or
    /// `~/.local/share/<executable>` on Linux (Apple uses Application Support).
    open class func defaultDirectoryURL() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
        }
        return base.appendingPathComponent(ProcessInfo.processInfo.processName, isDirectory: true)
    }

    /// Adds every store in ``persistentStoreDescriptions``, calling `block` once per store.
    ///
    /// Creates the stores' folders as needed.
    open func loadPersistentStores(completionHandler block: @escaping (NSPersistentStoreDescription, Error?) -> Void) {
        for description in persistentStoreDescriptions {
            if description.type != NSInMemoryStoreType, let folder = description.url?.deletingLastPathComponent() {
                try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            persistentStoreCoordinator.addPersistentStore(with: description, completionHandler: block)
        }
    }

    /// The main-queue context, created on first use, merging saves of its parent automatically.
    open var viewContext: NSManagedObjectContext {
        lock.lock()
        defer { lock.unlock() }
        if let mainContext { return mainContext }
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        context.name = "viewContext"
        mainContext = context
        return context
    }

    /// A new private-queue context on the container's coordinator.
    open func newBackgroundContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` on a new private-queue context's queue.
    open func performBackgroundTask(_ block: @escaping @Sendable (NSManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new private-queue context's queue and returns its result.
    public func performBackgroundTask<T: Sendable>(_ block: @escaping @Sendable (NSManagedObjectContext) throws -> T) async throws -> T {
        let context = newBackgroundContext()
        return try await context.perform { try block(context) }
    }

    static func findModel(named name: String) throws -> NSManagedObjectModel {
        var searched: [String] = []
        var candidates: [URL] = []
        var bundles = [Bundle.main] + Bundle.allBundles
        if let executable = Bundle.main.executableURL?.deletingLastPathComponent(),
           let siblings = try? FileManager.default.contentsOfDirectory(at: executable, includingPropertiesForKeys: nil) {
            bundles += siblings.filter { $0.pathExtension == "resources" || $0.pathExtension == "bundle" }.compactMap(Bundle.init(url:))
        }
        for bundle in bundles {
            for ext in ["xcdatamodeld", "momd", "xcdatamodel", "mom"] {
                if let url = bundle.url(forResource: name, withExtension: ext) { candidates.append(url) }
            }
            searched.append(bundle.resourceURL?.path ?? bundle.bundlePath)
        }
        guard let url = candidates.first else {
            throw ModelError(
                .unreadableFile,
                "no model named '\(name)' (.xcdatamodeld or .momd) in \(searched.joined(separator: ", ")); ship it as a resource with .copy(\"\(name).xcdatamodeld\")")
        }
        return try NSManagedObjectModel(validatingContentsOf: url)
    }
}
