import CoreDataStorage
import Foundation

/// Names a generation of the stores' data that a context reads: a snapshot that saves by other
/// contexts and processes do not change.
///
/// Matches Apple's `NSQueryGenerationToken`. ``current`` asks a context to pin itself to the
/// latest generation at its next read; a context's ``NSManagedObjectContext/queryGenerationToken``
/// names the generation it reads, and another context of the same coordinator can be pinned to
/// it with ``NSManagedObjectContext/setQueryGenerationFrom(_:)``.
///
/// The binary, in-memory and XML stores keep generations; a user's store (`NSIncrementalStore`,
/// `NSAtomicStore`) is always read at its latest state. A token archived with `NSKeyedArchiver`
/// names its generation but holds no snapshot: it compares equal to the token it was made from,
/// and pinning a context to it works only while that generation is still held by a live token.
///
/// Threading: immutable; safe from any thread. A token holds its snapshots for as long as it
/// lives (the binary store puts off checkpoints meanwhile), so let go of tokens you no longer use.
open class NSQueryGenerationToken: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// Asks for the latest generation, taken at the context's next read.
    public class var current: NSQueryGenerationToken { currentToken }
    private static let currentToken = NSQueryGenerationToken(isCurrent: true, views: [:], generations: [:])

    let isCurrent: Bool
    /// The snapshots by store identifier (none in ``current`` and in a decoded token).
    let views: [String: any StoreGenerationView]
    /// The generations by store identifier.
    let generations: [String: String]

    init(isCurrent: Bool, views: [String: any StoreGenerationView], generations: [String: String]) {
        self.isCurrent = isCurrent
        self.views = views
        self.generations = generations
        super.init()
    }

    convenience init(views: [String: any StoreGenerationView]) {
        self.init(isCurrent: false, views: views, generations: views.mapValues(\.generation))
    }

    public static var supportsSecureCoding: Bool { true }

    private static let currentKey = "current"

    public func encode(with coder: NSCoder) {
        coder.encode(isCurrent, forKey: Self.currentKey)
        ArchivedStorePairs.encode(generations.mapValues { .text($0) }, with: coder)
    }

    public required init?(coder: NSCoder) {
        guard let pairs = ArchivedStorePairs.decode(numbers: false, from: coder) else { return nil }
        var generations: [String: String] = [:]
        for (store, value) in pairs {
            guard case .text(let generation) = value else { return nil }
            generations[store] = generation
        }
        self.isCurrent = coder.decodeBool(forKey: Self.currentKey)
        self.views = [:]
        self.generations = generations
        super.init()
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSQueryGenerationToken else { return false }
        return isCurrent == other.isCurrent && generations == other.generations
    }

    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(isCurrent)
        for (store, generation) in generations.sorted(by: { $0.key < $1.key }) {
            hasher.combine(store)
            hasher.combine(generation)
        }
        return hasher.finalize()
    }

    open override var description: String {
        isCurrent ? "<NSQueryGenerationToken current>"
            : "<NSQueryGenerationToken \(generations.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))>"
    }
}

/// `userInfo` key of a did-save notification from a context pinned to a query generation: the
/// ``NSQueryGenerationToken`` it reads after the save (Apple's key).
public let NSManagedObjectContextQueryGenerationKey = "queryGeneration"
