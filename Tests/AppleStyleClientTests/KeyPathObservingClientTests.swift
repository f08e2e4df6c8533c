// Code written the way Apple-platform Core Data code observes a key path through a relationship
// (issue 20): a message cell that shows its sender's name with
// addObserver(_:forKeyPath: "sender.displayName") and observeValue(forKeyPath:of:change:context:),
// the block-based observe(\.sender?.displayName), and a chat list observing "messages.text"
// through a to-many relationship. Foundation, XCTest and CoreData are imported side by side.
import Foundation
import XCTest
import CoreData

final class ChatContact: NSManagedObject {
    @Managed var displayName: String?
    @Managed var messages: Set<ChatMessage>
}

final class ChatMessage: NSManagedObject {
    @Managed var text: String?
    @Managed var sender: ChatContact?
}

/// A table view cell that keeps the sender's name in step with the model, as a UIKit cell
/// does with key-value observing of a key path.
final class MessageCell: NSObject {
    private(set) var senderLabel = ""
    private(set) var changes: [String] = []
    private let observationContext = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

    deinit { observationContext.deallocate() }

    func configure(with message: ChatMessage) {
        message.addObserver(self, forKeyPath: "sender.displayName", options: [.initial, .old, .new], context: observationContext)
    }

    func prepareForReuse(from message: ChatMessage) {
        message.removeObserver(self, forKeyPath: "sender.displayName", context: observationContext)
    }

    #if canImport(ObjectiveC)
    override func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
        handle(keyPath, object, change, context)
    }
    #else
    func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
        handle(keyPath, object, change, context)
    }
    #endif

    private func handle(_ keyPath: String?, _ object: Any?, _ change: [NSKeyValueChangeKey: Any]?, _ context: UnsafeMutableRawPointer?) {
        guard context == observationContext, keyPath == "sender.displayName", object is ChatMessage else { return }
        senderLabel = change?[.newKey] as? String ?? "Unknown"
        changes.append(senderLabel)
    }
}

#if !canImport(ObjectiveC)
extension MessageCell: NSKeyValueObserving {}
#endif

final class KeyPathObservingClientTests: XCTestCase {
    private func makeContainer() throws -> NSPersistentContainer {
        let contact = NSEntityDescription()
        contact.name = "ChatContact"
        contact.managedObjectClassName = "ChatContact"
        let displayName = NSAttributeDescription()
        displayName.name = "displayName"
        displayName.attributeType = .stringAttributeType

        let message = NSEntityDescription()
        message.name = "ChatMessage"
        message.managedObjectClassName = "ChatMessage"
        let text = NSAttributeDescription()
        text.name = "text"
        text.attributeType = .stringAttributeType

        let messages = NSRelationshipDescription()
        messages.name = "messages"
        messages.maxCount = 0
        let sender = NSRelationshipDescription()
        sender.name = "sender"
        sender.maxCount = 1
        messages.destinationEntity = message
        messages.inverseRelationship = sender
        sender.destinationEntity = contact
        sender.inverseRelationship = messages

        contact.properties = [displayName, messages]
        message.properties = [text, sender]
        let model = NSManagedObjectModel()
        model.entities = [contact, message]

        let container = NSPersistentContainer(name: "Chat", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        NSManagedObject.registerSubclasses(ChatContact.self, ChatMessage.self)
        return container
    }

    func testACellObservesTheSendersNameThroughTheRelationship() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let ada = ChatContact(context: context)
        ada.displayName = "Ada"
        let grace = ChatContact(context: context)
        grace.displayName = "Grace"
        let message = ChatMessage(context: context)
        message.text = "Hello"
        message.sender = ada
        try context.save()

        let cell = MessageCell()
        cell.configure(with: message)
        XCTAssertEqual(cell.senderLabel, "Ada")
        ada.displayName = "Ada Lovelace"
        XCTAssertEqual(cell.senderLabel, "Ada Lovelace")
        message.sender = grace
        XCTAssertEqual(cell.senderLabel, "Grace")
        ada.displayName = "Countess"
        XCTAssertEqual(cell.senderLabel, "Grace", "the former sender is no longer observed")

        // Another context renames the sender; the merge reaches the cell.
        try context.save()
        let background = container.newBackgroundContext()
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: background, queue: nil) { note in
            nonisolated(unsafe) let note = note
            context.performAndWait { context.mergeChanges(fromContextDidSave: note) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try background.performAndWait {
            let other = try background.existingObject(with: grace.objectID) as? ChatContact
            other?.displayName = "Grace Hopper"
            try background.save()
        }
        XCTAssertEqual(cell.senderLabel, "Grace Hopper")

        message.sender = nil
        XCTAssertEqual(cell.senderLabel, "Unknown", "no sender: the new value is NSNull")
        cell.prepareForReuse(from: message)
        message.sender = ada
        XCTAssertEqual(cell.changes, ["Ada", "Ada Lovelace", "Grace", "Grace Hopper", "Unknown"])
    }

    func testBlockBasedObserveOfAKeyPathThroughAToOneRelationship() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let ada = ChatContact(context: context)
        ada.displayName = "Ada"
        let message = ChatMessage(context: context)
        var names: [String?] = []
        let observation = message.observe(\.sender?.displayName, options: [.initial, .new]) { _, change in
            names.append(change.newValue ?? nil)
        }
        message.sender = ada
        ada.displayName = "Ada L."
        observation.invalidate()
        ada.displayName = "Not heard"
        XCTAssertEqual(names, [nil, "Ada", "Ada L."])
    }

    func testAListObservesEveryMessagesTextThroughAToManyRelationship() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let ada = ChatContact(context: context)
        ada.displayName = "Ada"
        let list = MessageTextList()
        ada.addObserver(list, forKeyPath: "messages.text", options: [.new], context: nil)
        let hello = ChatMessage(context: context)
        hello.text = "Hello"
        hello.sender = ada
        hello.text = "Hello!"
        let bye = ChatMessage(context: context)
        bye.text = "Bye"
        bye.sender = ada
        ada.removeObserver(list, forKeyPath: "messages.text")
        bye.text = "Not heard"
        XCTAssertEqual(list.snapshots, [["Hello"], ["Hello!"], ["Hello!", "Bye"]])
    }
}

/// The texts of a contact's messages, as a list view observing `messages.text` keeps them.
final class MessageTextList: NSObject {
    private(set) var snapshots: [Set<String>] = []

    #if canImport(ObjectiveC)
    override func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
        record(change)
    }
    #else
    func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
        record(change)
    }
    #endif

    private func record(_ change: [NSKeyValueChangeKey: Any]?) {
        // Through a to-many relationship the value at the path is the set of the members' values.
        let texts = (change?[.newKey] as? NSSet)?.allObjects.compactMap { $0 as? String } ?? []
        snapshots.append(Set(texts))
    }
}

#if !canImport(ObjectiveC)
extension MessageTextList: NSKeyValueObserving {}
#endif
