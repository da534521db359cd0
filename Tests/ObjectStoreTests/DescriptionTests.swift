import ObjectModel
import Testing

@testable import ObjectStore

/// What a person sees when printing graphvault's values and errors.
@Suite("Descriptions")
struct DescriptionTests {
  @Test func printingADictionaryShowsABinaryValueBySizeAndFirstBytesNotEveryByte() {
    let cover = [UInt8](repeating: 0xAB, count: 100_000)
    let dictionary = ObjectDictionary(
      entity: "Book", primaryKey: 12,
      attributes: ["title": .string("Dune"), "cover": .data(cover), "rating": nil],
      toOne: ["author": .init(entity: "Writer", primaryKey: 3)],
      toMany: ["tags": [.init(entity: "Tag", naturalKey: ["name": .string("sf")])]])
    let text = dictionary.description
    #expect(
      text
        == "Book/p12 {cover: <100000 bytes: abababababababab…>, rating: nil, title: \"Dune\", author: Writer/p3, tags: [Tag(name: \"sf\")]}"
    )
    #expect(String(describing: dictionary).count < 200)
  }

  /// The words: "a StoreError with an underlying error prints its message twice".
  @Test func anErrorWhoseDetailIsItsCausesDescriptionSaysItOnce() {
    struct Cause: Error, CustomStringConvertible {
      var description: String { "title ==: expected a value at 8" }
    }
    let repeated = StoreError(.invalidPredicate, Cause().description, underlying: Cause())
    #expect(repeated.description == "title ==: expected a value at 8")
    let other = StoreError(.database, "cannot read Book", path: "/s.sqlite", underlying: Cause())
    #expect(other.description == "cannot read Book (/s.sqlite): title ==: expected a value at 8")
  }
}
