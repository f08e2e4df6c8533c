import Foundation

/// The string operators: equality and order under `[c]`/`[d]` folding, BEGINSWITH, ENDSWITH,
/// CONTAINS, LIKE and MATCHES.
///
/// Without options strings compare literally, by Unicode scalars (Apple's `==` compares NSStrings
/// literally, and Core Data's SQLite store orders them by code point). `[c]` and `[d]` fold both
/// sides with Foundation's `folding(options:locale:)` and bring them to NFC, so that a precomposed
/// and a decomposed "é" compare alike. `[n]` promises pre-normalized strings and, as in Apple's
/// framework, supersedes the other options: no folding is done.
enum StringMatching {
    static func fold(_ string: String, options: NSComparisonPredicate.Options) -> String {
        if options.contains(.normalized) { return string }
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        guard !folding.isEmpty else { return string }
        return string.folding(options: folding, locale: nil).precomposedStringWithCanonicalMapping
    }

    private static func scalars(_ string: String, _ options: NSComparisonPredicate.Options) -> [Unicode.Scalar] {
        Array(fold(string, options: options).unicodeScalars)
    }

    static func equal(_ a: String, _ b: String, options: NSComparisonPredicate.Options) -> Bool {
        fold(a, options: options).unicodeScalars.elementsEqual(fold(b, options: options).unicodeScalars)
    }

    static func compare(_ a: String, _ b: String, options: NSComparisonPredicate.Options) -> ComparisonResult {
        ValueComparison.lexicographic(
            fold(a, options: options).unicodeScalars.map(\.value), fold(b, options: options).unicodeScalars.map(\.value))
    }

    static func hasPrefix(_ string: String, _ prefix: String, options: NSComparisonPredicate.Options) -> Bool {
        scalars(string, options).starts(with: scalars(prefix, options))
    }

    static func hasSuffix(_ string: String, _ suffix: String, options: NSComparisonPredicate.Options) -> Bool {
        scalars(string, options).reversed().starts(with: scalars(suffix, options).reversed())
    }

    /// Whether `needle` occurs in `haystack`. Complexity: O(n·m) in the scalar counts.
    static func contains(_ haystack: String, _ needle: String, options: NSComparisonPredicate.Options) -> Bool {
        let h = scalars(haystack, options)
        let n = scalars(needle, options)
        if n.isEmpty { return true }
        guard n.count <= h.count else { return false }
        for start in 0...(h.count - n.count) where h[start] == n[0] {
            if h[start..<(start + n.count)].elementsEqual(n) { return true }
        }
        return false
    }

    // MARK: - LIKE

    private enum GlobElement: Equatable {
        case anySequence
        case anyCharacter
        case literal(Character)
    }

    /// LIKE: `*` matches any run of characters (also none), `?` exactly one, `\` makes the next
    /// character literal; the pattern must match the whole string. Works on Characters, so `?`
    /// matches what a reader sees as one character.
    ///
    /// Complexity: O(n·m) worst case (the classic single-backtrack glob algorithm; never exponential).
    static func like(_ string: String, pattern: String, options: NSComparisonPredicate.Options) -> Bool {
        let text = Array(fold(string, options: options))
        var glob: [GlobElement] = []
        var escaping = false
        for character in fold(pattern, options: options) {
            if escaping {
                glob.append(.literal(character))
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "*" {
                if glob.last != .anySequence { glob.append(.anySequence) }
            } else if character == "?" {
                glob.append(.anyCharacter)
            } else {
                glob.append(.literal(character))
            }
        }
        if escaping { glob.append(.literal("\\")) }

        var t = 0, g = 0
        var starGlob = -1, starText = 0
        while t < text.count {
            if g < glob.count {
                switch glob[g] {
                case .anySequence:
                    starGlob = g
                    starText = t
                    g += 1
                    continue
                case .anyCharacter:
                    t += 1
                    g += 1
                    continue
                case .literal(let character) where character == text[t]:
                    t += 1
                    g += 1
                    continue
                case .literal:
                    break
                }
            }
            // Mismatch: let the last `*` swallow one more character, or fail.
            guard starGlob >= 0 else { return false }
            g = starGlob + 1
            starText += 1
            t = starText
        }
        while g < glob.count, glob[g] == .anySequence { g += 1 }
        return g == glob.count
    }

    // MARK: - MATCHES

    /// MATCHES: the ICU regular expression `pattern` (NSRegularExpression's syntax) must match the
    /// whole string. `[c]` compiles it case-insensitively; `[d]` folds diacritics of both sides.
    /// An invalid pattern matches nothing.
    ///
    /// Complexity: that of ICU's backtracking matcher, which can be exponential for pathological
    /// patterns such as `(a*)*b`; patterns from untrusted sources deserve a length limit.
    static func matches(_ string: String, pattern: String, options: NSComparisonPredicate.Options) -> Bool {
        var diacritics: NSComparisonPredicate.Options = []
        if options.contains(.diacriticInsensitive) { diacritics.insert(.diacriticInsensitive) }
        let subject = fold(string, options: diacritics)
        let caseInsensitive = options.contains(.caseInsensitive) && !options.contains(.normalized)
        guard let regex = RegexCache.shared.regex(for: fold(pattern, options: diacritics), caseInsensitive: caseInsensitive)
        else { return false }
        let range = NSRange(location: 0, length: subject.utf16.count)
        switch regex {
        case .anchored(let expression):
            return expression.firstMatch(in: subject, options: [], range: range) != nil
        case .plain(let expression):
            guard let match = expression.firstMatch(in: subject, options: [.anchored], range: range) else { return false }
            return match.range.location == 0 && match.range.length == range.length
        }
    }
}
