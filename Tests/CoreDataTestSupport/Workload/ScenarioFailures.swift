import Foundation

/// Failures of many scenarios, reported together (the first few in full) so a systematic bug
/// does not print thousands of lines.
package final class ScenarioFailures {
    package init() {}

    package private(set) var messages: [String] = []

    package func record(_ message: String) { messages.append(message) }

    package var summary: String {
        messages.isEmpty ? "" : "\(messages.count) scenarios failed; the first:\n" + messages.prefix(12).joined(separator: "\n")
    }
}
