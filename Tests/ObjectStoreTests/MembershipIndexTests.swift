import Foundation
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// A context finds the in-memory members of a one-to-many relationship through an index of who
/// points where, kept in step with every to-one change: these tests hold it to the rule it
/// replaces, "the members are the objects whose to-one points here", through seeded runs of
/// every kind of change.
@Suite("The members of a one-to-many relationship in memory")
struct MembershipIndexTests {
  /// What one random step did, for a failure's message.
  enum Step: CustomStringConvertible {
    case move(Int, to: Int?)
    case add(Int, to: Int)
    case remove(Int, from: Int)
    case insert(to: Int)
    case delete(Int)
    case undo, save, rollback
    case refresh(folder: Int)
    case refreshNote(Int, merge: Bool)
    case elsewhere(Int, to: Int)

    var description: String {
      switch self {
      case .move(let note, let folder): "move note \(note) to \(folder.map(String.init) ?? "nil")"
      case .add(let note, let folder): "add note \(note) to folder \(folder)"
      case .remove(let note, let folder): "remove note \(note) from folder \(folder)"
      case .insert(let folder): "insert a note into folder \(folder)"
      case .delete(let note): "delete note \(note)"
      case .undo: "undo"
      case .save: "save"
      case .rollback: "roll back"
      case .refresh(let folder): "refresh folder \(folder)"
      case .refreshNote(let note, let merge): "refresh note \(note) (merge: \(merge))"
      case .elsewhere(let note, let folder):
        "another context moves note \(note) to folder \(folder), saves, and this one merges"
      }
    }
  }

  @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
  func theMembersAreTheObjectsPointingThereThroughEveryKindOfChange(seed: UInt64) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("Notes.sqlite").path
    let model = try BucketModel.make()
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    context.undoManager = ContextUndoManager()
    var folders: [ManagedObject] = []
    var notes: [ManagedObject] = []
    for index in 0..<4 {
      let folder = try context.insert("Folder")
      try folder.setValue(.string("folder \(index)"), for: "name")
      folders.append(folder)
    }
    for index in 0..<12 {
      let note = try context.insert("Note")
      try note.setValue(.string("note \(index)"), for: "title")
      try note.setObject(folders[index % 3], for: "folder")
      notes.append(note)
    }
    try context.save()
    // Read again in a fresh context, so members are computed rather than kept from the inserts.
    let fresh = try ObjectContext(storePath: path, model: model)
    fresh.undoManager = ContextUndoManager()
    folders = try folders.map { folder throws(StoreError) in
      try fresh.object(with: folder.reference)
    }
    notes = try notes.map { note throws(StoreError) in try fresh.object(with: note.reference) }

    var generator = SplitMix64(seed: seed)
    var steps: [Step] = []
    for _ in 0..<160 {
      let live = notes.indices.filter { !notes[$0].isDeleted }
      guard let note = live.randomElement(using: &generator) else { break }
      let folder = Int.random(in: 0..<folders.count, using: &generator)
      let step: Step
      switch Int.random(in: 0..<12, using: &generator) {
      case 0, 1: step = .move(note, to: Bool.random(using: &generator) ? folder : nil)
      case 2: step = .add(note, to: folder)
      case 3: step = .remove(note, from: folder)
      case 4: step = .insert(to: folder)
      case 5: step = .delete(note)
      case 6: step = .undo
      case 7: step = .save
      case 8: step = .rollback
      case 9: step = .refresh(folder: folder)
      case 10: step = .refreshNote(note, merge: Bool.random(using: &generator))
      default: step = .elsewhere(note, to: folder)
      }
      steps.append(step)
      switch step {
      case .move(let note, let folder):
        try notes[note].setObject(folder.map { folders[$0] }, for: "folder")
      case .add(let note, let folder): try folders[folder].add(notes[note], to: "notes")
      case .remove(let note, let folder):
        if try notes[note].object(for: "folder") == folders[folder] {
          try folders[folder].remove(notes[note], from: "notes")
        }
      case .insert(let folder):
        let note = try fresh.insert("Note")
        try note.setValue(.string("note \(notes.count)"), for: "title")
        try folders[folder].add(note, to: "notes")
        notes.append(note)
      case .delete(let note): try fresh.delete(notes[note])
      case .undo: if fresh.undoManager?.canUndo == true { try fresh.undoManager?.undo() }
      case .save: try fresh.save()
      case .rollback: fresh.rollback()
      case .refresh(let folder): try fresh.refresh(folders[folder], mergeChanges: true)
      case .refreshNote(let note, let merge): try fresh.refresh(notes[note], mergeChanges: merge)
      case .elsewhere(let note, let folder):
        guard !fresh.hasChanges else { continue }
        let other = try ObjectContext(storePath: path, model: model)
        guard let moved = try? other.object(with: notes[note].reference) else { continue }
        try moved.setObject(try other.object(with: folders[folder].reference), for: "folder")
        let observation = fresh.mergeChanges(fromSavesOf: other)
        try other.save()
        observation.cancel()
        #expect(observation.lastError == nil)
      }
      for (index, folder) in folders.enumerated() {
        var pointing: [ManagedObject] = []
        for note in notes where try !note.isDeleted && note.object(for: "folder") == folder {
          pointing.append(note)
        }
        #expect(
          Set(try folder.objects(for: "notes")) == Set(pointing),
          "folder \(index) after \(steps.map(\.description).joined(separator: "; "))")
      }
    }
    try fresh.save()
    let reread = try ObjectContext(storePath: path, model: model)
    for folder in folders {
      #expect(
        try reread.object(with: folder.reference).objects(for: "notes").map(\.reference).sorted {
          $0.primaryKey < $1.primaryKey
        }
          == (try folder.objects(for: "notes")).map(\.reference).sorted {
            $0.primaryKey < $1.primaryKey
          })
    }
  }
}
