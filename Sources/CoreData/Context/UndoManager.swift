import Foundation

extension NSNotification.Name {
    /// Posted by an ``UndoManager`` when it opens a group (except the group of a top-level undo or
    /// redo), when it closes one, before it undoes or redoes, and when ``UndoManager/canRedo`` is
    /// read. A context whose ``NSManagedObjectContext/undoManager`` posts it registers its pending
    /// changes then, as Apple's does.
    public static let NSUndoManagerCheckpoint = NSNotification.Name("NSUndoManagerCheckpointNotification")
    /// Posted before an ``UndoManager`` undoes a group.
    public static let NSUndoManagerWillUndoChange = NSNotification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted after an ``UndoManager`` undid a group.
    public static let NSUndoManagerDidUndoChange = NSNotification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted before an ``UndoManager`` redoes a group.
    public static let NSUndoManagerWillRedoChange = NSNotification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted after an ``UndoManager`` redid a group.
    public static let NSUndoManagerDidRedoChange = NSNotification.Name("NSUndoManagerDidRedoChangeNotification")
    /// Posted after an ``UndoManager`` opened a group.
    public static let NSUndoManagerDidOpenUndoGroup = NSNotification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted before an ``UndoManager`` closes a group.
    public static let NSUndoManagerWillCloseUndoGroup = NSNotification.Name("NSUndoManagerWillCloseUndoGroupNotification")
    /// Posted after an ``UndoManager`` closed a group.
    public static let NSUndoManagerDidCloseUndoGroup = NSNotification.Name("NSUndoManagerDidCloseUndoGroupNotification")
}

/// A recorder of operations to undo and redo, in groups: Apple's `UndoManager`.
///
/// Foundation on Linux has no `UndoManager`; this is Apple's API for what a context's undo needs
/// and what code around it calls: registering closures, groups (nested, or automatic with
/// ``groupsByEvent``), undo and redo, disabling registration, ``levelsOfUndo``, action names and
/// Apple's notifications (``Foundation/NSNotification/Name/NSUndoManagerCheckpoint`` and the rest).
/// Selector-based registration and `prepare(withInvocationTarget:)` need Objective-C and are not
/// here.
///
/// Grouping by event: Apple opens a group when the first operation of a run-loop pass is
/// registered and closes it when the pass ends. Linux has no run loop to end an event, so the
/// group opened automatically stays open until a context using this manager processes its pending
/// changes (``NSManagedObjectContext/processPendingChanges()``, which runs at the end of every
/// `perform` block, at `save()`, at the end of a main-queue event for a main-queue context), or
/// until ``undo()``, ``redo()`` or ``endUndoGrouping()``.
///
/// Threading: not thread-safe, as Apple's is not (Apple's is bound to the main actor). Use it on
/// the queue of the contexts that use it: the main queue for a main-queue context.
open class UndoManager: NSObject, @unchecked Sendable {
    private final class Action {
        // Not retained, as Apple's manager does not retain targets: the target usually owns the manager.
        weak var target: AnyObject?
        let handler: (AnyObject) -> Void

        init(target: AnyObject, handler: @escaping (AnyObject) -> Void) {
            self.target = target
            self.handler = handler
        }
    }

    private enum Entry {
        case action(Action)
        case group(Group)
    }

    private final class Group {
        let parent: Group?
        var entries: [Entry] = []
        var actionName = ""

        init(parent: Group?) { self.parent = parent }
    }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// The innermost open group; its ancestors are the groups open around it.
    private var openGroup: Group?
    /// Whether the top-level open group was opened by ``groupsByEvent`` rather than by the caller.
    private var eventGroupIsOpen = false
    private var disableCount = 0

    /// Whether a registration outside any group opens one automatically; `true` by default. When
    /// `false`, register operations only between ``beginUndoGrouping()`` and ``endUndoGrouping()``.
    open var groupsByEvent = true
    /// The most top-level groups kept on the undo stack (and on the redo stack); 0, the default,
    /// keeps all. The oldest go first.
    open var levelsOfUndo = 0 {
        didSet { trim() }
    }
    /// Whether the manager is undoing a group (registrations then go to the redo stack).
    open private(set) var isUndoing = false
    /// Whether the manager is redoing a group.
    open private(set) var isRedoing = false

    public override init() { super.init() }

    // MARK: Registration

