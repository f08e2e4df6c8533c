// The lexer's literal scanners: quoted strings with their escapes, numbers in four radixes, and
// `%` format specifiers.

extension Lexer {
    // MARK: - Strings

    mutating func scanString(quote: Unicode.Scalar) -> TokenKind {
        index += 1
        var text = String.UnicodeScalarView()
        while let scalar = peek() {
            index += 1
            switch scalar {
            case quote:
                return .string(String(text))
            case "%":
                // Inside quotes, `%%` stands for one `%` (as in a printf format); a lone `%` is itself.
                // A run of n signs therefore means n/2 + n%2 signs; the printer writes the inverse.
                var run = 1
                while peek() == "%" {
                    run += 1
                    index += 1
                }
                for _ in 0..<(run / 2 + run % 2) { text.append("%") }
            case "\\":
                guard let escaped = peek() else { return .error("unterminated string literal") }
                index += 1
                switch escaped {
                case "n": text.append("\n")
                case "t": text.append("\t")
                case "r": text.append("\r")
                case "0": text.append("\0")
                case "\"", "'", "\\": text.append(escaped)
                case "u":
                    switch scanUnicodeEscape() {
                    case .success(let value): text.append(value)
                    case .failure(let failure): return .error(failure.message)
                    }
                default:
                    // Unknown escapes stay as written, so regular expressions such as '\d+' can be
                    // written without doubling the backslash.
                    text.append("\\")
                    text.append(escaped)
                }
            default:
                text.append(scalar)
            }
        }
        return .error("unterminated string literal")
    }

    struct EscapeError: Error { var message: String }

    /// After `\u`: four hex digits, or a UTF-16 surrogate pair written as two `\u` escapes.
    mutating func scanUnicodeEscape() -> Result<Unicode.Scalar, EscapeError> {
        guard let high = scanHex4() else {
            return .failure(EscapeError(message: "invalid \\u escape: expected 4 hexadecimal digits"))
        }
        if (0xD800...0xDBFF).contains(high) {
            guard peek() == "\\", peek(1) == "u" else {
                return .failure(EscapeError(message: "invalid \\u escape: unpaired surrogate"))
            }
            index += 2
            guard let low = scanHex4(), (0xDC00...0xDFFF).contains(low) else {
                return .failure(EscapeError(message: "invalid \\u escape: unpaired surrogate"))
            }
            let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else {
                return .failure(EscapeError(message: "invalid \\u escape: not a Unicode scalar"))
            }
            return .success(scalar)
        }
        guard let scalar = Unicode.Scalar(high) else {
            return .failure(EscapeError(message: "invalid \\u escape: unpaired surrogate"))
        }
        return .success(scalar)
    }

    mutating func scanHex4() -> UInt32? {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let scalar = peek(), let digit = Lexer.digitValue(scalar, radix: 16) else { return nil }
            value = value * 16 + digit  // Safe: at most 0xFFFF after four digits.
            index += 1
        }
        return value
    }

    static func digitValue(_ scalar: Unicode.Scalar, radix: UInt32) -> UInt32? {
        let value: UInt32
        switch scalar {
        case "0"..."9": value = scalar.value - 48
        case "a"..."z": value = scalar.value - 97 + 10
        case "A"..."Z": value = scalar.value - 65 + 10
        default: return nil
        }
        return value < radix ? value : nil
    }

    // MARK: - Numbers

    mutating func scanNumber() -> TokenKind {
        let start = index
        if peek() == "0", let marker = peek(1) {
            let radix: UInt32?
            switch marker {
            case "x", "X": radix = 16
            case "o", "O": radix = 8
            case "b", "B": radix = 2
            default: radix = nil
            }
            if let radix {
                index += 2
                return scanRadixInteger(radix: radix, start: start)
            }
        }
        var text = ""
        scanDigits(into: &text)
        var isInteger = true
        if peek() == ".", let after = peek(1), ("0"..."9").contains(after) {
            index += 1
            text.append(".")
            scanDigits(into: &text)
            isInteger = false
        }
        if peek() == "e" || peek() == "E" {
            // An exponent only when digits follow; otherwise the `e` starts the next token.
            var ahead = 1
            if peek(1) == "+" || peek(1) == "-" { ahead = 2 }
            if let digit = peek(ahead), ("0"..."9").contains(digit) {
                text.append("e")
                if ahead == 2, let sign = peek(1) { text.unicodeScalars.append(sign) }
                index += ahead
                scanDigits(into: &text)
                isInteger = false
            }
        }
        if isInteger, let value = UInt64(text) {
            return .number(value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value))
        }
        // Too large for UInt64, or written with a fraction or an exponent: a Double, which may be
        // ±infinity for huge exponents (the printer writes those back as CAST("inf", "NSNumber")).
        guard let value = Double(text) else { return .error("invalid number '\(text)'") }
        return .number(.double(value))
    }

    mutating func scanDigits(into text: inout String) {
        while let scalar = peek(), ("0"..."9").contains(scalar) {
            text.unicodeScalars.append(scalar)
            index += 1
        }
    }

    mutating func scanRadixInteger(radix: UInt32, start: Int) -> TokenKind {
        var value: UInt64 = 0
        var digits = 0
        while let scalar = peek(), let digit = Lexer.digitValue(scalar, radix: radix) {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: UInt64(radix))
            let (sum, overflow2) = shifted.addingReportingOverflow(UInt64(digit))
            if overflow1 || overflow2 { return .error("integer literal does not fit in 64 bits") }
            value = sum
            digits += 1
            index += 1
        }
        guard digits > 0 else { return .error("expected digits after '0\(radix == 16 ? "x" : radix == 8 ? "o" : "b")'") }
        return .number(value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value))
    }

    // MARK: - Format specifiers

    mutating func scanFormatSpecifier() -> TokenKind {
        let start = index
        index += 1
        if peek() == "%" {
            index += 1
            return .error("'%%' is only meaningful inside a quoted string")
        }
        var position: Int?
        if peek() == "0", peek(1) == "$" { return .error("argument positions start at 1, as in %1$@") }
        if let first = peek(), ("1"..."9").contains(first) {
            var value = 0
            while let scalar = peek(), let digit = Lexer.digitValue(scalar, radix: 10) {
                let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = shifted.addingReportingOverflow(Int(digit))
                if overflow1 || overflow2 || sum > 1_000_000 { return .error("argument position is too large") }
                value = sum
                index += 1
            }
            guard peek() == "$" else { return .error("unsupported format specifier (field widths are not supported)") }
            index += 1
            position = value - 1  // Safe: value >= 1, the first digit is 1...9.
        }
        // Length modifiers (h, hh, l, ll, q, z, t, j, L) change nothing here: arguments are Swift values.
        while let scalar = peek(), "hlqztjL".unicodeScalars.contains(scalar) { index += 1 }
        guard let conversionScalar = peek() else { return .error("incomplete format specifier") }
        index += 1
        let conversion: FormatSpecifier.Conversion
        switch conversionScalar {
        case "@": conversion = .object
        case "K": conversion = .keyPath
        case "d", "i", "D", "u", "U", "x", "X", "o", "O": conversion = .integer
        case "f", "F", "e", "E", "g", "G", "a", "A": conversion = .double
        case "s", "S", "c", "C": conversion = .string
        default:
            return .error("unsupported format specifier '%\(Lexer.printable(conversionScalar))'")
        }
        let text = String(String.UnicodeScalarView(scalars[start..<index]))
        return .argument(FormatSpecifier(position: position, conversion: conversion, text: text))
    }
}
