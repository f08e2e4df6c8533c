import CoreData
import CoreDataPostgreSQL
import Foundation
import Logging
import PostgresNIO

/// `--postgres URL`: the issue 17 workloads on a PostgreSQL server, our store through managed
/// objects (``NSPostgreSQLStoreType``) beside raw `postgres-nio` SQL doing the same work on the
/// same server, each in a schema of its own. Prints its own table: both sides pay the same network
/// round trips, so the ratio is what the store adds.
struct PostgreSQLBench {
    let url: URL
    let objects: Int
    let users: [User]

    struct Row {
        var name: String
        var operations: Int
        var unit: String
        var ours: Double
        var raw: Double
    }

    private static func schemaURL(_ base: URL, _ schema: String) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "schema" } + [URLQueryItem(name: "schema", value: schema)]
        return components.url ?? base
    }

    func run() async throws -> [Row] {
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let ourURL = Self.schemaURL(url, "bench_ours_\(suffix)")
        let rawSchema = "bench_raw_\(suffix)"
        let model = UserModel.make(indexOnAge: true)
        let container = NSPersistentContainer(name: "PostgresBench", managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: ourURL)
        description.type = NSPostgreSQLStoreType
        container.persistentStoreDescriptions = [description]
        var failure: Error?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        defer { try? container.persistentStoreCoordinator.destroyPersistentStore(at: ourURL, ofType: NSPostgreSQLStoreType) }

        let configuration = try PostgreSQLStoreConfigurationReader.clientConfiguration(url)
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "bench"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let raw = RawPostgres(client: client, schema: rawSchema)
            try await raw.create()
            var rows: [Row] = []

            // Bulk insert: saves of 10,000 objects; raw: one transaction of multi-row INSERTs per 10,000.
            let ours = try measureManaged { try insertManaged(container) }
            let theirs = try await measureAsync { try await raw.insert(users) }
            rows.append(Row(name: "bulk insert (saves of 10,000)", operations: objects, unit: "rows", ours: ours, raw: theirs))

            // The query, 20 times: by name (string order: sorted in the process) and by age (in the server).
            let queries = 20
            let byName = try measureManaged { try query(container, sortedBy: "name", times: queries) }
            let rawByName = try await measureAsync { try await raw.query(sortedBy: "name", times: queries) }
            rows.append(Row(name: "age > 50 by name, limit 100", operations: queries, unit: "queries", ours: byName, raw: rawByName))
            let byAge = try measureManaged { try query(container, sortedBy: "age", times: queries) }
            let rawByAge = try await measureAsync { try await raw.query(sortedBy: "age", times: queries) }
            rows.append(Row(name: "age > 50 by age, limit 100", operations: queries, unit: "queries", ours: byAge, raw: rawByAge))

            // Lookups by key: 1,000 faults one by one; raw: 1,000 SELECTs by primary key.
            let lookups = min(1_000, objects)
            let faults = try measureManaged { try lookUp(container, count: lookups) }
            let rawLookups = try await measureAsync { try await raw.lookUp(count: lookups, objects: objects) }
            rows.append(Row(name: "lookups by key", operations: lookups, unit: "lookups", ours: faults, raw: rawLookups))

            // Single saves: 1,000 saves of one new object; raw: 1,000 INSERTs in autocommit.
            let saves = min(1_000, objects)
            let single = try measureManaged { try singleSaves(container, count: saves) }
            let rawSingle = try await measureAsync { try await raw.singleInserts(count: saves, first: objects) }
            rows.append(Row(name: "single saves", operations: saves, unit: "saves", ours: single, raw: rawSingle))

            try await raw.drop()
            return rows
        }
    }

    private func measureManaged(_ body: () throws -> Void) throws -> Double { try measure(body) }

    private func measureAsync(_ body: () async throws -> Void) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    private func insertManaged(_ container: NSPersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            guard let entity = container.managedObjectModel.entitiesByName["User"] else { return }
            var start = 0
            while start < users.count {
                for user in users[start..<min(start + 10_000, users.count)] {
                    let object = NSManagedObject(entity: entity, insertInto: context)
                    object.setValue(user.name, forKey: "name")
                    object.setValue(user.email, forKey: "email")
                    object.setValue(user.age, forKey: "age")
                    object.setValue(user.score, forKey: "score")
                    object.setValue(Date(timeIntervalSinceReferenceDate: user.created), forKey: "created")
                }
                try context.save()
                context.reset()
                start += 10_000
            }
        }
    }

    private func query(_ container: NSPersistentContainer, sortedBy key: String, times: Int) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for _ in 0..<times {
                let request = NSFetchRequest<NSManagedObject>(entityName: "User")
                request.predicate = NSPredicate(format: "age > 50")
                request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
                request.fetchLimit = 100
                let found = try context.fetch(request)
                precondition(found.count == min(100, users.filter { $0.age > 50 }.count), "the query found \(found.count) users")
                context.reset()
            }
        }
    }

    private func lookUp(_ container: NSPersistentContainer, count: Int) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObjectID>(entityName: "User")
            request.resultType = .managedObjectIDResultType
            request.fetchLimit = count
            let ids = try context.fetch(request)
            context.reset()
            for id in ids {
                let object = try context.existingObject(with: id)
                _ = object.value(forKey: "name")
            }
        }
    }

    private func singleSaves(_ container: NSPersistentContainer, count: Int) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            guard let entity = container.managedObjectModel.entitiesByName["User"] else { return }
            for index in 0..<count {
                let user = Users.make(objects + index)
                let object = NSManagedObject(entity: entity, insertInto: context)
                object.setValue(user.name, forKey: "name")
                object.setValue(user.age, forKey: "age")
                try context.save()
            }
        }
    }
}

