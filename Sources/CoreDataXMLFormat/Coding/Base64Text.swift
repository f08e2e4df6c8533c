import Foundation

/// Base64 as the XML store writes it (`Formats/xml-store.md §6`): standard alphabet with padding,
/// no line breaks when written; ASCII whitespace anywhere is ignored when read (Apple breaks lines).
enum Base64Text {
    static func encode(_ data: Data) -> String { data.base64EncodedString() }

    /// The bytes, or `nil` when the text (without whitespace) is not base64.
    static func decode(_ text: String) -> Data? {
        var compact = text
        if text.utf8.contains(where: { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            compact = String(String.UnicodeScalarView(text.unicodeScalars.filter { !($0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t") }))
        }
        return Data(base64Encoded: compact)
    }
}

/// Property-list dates (`Formats/xml-store.md §4`): ISO 8601 in UTC, `2026-11-23T12:00:00Z`.
enum PlistDate {
    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
