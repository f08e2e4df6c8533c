// Code written the way Apple-platform Core Data code uses undo (issue 20): a context given an
// UndoManager, the Undo and Redo commands sent to the manager, action names, an edit sheet whose
// changes form one undoable group (or are undone on Cancel), registration switched off around
// changes that must not be undoable, and undo in a background context's perform blocks.
// Foundation, XCTest and CoreData are imported side by side with no type aliases.
import Foundation
import XCTest
import CoreData

final class Drawing: NSManagedObject {
    @Managed var name: String
    @Managed var shapes: Set<Shape>
}

final class Shape: NSManagedObject {
    @Managed var kind: String
    @Managed var x: Double
    @Managed var drawing: Drawing?
}

final class AppleUndoStyleTests: XCTestCase {
    private func makeContainer() throws -> NSPersistentContainer {
        let drawing = NSEntityDescription()
        drawing.name = "Drawing"
        drawing.managedObjectClassName = "Drawing"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false

        let shape = NSEntityDescription()
        shape.name = "Shape"
        shape.managedObjectClassName = "Shape"
        let kind = NSAttributeDescription()
        kind.name = "kind"
        kind.attributeType = .stringAttributeType
        kind.isOptional = false
        let x = NSAttributeDescription()
        x.name = "x"
        x.attributeType = .doubleAttributeType
        x.defaultValue = 0.0

        let shapes = NSRelationshipDescription()
        shapes.name = "shapes"
        shapes.maxCount = 0
        shapes.deleteRule = .cascadeDeleteRule
        let owner = NSRelationshipDescription()
        owner.name = "drawing"
        owner.maxCount = 1
        shapes.destinationEntity = shape
        shapes.inverseRelationship = owner
        owner.destinationEntity = drawing
        owner.inverseRelationship = shapes

        drawing.properties = [name, shapes]
        shape.properties = [kind, x, owner]
        let model = NSManagedObjectModel()
        model.entities = [drawing, shape]

        let container = NSPersistentContainer(name: "Sketches", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        NSManagedObject.registerSubclasses(Drawing.self, Shape.self)
        return container
    }

    /// A document's context with an undo manager; the Edit menu sends undo and redo to the
    /// manager, not to the context.
    func testEditMenuUndoAndRedo() throws {
        let container = try makeContainer()
        let context = container.viewContext
        context.undoManager = UndoManager()
        guard let undoManager = context.undoManager else { return XCTFail("no undo manager") }

        let drawing = Drawing(context: context)
        drawing.name = "Plan"
        try context.save()

        let circle = Shape(context: context)
        circle.kind = "circle"
        circle.x = 10
        circle.drawing = drawing
        undoManager.setActionName("Add Circle")
        XCTAssertTrue(undoManager.canUndo)
        XCTAssertEqual(undoManager.undoActionName, "Add Circle")

        circle.x = 25
        undoManager.setActionName("Move")

        undoManager.undo()
        XCTAssertEqual(circle.x, 10)
        XCTAssertEqual(undoManager.undoActionName, "Add Circle")
        XCTAssertEqual(undoManager.redoActionName, "Move")

        undoManager.undo()
        XCTAssertFalse(circle.isInserted)
        XCTAssertTrue(drawing.shapes.isEmpty)
        XCTAssertTrue(context.insertedObjects.isEmpty)

        undoManager.redo()
        XCTAssertTrue(circle.isInserted)
        XCTAssertEqual(drawing.shapes, [circle])
        XCTAssertTrue(circle.drawing === drawing)
        try context.save()

        let request = NSFetchRequest<Shape>(entityName: "Shape")
        let background = container.newBackgroundContext()
        let saved = try background.performAndWait { try background.fetch(request).map { ($0.kind, $0.x) } }
        XCTAssertEqual(saved.map(\.0), ["circle"])
        XCTAssertEqual(saved.map(\.1), [10])
    }

    /// An edit sheet: everything edited while it is open is one undo step, and Cancel undoes it.
    func testEditSheetGroupIsOneStepAndCancelUndoesIt() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let undoManager = UndoManager()
        context.undoManager = undoManager
        let drawing = Drawing(context: context)
        drawing.name = "Plan"
        let square = Shape(context: context)
        square.kind = "square"
        square.drawing = drawing
        try context.save()

        // Sheet opened, edits made, Done pressed.
        undoManager.beginUndoGrouping()
        drawing.name = "Floor Plan"
        square.x = 4
        let line = Shape(context: context)
        line.kind = "line"
        line.drawing = drawing
        undoManager.endUndoGrouping()
        undoManager.setActionName("Edit Drawing")

        // Sheet opened again, edits made, Cancel pressed.
        undoManager.beginUndoGrouping()
        context.delete(square)
        drawing.name = "Scrap"
        undoManager.endUndoGrouping()
        undoManager.undo()
        XCTAssertFalse(square.isDeleted)
        XCTAssertEqual(drawing.name, "Floor Plan")
        XCTAssertEqual(drawing.shapes.map(\.kind).sorted(), ["line", "square"])

        // Edit > Undo Edit Drawing.
        XCTAssertEqual(undoManager.undoActionName, "Edit Drawing")
        undoManager.undo()
        XCTAssertEqual(drawing.name, "Plan")
        XCTAssertEqual(square.x, 0)
        XCTAssertFalse(line.isInserted)
        XCTAssertEqual(drawing.shapes, [square])
    }

