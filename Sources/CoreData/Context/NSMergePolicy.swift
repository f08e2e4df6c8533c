import Foundation

/// How a save resolves conflicts with changes already in the store.
///
/// Matches Apple's `NSMergePolicy` and its five standard policies.
open class NSMergePolicy: NSObject, @unchecked Sendable {
    /// The kinds of standard policy (Apple's `NSMergePolicyType` raw values).
    public enum MergePolicyType: UInt, Sendable {
        /// Fail the save on any conflict (the default).
        case errorMergePolicyType = 0x00
        /// Keep the store's value for each conflicting property, the context's for the rest.
        case mergeByPropertyStoreTrumpMergePolicyType = 0x01
        /// Keep the context's value for each conflicting property.
        case mergeByPropertyObjectTrumpMergePolicyType = 0x02
        /// Write the context's objects over the store's whole.
        case overwriteMergePolicyType = 0x03
        /// Throw away the context's conflicting changes.
        case rollbackMergePolicyType = 0x04
    }

    /// The policy's kind.
    public let mergeType: MergePolicyType

    /// Creates a standard policy.
    public init(merge type: MergePolicyType) {
        self.mergeType = type
        super.init()
    }

    public static let error = NSMergePolicy(merge: .errorMergePolicyType)
    public static let mergeByPropertyStoreTrump = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    public static let mergeByPropertyObjectTrump = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    public static let overwrite = NSMergePolicy(merge: .overwriteMergePolicyType)
    public static let rollback = NSMergePolicy(merge: .rollbackMergePolicyType)
}

/// Apple's global spellings of the standard policies (`context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy`).
public let NSErrorMergePolicy: NSMergePolicy = .error
public let NSMergeByPropertyStoreTrumpMergePolicy: NSMergePolicy = .mergeByPropertyStoreTrump
public let NSMergeByPropertyObjectTrumpMergePolicy: NSMergePolicy = .mergeByPropertyObjectTrump
public let NSOverwriteMergePolicy: NSMergePolicy = .overwrite
public let NSRollbackMergePolicy: NSMergePolicy = .rollback

extension NSManagedObjectContext {
    /// The context's policy as one of the standard kinds; an unknown value counts as `.error`.
    var resolvedMergeType: NSMergePolicy.MergePolicyType {
        (mergePolicy as? NSMergePolicy)?.mergeType ?? .errorMergePolicyType
    }
}
