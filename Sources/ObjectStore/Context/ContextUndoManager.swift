/// Records an object context's changes so that they can be undone and redone, in groups, as
/// Core Data's undo manager does for a managed object context.
///
/// Every change made through the context's API is recorded: attribute, transient and extended
/// values, to-one and to-many relationships, inserts and deletes (a delete's cascade and
/// nullified inverses included). Each top-level change is a group of its own unless
/// ``beginUndoGrouping()`` and ``endUndoGrouping()`` gather several. Undoing a group records
/// its redo; a new change after an undo clears what could be redone. Undo works across saves:
/// undone changes become unsaved changes again.
///
/// ```swift
/// context.undoManager = ContextUndoManager()
/// try book.setValue(.string("Dune"), for: "title")
/// try context.undoManager?.undo()  // the old title is back
/// ```
public final class ContextUndoManager {
  /// The context whose changes are recorded (set when assigned to one).
  weak var context: ObjectContext?
  private var undoGroups: [[UndoAction]] = []
  private var redoGroups: [[UndoAction]] = []
  private var openGroup: [UndoAction] = []
  private var replaying: Replay = .none

  private enum Replay {
    case none
    case undoing
    case redoing
  }

  /// How many groups are kept (0: all).
  public var levelsOfUndo = 0
  /// Whether a successful save forgets every recorded group (off by default).
  public var removesAllActionsOnSave = false
  /// How deeply groups are open.
  public private(set) var groupingLevel = 0

  /// An undo manager that records nothing yet.
  public init() {}

  /// Whether there is a group to undo.
  public var canUndo: Bool { !undoGroups.isEmpty }
  /// Whether there is a group to redo.
  public var canRedo: Bool { !redoGroups.isEmpty }

  /// Opens a group: the changes until the matching ``endUndoGrouping()`` undo together.
  public func beginUndoGrouping() {
    groupingLevel += 1
  }

  /// Closes the group ``beginUndoGrouping()`` opened.
  public func endUndoGrouping() {
    guard groupingLevel > 0 else { return }
    groupingLevel -= 1
    if groupingLevel == 0 && !openGroup.isEmpty {
      push(openGroup)
      openGroup = []
    }
  }

  /// Undoes the last group, recording its redo.
  /// - Throws: ``StoreError`` when a change cannot be undone (an object changed since in a way
  ///   that refuses it); the changes undone before it stay undone.
  public func undo() throws(StoreError) {
    guard groupingLevel == 0, let group = undoGroups.popLast() else { return }
    try replay(group, as: .undoing)
  }

  /// Redoes the last undone group.
  /// - Throws: ``StoreError`` as ``undo()``.
  public func redo() throws(StoreError) {
    guard groupingLevel == 0, let group = redoGroups.popLast() else { return }
    try replay(group, as: .redoing)
  }

  /// Forgets every recorded group.
  public func removeAllActions() {
    undoGroups.removeAll()
    redoGroups.removeAll()
    openGroup.removeAll()
  }

  func register(_ action: UndoAction) {
    if groupingLevel > 0 {
      openGroup.append(action)
    } else {
      push([action])
    }
  }

  private func push(_ group: [UndoAction]) {
    switch replaying {
    case .undoing:
      redoGroups.append(group)
    case .redoing:
      undoGroups.append(group)
    case .none:
      undoGroups.append(group)
      redoGroups.removeAll()
    }
    if levelsOfUndo > 0 && undoGroups.count > levelsOfUndo {
      undoGroups.removeFirst(undoGroups.count - levelsOfUndo)
    }
  }

  private func replay(_ group: [UndoAction], as mode: Replay) throws(StoreError) {
    guard let context else { return }
    replaying = mode
    beginUndoGrouping()
    defer {
      endUndoGrouping()
      replaying = .none
    }
    for action in group.reversed() { try context.apply(action) }
  }
}
