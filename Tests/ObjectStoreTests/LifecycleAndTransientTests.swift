import Foundation
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

/// Core Data's "Non-Standard Persistent Attributes" done with a transient attribute and its
/// persistent shadow, and the lifecycle hooks that make it work.
@Suite("Lifecycle hooks, transient attributes and their shadows")
struct LifecycleAndTransientTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Swatches.sqlite").path
    model = try ObjectModel(
      name: "Swatches",
      entities: [
        EntityDescription(
          name: "Swatch",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            // The shadow: required, so a save that validated before willSave would fail.
            AttributeDescription(name: "colorData", type: .binaryData, isOptional: false),
            AttributeDescription(name: "color", type: .undefined, isTransient: true),
          ]),
        EntityDescription(
          name: "MetallicSwatch", parent: "Swatch",
          attributes: [AttributeDescription(name: "shine", type: .double)]),
      ])
    try StoreCreator.create(at: path, model: model)
  }

  /// The app's value: not a type the store knows.
  struct RGB: Equatable, Sendable {
    var r: UInt8, g: UInt8, b: UInt8
    var bytes: [UInt8] { [r, g, b] }
  }

  /// The delayed-update setter: the shadow is written from the transient value in willSave.
  func writeShadowOnSave(_ context: ObjectContext) throws {
    try context.addHook(.willSave, for: "Swatch") { swatch in
      if let rgb = swatch.transientValue(for: "color") as? RGB {
        try swatch.setValue(.data(rgb.bytes), for: "colorData")
      }
    }
  }

  /// The on-demand getter: the transient value is decoded from the shadow once and cached
  /// without making a change.
  static func color(of swatch: ManagedObject) throws -> RGB? {
    if let cached = swatch.transientValue(for: "color") as? RGB { return cached }
    guard case .data(let bytes)? = try swatch.value(for: "colorData"), bytes.count == 3 else {
      return nil
    }
    let rgb = RGB(r: bytes[0], g: bytes[1], b: bytes[2])
    try swatch.setPrimitiveTransientValue(rgb, for: "color")
    return rgb
  }

  func storedColors() throws -> [[UInt8]] {
    let db = try Database(path: path, mode: .readOnly)
    return try db.prepare("SELECT ZCOLORDATA FROM ZSWATCH ORDER BY Z_PK").allRows().compactMap {
      $0[0].blobValue
    }
  }

  @Test func aDelayedSetWritesARequiredShadowInWillSaveAndTheFirstSaveSucceeds() throws {
    let context = try ObjectContext(storePath: path, model: model)
    try writeShadowOnSave(context)
    let swatch = try context.insert("Swatch")
    try swatch.setTransientValue(RGB(r: 1, g: 2, b: 3), for: "color")
    #expect(try swatch.value(for: "colorData") == nil)
    // Core Data validates before willSave: this first save would fail there (the documented
    // trap). Here the hooks run first and validation sees the shadow they wrote.
    try context.save()
    #expect(try storedColors() == [[1, 2, 3]])
    // Changing only the transient value is a change, and its save rewrites the shadow.
    try swatch.setTransientValue(RGB(r: 9, g: 8, b: 7), for: "color")
    #expect(context.hasChanges)
    try context.save()
    #expect(try storedColors() == [[9, 8, 7]])
    #expect(!context.hasChanges)
  }

  @Test func withoutTheHookTheRequiredShadowFailsValidation() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let swatch = try context.insert("Swatch")
    try swatch.setTransientValue(RGB(r: 1, g: 2, b: 3), for: "color")
    do {
      try context.save()
      Issue.record("saved without its shadow")
    } catch {
      #expect(error.description.contains("Swatch.colorData is required and has no value"))
    }
    #expect(try storedColors().isEmpty)
  }

  /// The issue's words: "a required transient attribute left nil still saves" where Core Data
  /// refuses it; set, it saves, and nothing of it is written.
  @Test func aRequiredTransientAttributeLeftNilFailsTheSave() throws {
    let notes = try ObjectModel(
      name: "Notes",
      entities: [
        EntityDescription(
          name: "Note",
          attributes: [
            AttributeDescription(name: "text", type: .string),
            AttributeDescription(
              name: "draft", type: .string, isOptional: false, isTransient: true),
          ])
      ])
    let store = directory.path("Notes.sqlite").path
    try StoreCreator.create(at: store, model: notes)
    let context = try ObjectContext(storePath: store, model: notes)
    let note = try context.insert("Note")
    try note.setValue(.string("hello"), for: "text")
    #expect {
      try context.save()
    } throws: { error in
      (error as? StoreError)?.kind == .validation
        && "\(error)".contains("Note.draft is required and has no value")
    }
    try note.setTransientValue("unsaved words", for: "draft")
    try context.save()
    #expect(try sqlRows(store, "SELECT ZTEXT FROM ZNOTE") == ["hello"])
  }

  @Test func anImmediateSetWritesBothAtOnce() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let swatch = try context.insert("Swatch")
    let rgb = RGB(r: 4, g: 5, b: 6)
    try swatch.setTransientValue(rgb, for: "color")
    try swatch.setValue(.data(rgb.bytes), for: "colorData")
    try context.save()
    #expect(try storedColors() == [[4, 5, 6]])
  }

  @Test func theLazyGetterDecodesTheShadowOnceWithoutMakingAChange() throws {
    do {
      let writer = try ObjectContext(storePath: path, model: model)
      let swatch = try writer.insert("Swatch")
      try swatch.setValue(.data([7, 7, 7]), for: "colorData")
      try writer.save()
    }
    let context = try ObjectContext(storePath: path, model: model)
    let swatch = try #require(try context.fetch(FetchRequest(entity: "Swatch")).first)
    #expect(swatch.transientValue(for: "color") == nil)
    #expect(try Self.color(of: swatch) == RGB(r: 7, g: 7, b: 7))
    #expect(swatch.transientValue(for: "color") as? RGB == RGB(r: 7, g: 7, b: 7))
    #expect(!context.hasChanges)
    // A rollback forgets transient values along with other unsaved state.
    try swatch.setTransientValue(RGB(r: 0, g: 0, b: 1), for: "color")
    #expect(context.hasChanges)
    context.rollback()
    #expect(!context.hasChanges)
    #expect(swatch.transientValue(for: "color") == nil)
    #expect(throws: StoreError.self) { try swatch.setTransientValue(1, for: "name") }
  }

  @Test func hooksRunInOrderForTheEntityAndItsSubEntities() throws {
    final class Log: @unchecked Sendable { var lines: [String] = [] }
    let log = Log()
    let context = try ObjectContext(storePath: path, model: model)
    for event in LifecycleEvent.allCases {
      try context.addHook(event, for: "Swatch") { log.lines.append("\(event) \($0.entity)") }
    }
    try context.addHook(.awakeFromInsert, for: "MetallicSwatch") { swatch in
      log.lines.append("awakeFromInsert only metallic")
      try swatch.setValue(.double(0.5), for: "shine")
    }
    try context.addHook(.willSave, for: "Swatch") { swatch in
      if try swatch.value(for: "colorData") == nil {
        try swatch.setValue(.data([0, 0, 0]), for: "colorData")
      }
    }
    let plain = try context.insert("Swatch")
    let metal = try context.insert("MetallicSwatch")
    #expect(try metal.value(for: "shine") == .double(0.5))
    #expect(
      log.lines == [
        "awakeFromInsert Swatch", "awakeFromInsert MetallicSwatch",
        "awakeFromInsert only metallic",
      ])
    log.lines.removeAll()
    try context.save()
    #expect(
      log.lines == [
        "willSave MetallicSwatch", "willSave Swatch", "didSave MetallicSwatch", "didSave Swatch",
      ])
    _ = plain
    log.lines.removeAll()
    let reader = try ObjectContext(storePath: path, model: model)
    try reader.addHook(.awakeFromFetch, for: "Swatch") { log.lines.append("fetched \($0)") }
    _ = try reader.fetch(FetchRequest(entity: "Swatch"))
    _ = try reader.fetch(FetchRequest(entity: "Swatch"))
    #expect(log.lines == ["fetched Swatch/p1", "fetched MetallicSwatch/p2"])
    #expect(throws: StoreError.self) { try context.addHook(.willSave, for: "Nope") { _ in } }
  }

  @Test func aFailingWillSaveWritesNothingAndDidSaveMayNotChangeObjects() throws {
    struct Refused: Error {}
    let context = try ObjectContext(storePath: path, model: model)
    var refuse = true
    try context.addHook(.willSave, for: "Swatch") { _ in if refuse { throw Refused() } }
    let swatch = try context.insert("Swatch")
    try swatch.setValue(.data([1, 1, 1]), for: "colorData")
    do {
      try context.save()
      Issue.record("saved")
    } catch {
      #expect(error.description.contains("Swatch/p1: willSave failed"))
    }
    #expect(try storedColors().isEmpty)
    #expect(context.hasChanges)
    refuse = false
    try context.addHook(.didSave, for: "Swatch") { try $0.setValue(.string("late"), for: "name") }
    do {
      try context.save()
      Issue.record("didSave changed an object")
    } catch {
      #expect(error.description.contains("cannot change in didSave"))
    }
    // The save itself was committed before didSave ran.
    #expect(try storedColors() == [[1, 1, 1]])
    #expect(try swatch.value(for: "name") == nil)
  }
}
