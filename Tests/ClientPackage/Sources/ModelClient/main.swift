// A separate package's view of the library: only `import CoreData`, as an app would write it.
// Loads every model given on the command line and prints a line per model; exits 1 on failure.
import CoreData

var failures = 0
for path in CommandLine.arguments.dropFirst() {
    guard let model = NSManagedObjectModel(contentsOf: URL(fileURLWithPath: path)) else {
        print("FAILED to load \(path)")
        failures += 1
        continue
    }
    let names = model.entities.compactMap(\.name).sorted()
    print("loaded \(URL(fileURLWithPath: path).lastPathComponent): \(names.count) entities (\(names.joined(separator: ", ")))")
}
if failures > 0 || CommandLine.arguments.count < 2 {
    exit(1)
}
