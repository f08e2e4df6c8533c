// Fetch code written the way Apple-platform Core Data code is written: aggregate dictionaries with
// NSExpressionDescription, asynchronous fetches, typed fetches from #Predicate and SortDescriptor.
// Foundation, XCTest and CoreData are imported side by side with no type aliases: what compiles
// here compiles in a file shared with an iOS or macOS app (where @Managed reads @NSManaged).
import Foundation
import XCTest
import CoreData

final class Employee: NSManagedObject {
    @Managed var name: String
    @Managed var salary: Int32
    @Managed var team: String?
}

final class AppleFetchStyleTests: XCTestCase {
    private func makeContainer() throws -> NSPersistentContainer {
        let employee = NSEntityDescription()
        employee.name = "Employee"
        employee.managedObjectClassName = "Employee"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false
        let salary = NSAttributeDescription()
        salary.name = "salary"
        salary.attributeType = .integer32AttributeType
        salary.defaultValue = Int32(0)
        let team = NSAttributeDescription()
        team.name = "team"
        team.attributeType = .stringAttributeType
        employee.properties = [name, salary, team]
        let model = NSManagedObjectModel()
        model.entities = [employee]

        let container = NSPersistentContainer(name: "Staff", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        NSManagedObject.registerSubclasses(Employee.self)
        let context = container.viewContext
        for (person, pay, group) in [("Ada", 120, "core"), ("Alan", 100, "core"), ("Grace", 130, "tools"), ("Linus", 90, nil)] {
            let row = Employee(context: context)
            row.name = person
            row.salary = Int32(pay)
            row.team = group
        }
        try context.save()
        return container
    }

    func testSumPerGroupWithExpressionDescriptions() throws {
        let container = try makeContainer()
        let keyPathExpression = NSExpression(forKeyPath: "salary")
        let sumExpression = NSExpression(forFunction: "sum:", arguments: [keyPathExpression])
        let sumDescription = NSExpressionDescription()
        sumDescription.name = "total"
        sumDescription.expression = sumExpression
        sumDescription.expressionResultType = .integer64AttributeType

        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["team", sumDescription]
        request.propertiesToGroupBy = ["team"]
        request.predicate = NSPredicate(format: "team != nil")
        request.sortDescriptors = [NSSortDescriptor(key: "team", ascending: true)]
        let results = try container.viewContext.fetch(request) as? [[String: Any]] ?? []
        XCTAssertEqual(results.map { $0["team"] as? String }, ["core", "tools"])
        XCTAssertEqual(results.map { $0["total"] as? Int64 }, [220, 130])
    }

    func testAsynchronousFetchRequest() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let finished = expectation(description: "asynchronous fetch")
        let fetchRequest = NSFetchRequest<Employee>(entityName: "Employee")
        fetchRequest.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let asynchronousFetchRequest = NSAsynchronousFetchRequest(fetchRequest: fetchRequest) { asynchronousFetchResult in
            guard let employees = asynchronousFetchResult.finalResult else { return }
            XCTAssertEqual(employees.map(\.name), ["Ada", "Alan", "Grace", "Linus"])
            finished.fulfill()
        }
        try context.performAndWait {
            _ = try context.execute(asynchronousFetchRequest)
        }
        wait(for: [finished], timeout: 30)
    }

    func testTypedPredicateAndSortDescriptor() throws {
        let container = try makeContainer()
        let request = NSFetchRequest<Employee>(entityName: "Employee")
        request.predicate = NSPredicate(#Predicate<Employee> { $0.salary >= 100 && $0.team != nil })
        request.sortDescriptors = [NSSortDescriptor(SortDescriptor(\Employee.salary, order: .reverse))]
        XCTAssertEqual(try container.viewContext.fetch(request).map(\.name), ["Grace", "Ada", "Alan"])
    }
}
