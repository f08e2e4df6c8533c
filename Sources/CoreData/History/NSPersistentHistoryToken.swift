import Foundation

/// A bookmark in persistent history: where a reader stopped, per store.
///
/// Matches Apple's `NSPersistentHistoryToken`: opaque, archivable with `NSKeyedArchiver`
/// (`NSSecureCoding`) and, on Linux also `Codable`, so an app saves it between launches and
/// fetches only what happened since (``NSPersistentHistoryChangeRequest/fetchHistory(after:)-(NSPersistentHistoryToken?)``).
/// Tokens compare with `<`: one token precedes another when it is at or before it in every store
/// and before it in one.
///
/// Threading: immutable; safe from any thread.
open class NSPersistentHistoryToken: NSObject, NSSecureCoding, NSCopying, Codable, Comparable, @unchecked Sendable {
    /// The number of the last transaction covered, by store identifier (`NSStoreUUIDKey`).
    let numbers: [String: Int64]

    init(numbers: [String: Int64]) {
        self.numbers = numbers
        super.init()
    }

    /// The transaction number the token holds for a store; 0 (before the first) when it holds none.
    func number(for storeIdentifier: String) -> Int64 { max(0, numbers[storeIdentifier] ?? 0) }

    // MARK: NSSecureCoding

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        ArchivedStorePairs.encode(numbers.mapValues { .number($0) }, with: coder)
    }

    /// Decodes a token; fails (returns `nil`) for an archive that holds no token.
    public required init?(coder: NSCoder) {
        guard let pairs = ArchivedStorePairs.decode(numbers: true, from: coder) else { return nil }
        var numbers: [String: Int64] = [:]
        for (store, value) in pairs {
            guard case .number(let number) = value else { return nil }
            numbers[store] = number
        }
        self.numbers = numbers
        super.init()
    }

    // MARK: Codable

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(numbers)
    }

    public required init(from decoder: any Decoder) throws {
        numbers = try decoder.singleValueContainer().decode([String: Int64].self)
        super.init()
    }

    // MARK: Identity and order

    public func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPersistentHistoryToken else { return false }
        return numbers.filter { $0.value != 0 } == other.numbers.filter { $0.value != 0 }
    }

    open override var hash: Int {
        var hasher = Hasher()
        for (store, number) in numbers.sorted(by: { $0.key < $1.key }) where number != 0 {
            hasher.combine(store)
            hasher.combine(number)
        }
        return hasher.finalize()
    }

    public static func < (lhs: NSPersistentHistoryToken, rhs: NSPersistentHistoryToken) -> Bool {
        let stores = Set(lhs.numbers.keys).union(rhs.numbers.keys)
        var before = false
        for store in stores {
            let left = lhs.number(for: store)
            let right = rhs.number(for: store)
            if left > right { return false }
            if left < right { before = true }
        }
        return before
    }

    open override var description: String {
        "<NSPersistentHistoryToken \(numbers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))>"
    }
}
