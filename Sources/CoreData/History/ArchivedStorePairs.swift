import Foundation

/// A value per store identifier under `NSSecureCoding`: the form the history and
/// query-generation tokens take. Archived with integers only (a count; each identifier and
/// string as its UTF-8 length and its bytes eight to an integer; each number as an integer),
/// because decoding an object of a class other than the one asked for stops the process in
/// swift-corelibs-foundation, and a token may come from a file or another process.
enum ArchivedStorePairs {
    /// The most stores a decoded token may name.
    static let maximumStores = 4_096

    enum Value {
        case number(Int64)
        case text(String)
    }

    static func encode(_ pairs: [String: Value], with coder: NSCoder) {
        let sorted = pairs.sorted { $0.key < $1.key }
        coder.encode(Int64(sorted.count), forKey: "count")
        for (index, (store, value)) in sorted.enumerated() {
            encode(text: store, forKey: "store.\(index)", with: coder)
            switch value {
            case .number(let number): coder.encode(number, forKey: "number.\(index)")
            case .text(let text): encode(text: text, forKey: "text.\(index)", with: coder)
            }
        }
    }

    /// The pairs, or `nil` for an archive that lacks them or holds something else.
    static func decode(numbers: Bool, from coder: NSCoder) -> [String: Value]? {
        let count = coder.decodeInt64(forKey: "count")
        guard count >= 0, count <= Int64(maximumStores) else { return nil }
        var pairs: [String: Value] = [:]
        for index in 0..<Int(count) {
            guard let store = text(forKey: "store.\(index)", from: coder) else { return nil }
            if numbers {
                guard coder.containsValue(forKey: "number.\(index)") else { return nil }
                pairs[store] = .number(coder.decodeInt64(forKey: "number.\(index)"))
            } else {
                guard let text = text(forKey: "text.\(index)", from: coder) else { return nil }
                pairs[store] = .text(text)
            }
        }
        return pairs
    }

    /// The longest identifier or generation name a decoded token may hold, in UTF-8 bytes.
    static let maximumTextBytes = 1_024

    private static func encode(text: String, forKey key: String, with coder: NSCoder) {
        let bytes = Array(text.utf8)
        coder.encode(Int64(bytes.count), forKey: key)
        for chunk in stride(from: 0, to: bytes.count, by: 8) {
            var word: UInt64 = 0
            for (shift, byte) in bytes[chunk..<min(chunk + 8, bytes.count)].enumerated() { word |= UInt64(byte) << (8 * UInt64(shift)) }
            coder.encode(Int64(bitPattern: word), forKey: "\(key).\(chunk / 8)")
        }
    }

    private static func text(forKey key: String, from coder: NSCoder) -> String? {
        guard coder.containsValue(forKey: key) else { return nil }
        let length = coder.decodeInt64(forKey: key)
        guard length >= 0, length <= Int64(maximumTextBytes) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(length))
        for chunk in 0..<((Int(length) + 7) / 8) {
            let word = UInt64(bitPattern: coder.decodeInt64(forKey: "\(key).\(chunk)"))
            for shift in 0..<8 where bytes.count < Int(length) { bytes.append(UInt8(truncatingIfNeeded: word >> (8 * UInt64(shift)))) }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
