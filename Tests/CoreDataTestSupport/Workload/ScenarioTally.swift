/// The one line per suite that CI adds up (`.ci/test.sh`): `crash scenarios: SUITE N`. Each
/// suite also asserts its own minimum, so a suite that quietly shrinks fails.
package enum ScenarioTally {
    package static func report(_ suite: String, _ count: Int) {
        print("crash scenarios: \(suite) \(count)")
    }
}