    /// Changes that must not be undoable: process what is pending, disable, change, process
    /// again, enable.
    func testChangesMadeWithRegistrationDisabled() throws {
        let container = try makeContainer()
        let context = container.viewContext
        context.undoManager = UndoManager()
        let drawing = Drawing(context: context)
        drawing.name = "Plan"
        try context.save()

        drawing.name = "Plan B"
        context.processPendingChanges()
        context.undoManager?.disableUndoRegistration()
        let marker = Shape(context: context)
        marker.kind = "marker"
        marker.drawing = drawing
        context.processPendingChanges()
        context.undoManager?.enableUndoRegistration()

        context.undo()
        XCTAssertEqual(drawing.name, "Plan")
        XCTAssertTrue(marker.isInserted)
        XCTAssertEqual(drawing.shapes, [marker])
    }

    /// The Undo button refreshes its state when the manager says it undid something.
    func testObservingUndoNotifications() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let undoManager = UndoManager()
        context.undoManager = undoManager
        final class UndoButton: @unchecked Sendable {
            var isEnabled = false
            var refreshes = 0
        }
        let button = UndoButton()
        let token = NotificationCenter.default.addObserver(forName: .NSUndoManagerDidUndoChange, object: undoManager, queue: nil) { _ in
            button.refreshes += 1
            button.isEnabled = undoManager.canUndo
        }
        defer { NotificationCenter.default.removeObserver(token) }

        let drawing = Drawing(context: context)
        drawing.name = "Plan"
        context.processPendingChanges()
        drawing.name = "Plan B"
        context.processPendingChanges()
        context.undo()
        XCTAssertEqual(button.refreshes, 1)
        XCTAssertTrue(button.isEnabled)
        context.undo()
        XCTAssertFalse(button.isEnabled)
        XCTAssertTrue(context.insertedObjects.isEmpty)
    }

    /// A background context: each perform block is one undo step.
    func testUndoInABackgroundContext() async throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        await context.perform { context.undoManager = UndoManager() }
        let objectID = try await context.perform {
            let drawing = Drawing(context: context)
            drawing.name = "Plan"
            try context.save()
            return drawing.objectID
        }
        await context.perform {
            let drawing = context.object(with: objectID) as? Drawing
            drawing?.name = "Renamed"
        }
        let names = await context.perform { () -> [String] in
            let drawing = context.object(with: objectID) as? Drawing
            context.undo()
            let afterOne = drawing?.name ?? "?"
            context.undo()
            return [afterOne, drawing?.isDeleted == true ? "deleted" : "kept"]
        }
        XCTAssertEqual(names, ["Plan", "deleted"])
    }
}
