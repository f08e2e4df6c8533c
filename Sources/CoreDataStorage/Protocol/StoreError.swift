import Foundation

/// Why a store refused an operation. The coordinator maps each case to Apple's `NSError` codes.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Objects changed in the store since the saving context read them (Apple: 133020).
    case optimisticLockingFailure([StoreVersionConflict])
    /// The save would store two objects with equal values for a uniqueness constraint (133021).
    case constraintConflict([StoreConstraintConflict])
    /// A saved object refers to an object that is neither stored nor saved with it.
    case danglingReference(from: StoreObjectID, property: String, to: StoreObjectID)
    /// An insert reuses an object ID the store already holds.
    case duplicateObjectID(StoreObjectID)
    /// An object's values need more bytes than one stored record may hold (`limit`, a format
    /// constant such as the binary store's 1 GiB − 64 KiB): nothing of the save was written.
    case recordTooLarge(StoreObjectID, bytes: Int, limit: Int)
    /// The store's file is damaged; `detail` says what and where (Apple: 259/134_xxx).
    case corrupt(detail: String)
    /// The store cannot be opened or written (Apple: 134_000–134_080).
    case io(detail: String)
    /// The store was closed or removed from its coordinator.
    case closed
    /// A user's store (`NSIncrementalStore`, `NSAtomicStore`) threw this error; the coordinator
    /// hands it on unchanged.
    case failed(StoreFailure)

    public var description: String {
        switch self {
        case .optimisticLockingFailure(let conflicts):
            return "optimistic locking failure: \(conflicts.map { "\($0.objectID) (read version \($0.expectedVersion), stored \($0.storedRow.map { "\($0.version)" } ?? "deleted"))" }.joined(separator: ", "))"
        case .constraintConflict(let conflicts):
            return "uniqueness constraint conflict: \(conflicts.map { "\($0.entityName)(\($0.constraint.joined(separator: ", "))) shared by \($0.objectIDs.map(\.description).joined(separator: ", "))" }.joined(separator: "; "))"
        case .danglingReference(let from, let property, let to):
            return "\(from).\(property) refers to \(to), which is not in the store"
        case .duplicateObjectID(let id):
            return "object ID \(id) is already in the store"
        case .recordTooLarge(let id, let bytes, let limit):
            return "\(id) needs \(bytes) bytes, more than the \(limit) bytes one stored object may hold; nothing of the save was written"
        case .corrupt(let detail):
            return "store is corrupt: \(detail)"
        case .io(let detail):
            return "store I/O failed: \(detail)"
        case .closed:
            return "the store is closed"
        case .failed(let failure):
            return failure.description
        }
    }
}

/// An error a user's store threw, carried through ``StoreError/failed(_:)`` unchanged.
///
/// Two failures are equal when their domain, code and description are.
public struct StoreFailure: Sendable, Equatable, CustomStringConvertible {
    /// The error as thrown.
    public let error: NSError

    /// Wraps an error a user's store threw.
    public init(_ error: NSError) { self.error = error }

    /// The error's localized description.
    public var description: String { error.localizedDescription }

    public static func == (lhs: StoreFailure, rhs: StoreFailure) -> Bool {
        lhs.error.domain == rhs.error.domain && lhs.error.code == rhs.error.code
            && lhs.error.localizedDescription == rhs.error.localizedDescription
    }
}
