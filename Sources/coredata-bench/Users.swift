import Foundation

/// One benchmark row, shaped as the issue describes: `User(name, email, age, score, created)`.
struct User: Sendable {
    var name: String
    var email: String
    var age: Int64
    var score: Double
    var created: Double
}

/// The data set, generated deterministically so every side and every run sees the same rows.
enum Users {
    /// Row `i` (0-based). Names are pseudo-random so that sorting by name is real work.
    static func make(_ i: Int) -> User {
        var state = UInt64(truncatingIfNeeded: i) &+ 0x9E37_79B9_7F4A_7C15
        var name = ""
        name.reserveCapacity(12)
        for _ in 0..<12 {
            state = splitmix(state)
            name.unicodeScalars.append(Unicode.Scalar(UInt8(97 + state % 26)))
        }
        return User(
            name: name,
            email: "user\(i)@example.com",
            age: Int64((i &* 7919) % 90),
            score: Double(i % 1000) / 10,
            created: 700_000_000 + Double(i)
        )
    }

    static func make(count: Int) -> [User] { (0..<count).map(make) }

    private static func splitmix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A seeded random source, so lookups hit the same IDs on both sides.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
