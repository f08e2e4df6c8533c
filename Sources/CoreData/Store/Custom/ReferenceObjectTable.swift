import CoreDataStorage
import Foundation

/// The two-way map between a user's reference objects (the keys an `NSIncrementalStore` or
/// `NSAtomicStore` gives its objects) and the primary keys object IDs carry.
///
/// A positive integer reference (`Int`, `Int64`, `Int32`, an integral `NSNumber`) below 2⁶² is
/// its own primary key, so its object ID and URI (`…/Entity/p42`) are the same in every run.
/// Any other reference (a `String`, a `UUID`, …) gets a key from 2⁶² up, per entity, in the order
/// the store first names it: such IDs and their URIs hold only while the store is open.
///
/// Not thread-safe; the store engine that owns it serialises access.
/// Complexity: O(1) per lookup.
struct ReferenceObjectTable {
    /// The first key handed to a reference that is not a small positive integer.
    static let firstSyntheticKey: Int64 = 1 << 62

    private var keysByReference: [String: [AnyHashable: Int64]] = [:]
    private var referencesByID: [StoreObjectID: AnyHashable] = [:]
    private var nextSyntheticKey: [String: Int64] = [:]

    /// The key of `reference` among the objects of `entityName` (whose number is `entity`), made
    /// on first use.
    mutating func key(for reference: AnyHashable, entityName: String, entity: EntityNumber) -> Int64 {
        if let key = keysByReference[entityName]?[reference] { return key }
        let key: Int64
        if let number = Self.integer(reference), number > 0, number < Self.firstSyntheticKey {
            key = number
        } else {
            key = nextSyntheticKey[entityName, default: Self.firstSyntheticKey]
            nextSyntheticKey[entityName] = key + 1
        }
        keysByReference[entityName, default: [:]][reference] = key
        referencesByID[StoreObjectID(entity: entity, primaryKey: key)] = reference
        return key
    }

    /// The reference object an ID was made from. An integer key the table never saw (an ID from
    /// a URI of an earlier run) reads as that integer, as an `Int`.
    func reference(for id: StoreObjectID) -> Any? {
        if let reference = referencesByID[id] { return reference.base }
        if id.primaryKey > 0, id.primaryKey < Self.firstSyntheticKey { return Int(id.primaryKey) }
        return nil
    }

    private static func integer(_ reference: AnyHashable) -> Int64? {
        switch reference.base {
        case let value as Int: return Int64(value)
        case let value as Int64: return value
        case let value as Int32: return Int64(value)
        case let value as Int16: return Int64(value)
        case let value as NSNumber:
            let integral = value.int64Value
            return Double(integral) == value.doubleValue ? integral : nil
        default: return nil
        }
    }
}
