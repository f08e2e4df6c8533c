import Foundation

extension URL {
    /// The URL as messages may print it: a password it carries (a server store's
    /// `postgres://user:password@host/…`) replaced by `***`.
    public var passwordRedacted: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return "<unreadable URL>" }
        if components.password != nil { components.password = "***" }
        return components.string ?? "<unreadable URL>"
    }
}