/// The same work in plain SQL with `postgres-nio`.
struct RawPostgres: Sendable {
    let client: PostgresClient
    let schema: String

    func create() async throws {
        try await client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"))
        try await client.query(PostgresQuery(unsafeSQL: "CREATE TABLE \(schema).users (id bigint PRIMARY KEY, name text, email text, age bigint, score double precision, created timestamptz)"))
        try await client.query(PostgresQuery(unsafeSQL: "CREATE INDEX ON \(schema).users (age)"))
    }

    func drop() async throws {
        try await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"))
    }

    func insert(_ users: [User]) async throws {
        var start = 0
        while start < users.count {
            let end = min(start + 10_000, users.count)
            try await client.withTransaction(logger: Logger(label: "bench")) { connection in
                var chunk = start
                while chunk < end {
                    let last = min(chunk + 1_000, end)
                    var binds = PostgresBindings()
                    var tuples: [String] = []
                    for index in chunk..<last {
                        let user = users[index]
                        let base = (index - chunk) * 6
                        tuples.append("($\(base + 1), $\(base + 2), $\(base + 3), $\(base + 4), $\(base + 5), $\(base + 6))")
                        binds.append(Int64(index + 1))
                        binds.append(user.name)
                        binds.append(user.email)
                        binds.append(user.age)
                        binds.append(user.score)
                        binds.append(Date(timeIntervalSinceReferenceDate: user.created))
                    }
                    try await connection.query(
                        PostgresQuery(unsafeSQL: "INSERT INTO \(schema).users VALUES \(tuples.joined(separator: ", "))", binds: binds),
                        logger: Logger(label: "bench"))
                    chunk = last
                }
            }
            start = end
        }
    }

    func query(sortedBy key: String, times: Int) async throws {
        for _ in 0..<times {
            var count = 0
            for try await _ in try await client.query(PostgresQuery(unsafeSQL: "SELECT id, name, email, age, score, created FROM \(schema).users WHERE age > 50 ORDER BY \(key) LIMIT 100")) {
                count += 1
            }
            precondition(count > 0)
        }
    }

    func lookUp(count: Int, objects: Int) async throws {
        var random = SeededRandom(seed: 7)
        for _ in 0..<count {
            var binds = PostgresBindings()
            binds.append(Int64.random(in: 1...Int64(objects), using: &random))
            for try await _ in try await client.query(PostgresQuery(unsafeSQL: "SELECT id, name, email, age, score, created FROM \(schema).users WHERE id = $1", binds: binds)) {}
        }
    }

    func singleInserts(count: Int, first: Int) async throws {
        for index in 0..<count {
            let user = Users.make(first + index)
            var binds = PostgresBindings()
            binds.append(Int64(first + index + 1))
            binds.append(user.name)
            binds.append(user.age)
            try await client.query(PostgresQuery(unsafeSQL: "INSERT INTO \(schema).users (id, name, age) VALUES ($1, $2, $3)", binds: binds))
        }
    }
}

/// A `postgres://` URL as `PostgresClient`'s configuration (TCP, no TLS: a benchmark server).
enum PostgreSQLStoreConfigurationReader {
    static func clientConfiguration(_ url: URL) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let user = components.user,
              let host = components.host, !components.path.isEmpty else {
            throw ValidationFailure(message: "--postgres needs postgres://user@host:port/database")
        }
        return PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: String(components.path.dropFirst()), tls: .disable)
    }
}

struct ValidationFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

extension PostgreSQLBench {
    /// The table: each workload's time on both sides, and raw time / ours (above 1: ours is faster).
    static func table(_ rows: [Row], objects: Int) -> String {
        var lines = ["PostgreSQL, \(objects) objects: our store through managed objects vs raw postgres-nio", ""]
        lines.append("| workload | ours | raw postgres-nio | raw / ours |")
        lines.append("| --- | ---: | ---: | ---: |")
        for row in rows {
            let ours = Double(row.operations) / row.ours
            let raw = Double(row.operations) / row.raw
            lines.append("| \(row.name) | \(Int(ours)) \(row.unit)/s | \(Int(raw)) \(row.unit)/s | \(String(format: "%.2f", row.raw / row.ours))× |")
        }
        return lines.joined(separator: "\n")
    }
}
