import Crypto
import Foundation

// Apple's own model version hashes, byte for byte (`Formats/model-version-hash.md`, "Apple's
// hashes"). They are separate from `versionHash` (our own, documented hash, which our stores
// record) and never replace it: use these to compare a model with hashes written by Apple's Core
// Data (a `.momd`'s `VersionInfo.plist`, an Apple store's `NSStoreModelVersionHashes`).

extension NSPropertyDescription {
    /// The 32-byte hash Apple's Core Data reports as this property's `versionHash`.
    ///
    /// SHA-256 over the property's name, its optional/transient/read-only flags and its
    /// ``versionHashModifier``; an attribute adds its type and two storage flags, a relationship its
    /// destination and inverse names, its counts and whether it is ordered (exact bytes in
    /// `Formats/model-version-hash.md`). Fetched properties and expression descriptions get the
    /// common part alone (unchecked: they never enter an entity hash, so no fixture shows them).
    ///
    /// Reproduced for attributes and relationships (checked through the entity hashes of Xcode's
    /// `VersionInfo.plist`). Not reproduced: composite and derived attributes, whose Apple hash
    /// covers parts this model does not hold (composite elements, derivation), so for them the
    /// value differs from Apple's.
    public var appleVersionHash: Data {
        switch self {
        case let attribute as NSAttributeDescription: return AppleVersionHash.attribute(attribute)
        case let relationship as NSRelationshipDescription: return AppleVersionHash.relationship(relationship)
        default: return AppleVersionHash.propertyCore(self)
        }
    }
}

extension NSEntityDescription {
    /// The 32-byte hash Apple's Core Data reports as this entity's `versionHash`, equal to the one
    /// Xcode writes to `VersionInfo.plist` and Apple's stores record in `NSStoreModelVersionHashes`.
    ///
    /// SHA-256 over the entity's name, ``isAbstract``, its superentity's Apple hash, the Apple
    /// hashes of all its non-transient attributes and relationships (inherited ones included,
    /// sorted by name), its ``versionHashModifier`` and its uniqueness constraints. Class name,
    /// user info, renaming identifier, indexes and fetched properties do not count.
    ///
    /// Computed on every call (one SHA-256 per property and per ancestor); cycle-safe like
    /// ``versionHash``. Not a replacement for ``versionHash``: our stores record ours.
    public var appleVersionHash: Data {
        var parentHash: Data?
        for ancestor in entityChain(from: self).reversed() {
            parentHash = AppleVersionHash.entity(ancestor, superentityHash: parentHash)
        }
        return parentHash ?? AppleVersionHash.entity(self, superentityHash: nil)
    }
}

extension NSManagedObjectModel {
    /// Apple's entity version hashes by entity name (see ``NSEntityDescription/appleVersionHash``):
    /// what Apple's `entityVersionHashesByName` returns for the same model.
    public var appleEntityVersionHashesByName: [String: Data] {
        Dictionary(
            entities.compactMap { entity in entity.name.map { ($0, entity.appleVersionHash) } },
            uniquingKeysWith: { first, _ in first })
    }

    /// Apple's `NSStoreModelVersionHashesDigest`: the Base64 SHA-512 of every entity's name and
    /// Apple hash, in name order. Apple's SQLite store records it in its metadata beside
    /// `NSStoreModelVersionHashes`.
    public var appleEntityVersionHashesDigest: String {
        AppleVersionHash.digest(of: appleEntityVersionHashesByName)
    }

    /// Apple's `versionChecksum`: the Base64 SHA-256 of the entities' Apple hashes in name order.
    ///
    /// Unlike the entity hashes and ``appleEntityVersionHashesDigest``, no fixture carries an Apple
    /// checksum, so this value follows the documented layout but is not checked against one.
    public var appleVersionChecksum: String {
        AppleVersionHash.checksum(of: appleEntityVersionHashesByName)
    }
}

