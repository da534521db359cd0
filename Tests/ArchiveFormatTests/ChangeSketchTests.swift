import ObjectStore
import Testing

@testable import ArchiveFormat

/// The change sketch against Swift's own sets: what it reads back of two sets' difference is
/// exactly their difference, and it says so when it cannot.
@Suite("Change sketches")
struct ChangeSketchTests {
  struct Element: Hashable {
    let key: Int64
    let hash: UInt64
  }

  /// `elements` elements with keys 1, 2, …; then `changes` of them changed, deleted or
  /// inserted, as a night's work does.
  static func sets(elements: Int, changes: Int, seed: UInt64) -> (Set<Element>, Set<Element>) {
    var values = SplitMix64(seed: seed)
    let before = Set((1...Int64(elements)).map { Element(key: $0, hash: values.next()) })
    var after = Dictionary(uniqueKeysWithValues: before.map { ($0.key, $0.hash) })
    for change in 0..<changes {
      let key = Int64(values.next() % UInt64(elements)) + 1
      switch change % 3 {
      case 0: after[key] = values.next()
      case 1: after[key] = nil
      default: after[Int64(elements + change + 1)] = values.next()
      }
    }
    return (before, Set(after.map { Element(key: $0.key, hash: $0.value) }))
  }

  static func sketch(_ set: Set<Element>, cells: Int, seed: UInt64) -> ChangeSketch {
    var sketch = ChangeSketch(cells: cells, seed: seed)
    for element in set { sketch.insert(key: element.key, hash: element.hash) }
    return sketch
  }

  @Test(arguments: [(10_000, 20), (10_000, 40), (100_000, 300), (500, 1)])
  func theDifferenceReadBackIsTheSetsDifference(elements: Int, changes: Int) throws {
    let (before, after) = Self.sets(elements: elements, changes: changes, seed: UInt64(elements))
    let cells = ChangeSketch.cells(forElements: elements)
    let old = Self.sketch(before, cells: cells, seed: 99)
    let new = Self.sketch(after, cells: cells, seed: 99)
    let difference = try #require(new.difference(from: old))
    #expect(
      Set(difference.added.map { Element(key: $0.key, hash: $0.hash) }) == after.subtracting(before)
    )
    #expect(
      Set(difference.removed.map { Element(key: $0.key, hash: $0.hash) })
        == before.subtracting(after))
  }

  @Test func sketchesOfTwoPartsMergedAreTheSketchOfTheWhole() throws {
    let (before, after) = Self.sets(elements: 5_000, changes: 30, seed: 9)
    let whole = Self.sketch(before, cells: 600, seed: 4)
    let low = Set(before.filter { $0.key < 1_700 })
    var merged = Self.sketch(low, cells: 600, seed: 4)
    merged.merge(Self.sketch(before.subtracting(low), cells: 600, seed: 4))
    #expect(merged == whole)
    // And a difference against a merged sketch reads back as against the whole one.
    let now = Self.sketch(after, cells: 600, seed: 4)
    let read = try #require(now.difference(from: merged))
    #expect(
      Set(read.added.map { Element(key: $0.key, hash: $0.hash) }) == after.subtracting(before))
  }

  @Test func elementsInsertedManyAtATimeMakeTheSketchOfOneAtATime() throws {
    let (before, after) = Self.sets(elements: 5_000, changes: 30, seed: 13)
    let elements = Array(before)
    var batched = ChangeSketch(cells: 601, seed: 6)
    for part in stride(from: 0, to: elements.count, by: 777) {
      let slice = elements[part..<min(part + 777, elements.count)]
      batched.insert(keys: slice.map(\.key), hashes: slice.map(\.hash))
    }
    #expect(batched == Self.sketch(before, cells: 601, seed: 6))
    batched.insert(keys: [], hashes: [])
    #expect(batched == Self.sketch(before, cells: 601, seed: 6))
    let read = try #require(Self.sketch(after, cells: 601, seed: 6).difference(from: batched))
    #expect(
      Set(read.removed.map { Element(key: $0.key, hash: $0.hash) }) == before.subtracting(after))
  }

  @Test func aDifferenceTooLargeForTheCellsIsNotRead() {
    let (before, after) = Self.sets(elements: 10_000, changes: 2_000, seed: 5)
    let old = Self.sketch(before, cells: 96, seed: 1)
    let new = Self.sketch(after, cells: 96, seed: 1)
    #expect(new.difference(from: old) == nil)
  }

  @Test func equalSetsHaveNoDifferenceAndOrderDoesNotMatter() throws {
    let (before, _) = Self.sets(elements: 2_000, changes: 0, seed: 8)
    var shuffled = ChangeSketch(cells: 96, seed: 3)
    for element in before.sorted(by: { $0.hash < $1.hash }) {
      shuffled.insert(key: element.key, hash: element.hash)
    }
    let difference = try #require(
      shuffled.difference(from: Self.sketch(before, cells: 96, seed: 3)))
    #expect(difference.added.isEmpty && difference.removed.isEmpty)
  }

  @Test func aSketchSurvivesItsBytesAndRefusesTheWrongCount() throws {
    let (before, _) = Self.sets(elements: 1_000, changes: 0, seed: 2)
    let sketch = Self.sketch(before, cells: 99, seed: 4)
    let bytes = sketch.serialized
    #expect(ChangeSketch(serialized: bytes, cells: 99, seed: 4) == sketch)
    #expect(ChangeSketch(serialized: bytes, cells: 96, seed: 4) == nil)
    #expect(ChangeSketch(serialized: Array(bytes.dropLast()), cells: 99, seed: 4) == nil)
  }

  @Test func sketchesOfAnotherSizeOrSeedAreNotCompared() {
    let a = ChangeSketch(cells: 96, seed: 1)
    #expect(a.difference(from: ChangeSketch(cells: 99, seed: 1)) == nil)
    #expect(a.difference(from: ChangeSketch(cells: 96, seed: 2)) == nil)
  }
}
