import CoreDataModel
import Foundation

/// Finds the Swift class for an entity's objects, and the entity for a class.
///
/// Apple's Core Data finds an entity's class by its Objective-C runtime name. Here the entity's
/// class name (``NSEntityDescription/managedObjectClassName``, Xcode's `representedClassName`,
/// with or without a module prefix, a leading `.` ignored) is looked up, the first answer winning:
///
/// 1. the classes registered with ``NSManagedObject/registerSubclasses(_:)`` or used once
///    (`init(context:)`, `entity()`, `fetchRequest()`), by module-qualified or own name: the fast
///    path, no search;
/// 2. a module-qualified name (`MyApp.Car`) through Swift's runtime (`_typeByName`);
/// 3. the name qualified by each preferred module (`<module>.Car`), in order: the modules given
///    to ``NSManagedObject/registerModule(named:)``, then the main executable's module (its file
///    name without extension, `-` and other non-identifier characters as `_`), the first class
///    found winning; then the modules of registered classes, when exactly one of them has a class
///    of that name;
/// 4. every module loaded in the process (the executable, its shared libraries and a test
///    bundle's test modules), through the type metadata records Swift's runtime keeps for each
///    loaded image: the one non-generic, non-private class whose qualified name is the class name
///    or ends with `.` and the class name (`Car`, `Garage.Car` and `MyApp.Garage.Car` all find
///    `MyApp.Garage.Car`).
///
/// A class found must be a subclass of ``NSManagedObject``. When none is found, or more than one
/// in step 4, the objects are plain `NSManagedObject`s and a warning is printed to standard error
/// once per class name, as Apple's Core Data logs one. Answers are cached per class name
/// (a registration or a new preferred module clears the cache).
///
/// Threading: every entry point may be called from any thread.
enum EntityClassRegistry {
    private static let lock = NSLock()
    /// Registered classes by module-qualified and own name.
    nonisolated(unsafe) private static var classesByName: [String: NSManagedObject.Type] = [:]
    /// Answers of lookups by name (steps 2 to 4), by the entity's class name as written.
    nonisolated(unsafe) private static var resolved: [String: NSManagedObject.Type] = [:]
    /// Counts the clearings of `resolved`: an answer found meanwhile is not cached.
    nonisolated(unsafe) private static var resolvedGeneration = 0
    /// Modules added with `NSManagedObject.registerModule(named:)`, in order.
    nonisolated(unsafe) private static var preferredModules: [String] = []
    /// The modules of registered classes, in the order of their first registration.
    nonisolated(unsafe) private static var modulesOfRegisteredClasses: [String] = []
    /// Class names a warning was printed for.
    nonisolated(unsafe) private static var warnedNames: Set<String> = []
    /// Every warning printed, in order.
    nonisolated(unsafe) private static var printedWarnings: [String] = []
    nonisolated(unsafe) private static var models: [WeakModel] = []

    private struct WeakModel { weak var model: NSManagedObjectModel? }

    static func register(_ type: NSManagedObject.Type) {
        let qualified = String(reflecting: type)
        let short = String(describing: type)
        lock.lock()
        defer { lock.unlock() }
        // `init(context:)` registers its class on every call: nothing to do when known.
        if classesByName[qualified] == type, classesByName[short] == type { return }
        classesByName[qualified] = type
        classesByName[short] = type
        if let module = qualified.split(separator: ".").first.map(String.init), !modulesOfRegisteredClasses.contains(module) {
            modulesOfRegisteredClasses.append(module)
        }
        resolved = [:]
        resolvedGeneration += 1
    }

    /// The warnings printed so far, in order (for tests).
    static var warnings: [String] {
        lock.lock()
        defer { lock.unlock() }
        return printedWarnings
    }

    /// Adds a module searched first for unqualified class names.
    static func registerModule(_ name: String) {
        lock.lock()
        defer { lock.unlock() }
        guard !name.isEmpty, !preferredModules.contains(name) else { return }
        preferredModules.append(name)
        resolved = [:]
        resolvedGeneration += 1
    }

    /// Remembers a model a coordinator uses, for `NSManagedObject.entity()`.
    static func noteModel(_ model: NSManagedObjectModel) {
        lock.lock()
        defer { lock.unlock() }
        models.removeAll { $0.model == nil || $0.model === model }
        models.append(WeakModel(model: model))
    }

    /// The class of `entity`'s objects (see the type's documentation); `NSManagedObject` when
    /// the entity names none or a class that cannot be found.
    static func objectClass(for entity: NSEntityDescription) -> NSManagedObject.Type {
        guard let raw = entity.managedObjectClassName, raw != "NSManagedObject" else { return NSManagedObject.self }
        lock.lock()
        let known = classesByName[raw] ?? resolved[raw]
        lock.unlock()
        if let known { return known }
        return resolve(raw, entityName: entity.name ?? "")
    }

