import Foundation

/// Compiled MATCHES patterns, shared by all predicates: evaluating one predicate against many
/// objects compiles its pattern once.
///
/// Threading: safe to use from any thread (a lock guards the table). Memory: at most
/// `capacity` patterns are kept; the table is emptied when it fills.
final class RegexCache: @unchecked Sendable {
    /// A compiled pattern. `anchored` wraps the pattern as `\A(?:pattern)\z`, which makes ICU look
    /// for a whole-string match; `plain` is the pattern alone, used when wrapping would change its
    /// meaning (a `\Q` quote or an `(?x)` comment would swallow the closing `)\z`), and is matched
    /// with `.anchored` and a check that the match covers the whole string.
    enum Compiled {
        case anchored(NSRegularExpression)
        case plain(NSRegularExpression)
    }

    static let shared = RegexCache()

    private struct Key: Hashable {
        var pattern: String
        var caseInsensitive: Bool
    }

    private let lock = NSLock()
    private var table: [Key: Compiled?] = [:]
    private let capacity = 128

    /// The compiled pattern, or nil when it is not a valid regular expression.
    func regex(for pattern: String, caseInsensitive: Bool) -> Compiled? {
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        lock.lock()
        if let cached = table[key] {
            lock.unlock()
            return cached
        }
        lock.unlock()
        let compiled = RegexCache.compile(pattern, caseInsensitive: caseInsensitive)
        lock.lock()
        if table.count >= capacity { table.removeAll(keepingCapacity: true) }
        table[key] = .some(compiled)
        lock.unlock()
        return compiled
    }

    private static func compile(_ pattern: String, caseInsensitive: Bool) -> Compiled? {
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        if !wrappingIsUnsafe(pattern),
           let wrapped = try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: options) {
            return .anchored(wrapped)
        }
        guard let plain = try? NSRegularExpression(pattern: pattern, options: options) else { return nil }
        return .plain(plain)
    }

    /// Whether the pattern quotes (`\Q`) or switches on comments (`(?x`), either of which could
    /// absorb text appended after it.
    private static func wrappingIsUnsafe(_ pattern: String) -> Bool {
        if pattern.contains("\\Q") { return true }
        var rest = Substring(pattern)
        while let open = rest.range(of: "(?") {
            let flags = rest[open.upperBound...].prefix { $0.isLetter || $0 == "-" }
            if flags.contains("x") { return true }
            rest = rest[open.upperBound...]
        }
        return false
    }
}
