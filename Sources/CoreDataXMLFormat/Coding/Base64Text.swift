import Foundation

/// Base64 as the XML store writes it (`Formats/xml-store.md §6`): standard alphabet with padding,
/// no line breaks when written; ASCII whitespace anywhere is ignored when read (Apple breaks lines).
enum Base64Text {
    static func encode(_ data: Data) -> String { data.base64EncodedString() }

    /// The bytes, or `nil` when the text (without whitespace) is not base64.
    static func decode(_ text: String) -> Data? {
        // Only the alphabet, padding and whitespace may appear; checked in C (strspn) because the
        // texts are large (whole binary attributes) and a Swift loop is slow in debug builds.
        let utf8Count = text.utf8.count
        let valid = text.withCString { strspn($0, alphabetAndWhitespace) == utf8Count }
        guard valid else { return nil }
        return Data(base64Encoded: Data(text.utf8), options: .ignoreUnknownCharacters)
    }

    private static let alphabetAndWhitespace = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \n\r\t"
}

/// Property-list dates (`Formats/xml-store.md §4`): ISO 8601 in UTC, `2026-11-23T12:00:00Z`.
enum PlistDate {
    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// The date, or `nil` unless `text` is a date in exactly the form ``format(_:)`` writes: the
    /// parser also takes forms it writes back differently (a year before 1, a day past the
    /// month's end), and a store must read back as it was written.
    static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: text), formatter.string(from: date) == text else { return nil }
        return date
    }
}