/// The byte layouts of `Formats/model-version-hash.md` ("Apple's hashes"). Integers are
/// little-endian; strings are UTF-8 with no length and no terminator; absent values add nothing.
enum AppleVersionHash {
    /// Property flag bits (a little-endian `UInt16`).
    static let optionalFlag: UInt16 = 1, transientFlag: UInt16 = 2, readOnlyFlag: UInt16 = 4

    /// The part every property kind starts with.
    static func propertyCore(_ property: NSPropertyDescription) -> Data {
        var input = AppleHashInput()
        input.string(property.name)
        var flags: UInt16 = 0
        if property.isOptional { flags |= optionalFlag }
        if property.isTransient { flags |= transientFlag }
        if property.isReadOnly { flags |= readOnlyFlag }
        input.u16(flags)
        input.string(property.versionHashModifier)
        return input.digest()
    }

    static func attribute(_ attribute: NSAttributeDescription) -> Data {
        var input = AppleHashInput()
        input.bytes(propertyCore(attribute))
        input.u32(UInt32(truncatingIfNeeded: attribute.attributeType.rawValue))
        if attribute.allowsExternalBinaryDataStorage { input.u8(1) }
        if attribute.preservesValueInHistoryOnDeletion { input.u8(1) }
        return input.digest()
    }

    static func relationship(_ relationship: NSRelationshipDescription) -> Data {
        var input = AppleHashInput()
        input.bytes(propertyCore(relationship))
        input.string(relationship.destinationEntity?.name)
        // A relationship that is its own inverse does not name it.
        if let inverse = relationship.inverseRelationship, inverse !== relationship {
            input.string(inverse.name)
        }
        input.u32(UInt32(truncatingIfNeeded: relationship.maxCount))
        input.u32(UInt32(truncatingIfNeeded: relationship.minCount))
        if relationship.isOrdered { input.u16(1) }
        return input.digest()
    }

    static func entity(_ entity: NSEntityDescription, superentityHash: Data?) -> Data {
        var input = AppleHashInput()
        input.string(entity.name)
        input.u8(entity.isAbstract ? 1 : 0)
        if let superentityHash { input.bytes(superentityHash) }
        let hashed = entity.properties
            .filter { ($0 is NSAttributeDescription || $0 is NSRelationshipDescription) && !$0.isTransient }
            .sorted { $0.name < $1.name }
        for property in hashed { input.bytes(property.appleVersionHash) }
        input.string(entity.versionHashModifier)
        for constraint in entity.uniquenessConstraintNames.map({ $0.joined(separator: ".") }).sorted() {
            input.string(constraint)
        }
        return input.digest()
    }

    static func digest(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for (name, hash) in hashes.sorted(by: { $0.key < $1.key }) {
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: hash)
        }
        return Data(SHA512.hash(data: bytes)).base64EncodedString()
    }

    static func checksum(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for (_, hash) in hashes.sorted(by: { $0.key < $1.key }) { bytes.append(contentsOf: hash) }
        return Data(SHA256.hash(data: bytes)).base64EncodedString()
    }
}

/// The primitives of Apple's layout: fixed-width little-endian integers and bare UTF-8 strings.
struct AppleHashInput {
    private(set) var buffer: [UInt8] = []

    mutating func u8(_ value: UInt8) { buffer.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) } }
    mutating func bytes(_ data: Data) { buffer.append(contentsOf: data) }
    /// The string's UTF-8 bytes; nothing for `nil` (nor for `""`).
    mutating func string(_ value: String?) { if let value { buffer.append(contentsOf: value.utf8) } }

    func digest() -> Data { Data(SHA256.hash(data: buffer)) }
}

extension NSEntityDescription {
    /// Whether a hash a store recorded is this entity's: our own ``versionHash`` or Apple's
    /// (``appleVersionHash``, which stores Core Data wrote on Apple platforms record).
    ///
    /// Complexity: Apple's hash is computed only when ours differs (SHA-256 over the entity).
    public func matchesVersionHash(_ recorded: Data) -> Bool {
        recorded == versionHash || recorded == appleVersionHash
    }
}
