import CoreDataPredicate
import Foundation

/// The variable `$manager` in a property mapping's value expression: the migration manager.
public let NSMigrationManagerKey = "manager"
/// The variable `$source`: the source object being migrated.
public let NSMigrationSourceObjectKey = "source"
/// The variable `$destination`: the destination object being filled.
public let NSMigrationDestinationObjectKey = "destination"
/// The variable `$entityMapping`: the entity mapping being run.
public let NSMigrationEntityMappingKey = "entityMapping"
/// The variable `$propertyMapping`: the property mapping being evaluated.
public let NSMigrationPropertyMappingKey = "propertyMapping"
/// The variable `$entityPolicy`: the entity mapping's migration policy.
public let NSMigrationEntityPolicyKey = "entityPolicy"

/// How the objects of one entity mapping are migrated; subclass it to migrate them your way.
///
/// Matches Apple's `NSEntityMigrationPolicy`. ``NSMigrationManager`` calls, for every entity
/// mapping in order: ``begin(_:with:)`` and ``createDestinationInstances(forSource:in:manager:)``
/// per source object, then ``endInstanceCreation(forMapping:manager:)``; when every mapping has
/// made its objects, ``createRelationships(forDestination:in:manager:)`` per destination object and
/// ``endRelationshipCreation(forMapping:manager:)``; then ``performCustomValidation(forMapping:manager:)``
/// and ``end(_:manager:)``. The default implementations do what a mapping without a policy does:
/// one destination object per source object, its attributes from the attribute mappings, its
/// relationships from the relationship mappings.
///
/// Linux differences:
/// - Apple finds the class named by ``NSEntityMapping/entityMigrationPolicyClassName`` through
///   the Objective-C runtime. Here a name is found when the class was registered
///   (``registerSubclasses(_:)`` or ``register(_:forClassName:)``), or when it is
///   module-qualified (`MyApp.ItemPolicy`) and Swift's runtime knows it. A registered class is
///   also found under any module prefix (`REPLACE_AT_RUNTIME.ItemPolicy` or
///   `$(PRODUCT_MODULE_NAME).ItemPolicy`, as Xcode's mapping editor writes them) by its own name,
///   when exactly one registered class has that name.
/// - `FUNCTION($entityPolicy, "selector:", …)` in a value expression calls
///   ``migrationFunction(_:arguments:)`` (there is no Objective-C messaging): override it to
///   answer your selectors.
///
/// Threading: a policy runs on the thread that runs the migration; one instance serves one
/// entity mapping of one migration.
open class NSEntityMigrationPolicy: NSObject, PredicateFunctionReceiver {
    public required override init() { super.init() }

    /// Called before the mapping's first object is created.
    open func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {}

    /// Creates the destination objects of one source object: by default one object of the
    /// mapping's destination entity in ``NSMigrationManager/destinationContext``, with each
    /// attribute mapping's value expression evaluated against `sInstance`, associated with it
    /// through ``NSMigrationManager/associate(sourceInstance:withDestinationInstance:for:)``.
    ///
    /// - Throws: `NSMigrationError` (134110) for a value that cannot be set; an override may
    ///   throw any error to stop the migration.
    open func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try manager.createDefaultDestinationInstance(for: sInstance, in: mapping, policy: self)
    }

    /// Called after the mapping's last source object has its destination objects.
    open func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Sets the relationships of one destination object: by default each relationship mapping's
    /// value expression, evaluated against the source object the destination was made from.
    open func createRelationships(forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try manager.createDefaultRelationships(for: dInstance, in: mapping, policy: self)
    }

    /// Called after the mapping's last destination object has its relationships.
    open func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Checks the migrated objects beyond the model's own validation, which runs after this.
    open func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Called when the mapping is done.
    open func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// The value of `FUNCTION($entityPolicy, selector, arguments…)` in a value expression; `nil`
    /// by default. Override it to provide the custom functions a mapping model calls (on Apple
    /// platforms they are Objective-C methods of the policy).
    open func migrationFunction(_ selector: String, arguments: [Any?]) -> Any? { nil }

    public func predicateFunction(_ selector: String, arguments: [Any?]) -> Any? {
        migrationFunction(selector, arguments: arguments)
    }

    // MARK: Finding policies by class name

    /// Makes policy classes known by name before a migration names them (Linux has no
    /// Objective-C runtime to find them): each is found under its module-qualified name, its own
    /// name, and its own name behind any module prefix.
    public static func registerSubclasses(_ types: NSEntityMigrationPolicy.Type...) {
        for type in types { PolicyRegistry.register(type, as: nil) }
    }

    /// Makes a policy class known under `className` exactly, as a mapping model names it.
    public static func register(_ type: NSEntityMigrationPolicy.Type, forClassName className: String) {
        PolicyRegistry.register(type, as: className)
    }

    /// The policy class a mapping names: registered under that name, found by Swift's runtime
    /// (a module-qualified name), or registered under the name's last component; `nil` when none.
    static func policyClass(named name: String) -> NSEntityMigrationPolicy.Type? {
        PolicyRegistry.lookUp(name)
    }
}

/// The policy classes known by name.
private enum PolicyRegistry {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var byName: [String: NSEntityMigrationPolicy.Type] = [:]
    /// Registered classes by their unqualified name; more than one means the name is ambiguous.
    nonisolated(unsafe) private static var byShortName: [String: [ObjectIdentifier: NSEntityMigrationPolicy.Type]] = [:]

    static func register(_ type: NSEntityMigrationPolicy.Type, as name: String?) {
        lock.lock()
        defer { lock.unlock() }
        if let name { byName[name] = type }
        byName[String(reflecting: type)] = type
        byShortName[String(describing: type), default: [:]][ObjectIdentifier(type)] = type
    }

    static func lookUp(_ raw: String) -> NSEntityMigrationPolicy.Type? {
        let name = raw.hasPrefix(".") ? String(raw.dropFirst()) : raw
        lock.lock()
        let exact = byName[name]
        lock.unlock()
        if let exact { return exact }
        if name.contains("."), let found = _typeByName(name) as? NSEntityMigrationPolicy.Type {
            register(found, as: nil)
            return found
        }
        let short = String(name.split(separator: ".").last ?? Substring(name))
        lock.lock()
        defer { lock.unlock() }
        guard let candidates = byShortName[short], candidates.count == 1 else { return nil }
        return candidates.values.first
    }
}