    /// Registers `handler` as an operation that undoes a change, run with `target` when its
    /// group is undone (or redone, when registered while undoing).
    ///
    /// Does nothing while registration is disabled. Outside any group, opens one when
    /// ``groupsByEvent`` is `true` and traps otherwise (Apple raises). Registering outside undo
    /// and redo clears the redo stack. The manager keeps `target` weakly; an operation whose
    /// target is gone is skipped.
    open func registerUndo<TargetType: AnyObject>(withTarget target: TargetType, handler: @escaping (TargetType) -> Void) {
        guard isUndoRegistrationEnabled else { return }
        if openGroup == nil {
            precondition(groupsByEvent, "UndoManager: must begin a group before registering undo (groupsByEvent is false)")
            // Apple opens the event's group without a checkpoint: nothing is pending yet.
            openGroup = Group(parent: nil)
            eventGroupIsOpen = true
            post(.NSUndoManagerDidOpenUndoGroup)
        }
        if !isUndoing && !isRedoing { redoStack.removeAll() }
        let action = Action(target: target) { object in
            if let typed = object as? TargetType { handler(typed) }
        }
        openGroup?.entries.append(.action(action))
    }

    /// Whether registrations are recorded: every ``disableUndoRegistration()`` must be balanced
    /// by an ``enableUndoRegistration()``.
    open var isUndoRegistrationEnabled: Bool { disableCount == 0 }

    /// Stops recording registrations until the matching ``enableUndoRegistration()``.
    ///
    /// A context registers its changes when it processes them: call
    /// ``NSManagedObjectContext/processPendingChanges()`` before disabling (so earlier changes stay
    /// undoable) and before enabling again (so the changes in between are not), as on Apple.
    open func disableUndoRegistration() { disableCount += 1 }

    /// Balances one ``disableUndoRegistration()``; traps when there is none (Apple raises).
    open func enableUndoRegistration() {
        precondition(disableCount > 0, "UndoManager: enableUndoRegistration() without a matching disableUndoRegistration()")
        disableCount -= 1
    }

    // MARK: Groups

    /// How many groups are open (nested); 0 when none is.
    open var groupingLevel: Int {
        var level = 0
        var group = openGroup
        while let current = group {
            level += 1
            group = current.parent
        }
        return level
    }

    /// Opens a group, nested in the open one if any. Posts a checkpoint first (so contexts
    /// register what is pending before the group opens), except for the group of a top-level undo
    /// or redo.
    open func beginUndoGrouping() {
        if !((isUndoing || isRedoing) && openGroup == nil) { post(.NSUndoManagerCheckpoint) }
        openGroup = Group(parent: openGroup)
        post(.NSUndoManagerDidOpenUndoGroup)
    }

    /// Closes the innermost open group; traps when none is open (Apple raises).
    ///
    /// Posts a checkpoint first, so contexts register their pending changes in the group before
    /// it closes. An empty group is dropped.
    open func endUndoGrouping() {
        precondition(openGroup != nil, "UndoManager: endUndoGrouping() without beginUndoGrouping()")
        // Cleared before the checkpoint, whose observers may close the event's group themselves.
        if openGroup?.parent == nil { eventGroupIsOpen = false }
        post(.NSUndoManagerCheckpoint)
        guard let group = openGroup else { return }
        post(.NSUndoManagerWillCloseUndoGroup)
        openGroup = group.parent
        if !group.entries.isEmpty {
            if let parent = group.parent {
                parent.entries.append(.group(group))
            } else {
                push(group)
            }
        }
        post(.NSUndoManagerDidCloseUndoGroup)
    }

    /// Ends the group ``groupsByEvent`` opened, if it is the only one open: Linux's end of an
    /// event (a context processing its pending changes).
    func endEventGroup() {
        guard eventGroupIsOpen, let group = openGroup, group.parent == nil else { return }
        endUndoGrouping()
    }

    // MARK: Undo and redo

    /// Whether there is a group to undo (open or on the undo stack).
    open var canUndo: Bool {
        if !undoStack.isEmpty { return true }
        var group = openGroup
        while let current = group {
            if !current.entries.isEmpty { return true }
            group = current.parent
        }
        return false
    }

    /// Whether there is a group to redo. Posts a checkpoint first, as Apple's does, so a context's
    /// unregistered changes (which clear the redo stack when registered) count.
    open var canRedo: Bool {
        post(.NSUndoManagerCheckpoint)
        return !redoStack.isEmpty
    }

