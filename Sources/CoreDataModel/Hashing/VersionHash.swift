import Crypto
import Foundation

/// Version hashes of properties, entities and models, byte for byte as
/// `Formats/model-version-hash.md` specifies. Every constant here appears there once.
enum VersionHash {
    /// Domain tags (spec §3): the trailing version keeps old and new hashes from colliding.
    static let propertyTag = "CoreDataLinux.PropertyHash.v1"   // §2.1
    static let entityTag = "CoreDataLinux.EntityHash.v1"       // §2.2
    static let checksumTag = "CoreDataLinux.ModelChecksum.v1"  // §2.3
    static let checksumLength = 16                             // §2.3

    /// Property kinds (spec §2.1).
    enum PropertyKind: UInt8 {
        case other = 0, attribute = 1, relationship = 2, fetched = 3, derivedAttribute = 4, compositeAttribute = 5
    }

    /// §2.1
    static func of(_ property: NSPropertyDescription) -> Data {
        var input = HashInput()
        input.str(propertyTag)
        switch property {
        case is NSDerivedAttributeDescription: input.u8(PropertyKind.derivedAttribute.rawValue)
        case is NSCompositeAttributeDescription: input.u8(PropertyKind.compositeAttribute.rawValue)
        case is NSAttributeDescription: input.u8(PropertyKind.attribute.rawValue)
        case is NSRelationshipDescription: input.u8(PropertyKind.relationship.rawValue)
        case is NSFetchedPropertyDescription: input.u8(PropertyKind.fetched.rawValue)
        default: input.u8(PropertyKind.other.rawValue)
        }
        input.str(property.name)
        input.bool(property.isOptional)
        input.bool(property.isTransient)
        input.bool(property.isReadOnly)
        input.opt(property.versionHashModifier)
        if let attribute = property as? NSAttributeDescription {
            input.u64(UInt64(attribute.attributeType.rawValue))
            if let derived = attribute as? NSDerivedAttributeDescription {
                input.opt(derived.derivationExpression?.description)
            } else if let composite = attribute as? NSCompositeAttributeDescription {
                input.u32(UInt32(truncatingIfNeeded: composite.elements.count))
                for element in composite.elements { input.bytes(of(element)) }
            }
        } else if let relationship = property as? NSRelationshipDescription {
            input.opt(relationship.destinationEntity?.name)
            input.opt(relationship.inverseRelationship?.name)
            // Negative counts are rejected by the consistency check; clamp so hashing never traps.
            input.u64(UInt64(max(0, relationship.minCount)))
            input.u64(UInt64(max(0, relationship.maxCount)))
            input.bool(relationship.isOrdered)
        }
        return input.digest()
    }

    /// §2.2. Cycle-safe: in an (invalid) inheritance cycle the entity that closes the cycle is
    /// hashed as if it had no superentity, so hashing terminates and the checker reports the cycle.
    static func of(_ entity: NSEntityDescription) -> Data {
        // Hash the chain from the root down, each with its parent's hash.
        var parentHash: Data?
        for ancestor in entityChain(from: entity).reversed() {
            parentHash = ownHash(ancestor, superentityHash: parentHash)
        }
        return parentHash ?? ownHash(entity, superentityHash: nil)
    }

    private static func ownHash(_ entity: NSEntityDescription, superentityHash: Data?) -> Data {
        var input = HashInput()
        input.str(entityTag)
        input.str(entity.name ?? "")
        if let superentityHash {
            input.u8(1)
            input.bytes(superentityHash)
        } else {
            input.u8(0)
        }
        input.bool(entity.isAbstract)
        let own = entity.declaredProperties.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        input.u32(UInt32(truncatingIfNeeded: own.count))
        for property in own { input.bytes(property.versionHash) }
        input.opt(entity.versionHashModifier)
        return input.digest()
    }

    /// §2.3
    static func checksum(of hashes: [String: Data]) -> String {
        var input = HashInput()
        input.str(checksumTag)
        input.u32(UInt32(truncatingIfNeeded: hashes.count))
        for (name, hash) in hashes.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            input.str(name)
            input.bytes(hash)
        }
        return Data(input.digest().prefix(checksumLength)).base64EncodedString()
    }
}

/// The primitives of spec §2.
struct HashInput {
    private(set) var buffer: [UInt8] = []

    mutating func u8(_ value: UInt8) { buffer.append(value) }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) } }
    mutating func bool(_ value: Bool) { u8(value ? 1 : 0) }
    mutating func bytes(_ data: Data) { buffer.append(contentsOf: data) }
    mutating func str(_ value: String) {
        u32(UInt32(truncatingIfNeeded: value.utf8.count))
        buffer.append(contentsOf: value.utf8)
    }
    mutating func opt(_ value: String?) {
        if let value {
            u8(1)
            str(value)
        } else {
            u8(0)
        }
    }

    func digest() -> Data { Data(SHA256.hash(data: buffer)) }
}