    /// Looks `raw` up (steps 1 to 4), caches the answer and prints the warning of a miss.
    private static func resolve(_ raw: String, entityName: String) -> NSManagedObject.Type {
        let name = raw.hasPrefix(".") ? String(raw.dropFirst()) : raw
        lock.lock()
        let registered = classesByName[name]
        let preferred = preferredModules + [mainModuleName]
        let ofRegisteredClasses = modulesOfRegisteredClasses
        let generation = resolvedGeneration
        lock.unlock()
        var result: NSManagedObject.Type = NSManagedObject.self
        var warning: String?
        if let registered {
            result = registered
        } else {
            switch find(name, preferredModules: preferred, modulesOfRegisteredClasses: ofRegisteredClasses) {
            case .found(let type):
                result = type
            case .notFound:
                warning = "CoreData: warning: Unable to load class named '\(name)' for entity '\(entityName)'.  Class not found, using default NSManagedObject instead."
            case .notManagedObjectSubclass(let type):
                warning = "CoreData: warning: Unable to load class named '\(name)' for entity '\(entityName)'.  Class '\(String(reflecting: type))' is not a subclass of NSManagedObject, using default NSManagedObject instead."
            case .ambiguous(let types):
                let names = types.map { String(reflecting: $0) }.sorted().joined(separator: ", ")
                warning = "CoreData: warning: Failed to find a unique match for an NSEntityDescription to a managed object subclass: class name '\(name)' of entity '\(entityName)' matches \(names); using default NSManagedObject instead. Qualify the class name with its module, or call NSManagedObject.registerSubclasses(_:) or NSManagedObject.registerModule(named:)."
            }
        }
        lock.lock()
        if generation == resolvedGeneration { resolved[raw] = result }
        let firstWarning = warning != nil && warnedNames.insert(name).inserted
        if firstWarning, let warning { printedWarnings.append(warning) }
        lock.unlock()
        if firstWarning, let warning {
            FileHandle.standardError.write(Data((warning + "\n").utf8))
        }
        return result
    }

    private enum Lookup {
        case found(NSManagedObject.Type)
        case notFound
        case notManagedObjectSubclass(Any.Type)
        case ambiguous([NSManagedObject.Type])
    }

    /// Steps 2 to 4 for `name` (without a leading `.`).
    private static func find(_ name: String, preferredModules: [String], modulesOfRegisteredClasses: [String]) -> Lookup {
        var other: Any.Type?
        func check(_ type: Any.Type?) -> NSManagedObject.Type? {
            guard let type else { return nil }
            if let managed = type as? NSManagedObject.Type { return managed }
            if other == nil, type is AnyClass { other = type }
            return nil
        }
        if name.contains("."), let type = check(_typeByName(name)) { return .found(type) }
        var tried = Set<String>()
        for module in preferredModules where tried.insert(module).inserted {
            if let type = check(_typeByName("\(module).\(name)")) { return .found(type) }
        }
        let inModulesOfRegisteredClasses = modulesOfRegisteredClasses.filter { tried.insert($0).inserted }.compactMap {
            check(_typeByName("\($0).\(name)"))
        }
        if inModulesOfRegisteredClasses.count == 1 { return .found(inModulesOfRegisteredClasses[0]) }
        var matches: [NSManagedObject.Type] = []
        for candidate in SwiftClassFinder.classes(named: name) {
            if let type = check(_typeByName(candidate)), !matches.contains(where: { ObjectIdentifier($0) == ObjectIdentifier(type) }) {
                matches.append(type)
            }
        }
        switch matches.count {
        case 1: return .found(matches[0])
        case 0: return other.map { .notManagedObjectSubclass($0) } ?? .notFound
        default: return .ambiguous(matches)
        }
    }

    /// The main executable's module name as Swift Package Manager and Xcode derive it from the
    /// product name: its file name without extension, non-identifier characters as `_`.
    private static let mainModuleName: String = {
        let file = Bundle.main.executableURL?.deletingPathExtension().lastPathComponent ?? ProcessInfo.processInfo.processName
        var name = String(file.unicodeScalars.map { scalar -> Character in
            scalar.properties.isXIDContinue ? Character(scalar) : "_"
        })
        if let first = name.unicodeScalars.first, !first.properties.isXIDStart, first != "_" { name = "_" + name }
        return name
    }()

    static func entity(for type: NSManagedObject.Type, in model: NSManagedObjectModel) -> NSEntityDescription? {
        register(type)
        let qualified = String(reflecting: type)
        let short = String(describing: type)
        return model.entities.first { entity in
            guard let raw = entity.managedObjectClassName else { return false }
            let name = raw.hasPrefix(".") ? String(raw.dropFirst()) : raw
            return name == qualified || name == short || qualified.hasSuffix("." + name)
        }
    }

    static func entityInAnyModel(for type: NSManagedObject.Type) -> NSEntityDescription? {
        lock.lock()
        let candidates = models.compactMap(\.model).reversed()
        lock.unlock()
        for model in candidates {
            if let entity = entity(for: type, in: model) { return entity }
        }
        return nil
    }
}

extension NSManagedObject {
    /// Makes subclasses known before their first use: the fast path of finding an entity's class.
    ///
    /// Not needed for finding them: an entity's class name (`representedClassName`) finds its
    /// class in any loaded module without it (see <doc:DifferencesFromApple>). A registered class is
    /// found under its module-qualified name (`MyApp.Car`) and its own name (`Car`) without a
    /// search, and wins over any other class of that name.
    public static func registerSubclasses(_ types: NSManagedObject.Type...) {
        for type in types { EntityClassRegistry.register(type) }
    }

    /// Adds a module to those searched first for an entity's class name without a module prefix.
    ///
    /// An unqualified class name (`Car`, as Xcode writes it for "Current Product Module") is
    /// looked up as `<module>.Car` in each module added here, in the order added, then in the
    /// main executable's module, then in the modules of registered subclasses (when only one of
    /// them has such a class); only then are all loaded modules searched, where a name that two
    /// modules' classes share finds neither.
    /// Add the module that holds your subclasses when another loaded module has a class of the
    /// same name. Apple's Core Data has no such call (the Objective-C runtime names every
    /// class); see <doc:DifferencesFromApple>.
    ///
    /// - Parameter moduleName: The module's name as Swift spells it (`MyApp`, `MyApp_Models`).
    public static func registerModule(named moduleName: String) {
        EntityClassRegistry.registerModule(moduleName)
    }
}