    /// Closes the top-level group if one is open, then undoes the latest group
    /// (``undoNestedGroup()``). Traps when nested groups are open (Apple raises).
    open func undo() {
        post(.NSUndoManagerCheckpoint)
        if groupingLevel == 1 { endUndoGrouping() }
        precondition(groupingLevel == 0, "UndoManager: undo() was called with nested undo groups open; close them first")
        undoNestedGroup()
    }

    /// Undoes the latest group: the last group closed inside the open group, or else the top of
    /// the undo stack. What its operations register goes to the redo stack as one group.
    open func undoNestedGroup() {
        post(.NSUndoManagerCheckpoint)
        let group: Group
        if let open = openGroup {
            guard case .group(let nested)? = open.entries.last else { return }
            open.entries.removeLast()
            group = nested
        } else {
            guard let last = undoStack.popLast() else { return }
            group = last
        }
        post(.NSUndoManagerWillUndoChange)
        isUndoing = true
        run(group)
        isUndoing = false
        post(.NSUndoManagerDidUndoChange)
    }

    /// Redoes the group undone last; what its operations register goes to the undo stack.
    open func redo() {
        post(.NSUndoManagerCheckpoint)
        guard let group = redoStack.popLast() else { return }
        post(.NSUndoManagerWillRedoChange)
        isRedoing = true
        run(group)
        isRedoing = false
        post(.NSUndoManagerDidRedoChange)
    }

    /// Runs a group's operations, last registered first, recording what they register as one
    /// top-level group of the same name.
    private func run(_ group: Group) {
        // The group of the operations' registrations is top-level even inside an open group.
        let outer = openGroup
        let outerIsEvent = eventGroupIsOpen
        openGroup = nil
        beginUndoGrouping()
        openGroup?.actionName = group.actionName
        perform(group)
        endUndoGrouping()
        openGroup = outer
        eventGroupIsOpen = outerIsEvent
    }

    private func perform(_ group: Group) {
        for entry in group.entries.reversed() {
            switch entry {
            case .action(let action):
                if let target = action.target { action.handler(target) }
            case .group(let nested):
                perform(nested)
            }
        }
    }

    // MARK: Clearing

    /// Clears the undo and redo stacks, closes open groups and enables registration again.
    open func removeAllActions() {
        undoStack = []
        redoStack = []
        openGroup = nil
        eventGroupIsOpen = false
        disableCount = 0
    }

    /// Removes every operation registered with `target` (compared by identity) from both stacks
    /// and the open groups; groups left empty go too. Registration stays as it is.
    open func removeAllActions(withTarget target: Any) {
        let victim = target as AnyObject
        func strip(_ group: Group) {
            group.entries.removeAll { entry in
                switch entry {
                case .action(let action):
                    return action.target == nil || action.target === victim
                case .group(let nested):
                    strip(nested)
                    return nested.entries.isEmpty
                }
            }
        }
        for group in undoStack + redoStack { strip(group) }
        undoStack.removeAll { $0.entries.isEmpty }
        redoStack.removeAll { $0.entries.isEmpty }
        var group = openGroup
        while let current = group {
            strip(current)
            group = current.parent
        }
    }

    // MARK: Action names

    /// Names the group being recorded (the open top-level group, else the latest on the undo
    /// stack), for an Undo menu item. Posts a checkpoint first, so a context's pending changes are
    /// registered in the group that is named.
    open func setActionName(_ actionName: String) {
        post(.NSUndoManagerCheckpoint)
        var group = openGroup
        while let parent = group?.parent { group = parent }
        (group ?? undoStack.last)?.actionName = actionName
    }

    /// The name of the group ``undo()`` would undo; empty when unnamed.
    open var undoActionName: String { undoStack.last?.actionName ?? "" }
    /// The name of the group ``redo()`` would redo; empty when unnamed.
    open var redoActionName: String { redoStack.last?.actionName ?? "" }

    // MARK: Internals

    private func push(_ group: Group) {
        if isUndoing { redoStack.append(group) } else { undoStack.append(group) }
        trim()
    }

    private func trim() {
        guard levelsOfUndo > 0 else { return }
        if undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
        if redoStack.count > levelsOfUndo { redoStack.removeFirst(redoStack.count - levelsOfUndo) }
    }

    private func post(_ name: NSNotification.Name) {
        NotificationCenter.default.post(name: name, object: self)
    }
}
