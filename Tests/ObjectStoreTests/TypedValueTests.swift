import Foundation
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// A book class as a user (or `graphvault generate`) writes one.
final class LibraryBook: ManagedObject, EntityClass {
  static let entityName = "Book"

  var title: String? {
    get { try? value(for: "title") }
    set { try? setValue(newValue, for: "title") }
  }
}

/// Swift values in and out of attributes, with Core Data's conversions, and subclasses.
@Suite("Typed values and entity classes")
struct TypedValueTests {
  let directory: TemporaryDirectory
  let context: ObjectContext

  init() throws {
    directory = try TemporaryDirectory()
    let path = directory.path("Library.sqlite").path
    let model = try LibraryModel.make()
    try StoreCreator.create(at: path, model: model)
    context = try ObjectContext(storePath: path, model: model)
  }

  @Test func everyAttributeTypeReadsAndWritesAsItsSwiftType() throws {
    let book = try context.insert("Book")
    let id = UUID()
    let when = Date(timeIntervalSinceReferenceDate: 86_400.5)
    try book.setValue("Dune", for: "title")
    try book.setValue(id, for: "uniqueID")
    try book.setValue(Decimal(string: "10.25"), for: "price")
    try book.setValue(4.5, for: "rating")
    try book.setValue(Float(0.5), for: "weight")
    try book.setValue(Int32(3), for: "edition")
    try book.setValue(Int64(20_000_000_000), for: "sales")
    try book.setValue(false, for: "inPrint")
    try book.setValue(when, for: "publishedAt")
    try book.setValue(Data([1, 2, 3]), for: "cover")
    try book.setValue(URL(string: "https://example.org/dune"), for: "site")
    try context.save()
    #expect(try book.value(for: "title", as: String.self) == "Dune")
    #expect(try book.value(for: "uniqueID", as: UUID.self) == id)
    #expect(try book.value(for: "price", as: Decimal.self) == Decimal(string: "10.25"))
    #expect(try book.value(for: "rating", as: Double.self) == 4.5)
    #expect(try book.value(for: "weight", as: Float.self) == 0.5)
    #expect(try book.value(for: "edition", as: Int32.self) == 3)
    #expect(try book.value(for: "sales", as: Int64.self) == 20_000_000_000)
    #expect(try book.value(for: "inPrint", as: Bool.self) == false)
    #expect(try book.value(for: "publishedAt", as: Date.self) == when)
    #expect(try book.value(for: "cover", as: Data.self) == Data([1, 2, 3]))
    #expect(try book.value(for: "site", as: URL.self)?.host == "example.org")
    let untitled = try context.insert("Book")
    #expect(try untitled.value(for: "rating", as: Double.self) == nil)
    let title: String? = try book.value(for: "title")
    #expect(title == "Dune")
  }

  /// NSNumber's conversions: an integer into a Double attribute, 0 or 1 into a Boolean, a
  /// whole Double into an integer attribute, within its width.
  @Test func numbersConvertAsCoreDataConvertsThem() throws {
    let book = try context.insert("Book")
    try book.setValue(3, for: "rating")
    #expect(try book.value(for: "rating") == .double(3))
    try book.setValue(1, for: "inPrint")
    #expect(try book.value(for: "inPrint") == .bool(true))
    try book.setValue(2.0, for: "edition")
    #expect(try book.value(for: "edition") == .integer(2))
    try book.setValue(7, for: "price")
    #expect(try book.value(for: "price", as: Decimal.self) == 7)
    #expect(try book.value(for: "edition", as: Double.self) == 2)
    #expect(try book.value(for: "inPrint", as: Int.self) == 1)
    let author = try context.insert("Author")
    try author.setValue(Int16.max, for: "age")
    #expect(try author.value(for: "age", as: Int16.self) == .max)
  }

  @Test(arguments: [
    ("inPrint", "2", "Boolean"), ("edition", "2.5", "Integer 32"), ("title", "3", "String"),
    ("publishedAt", "x", "Date"),
  ])
  func aValueThatDoesNotConvertIsRefusedNamingTheAttribute(
    key: String, value: String, type: String
  ) throws {
    let book = try context.insert("Book")
    let expected = "Book.\(key) is \(type)"
    #expect {
      if let number = Double(value) {
        if number == number.rounded() {
          try book.setValue(Int(number), for: key)
        } else {
          try book.setValue(number, for: key)
        }
      } else {
        try book.setValue(value, for: key)
      }
    } throws: { error in
      (error as? StoreError)?.description.contains(expected) == true
    }
  }

  @Test func anIntegerBeyondTheAttributesWidthIsRefused() throws {
    let author = try context.insert("Author")
    #expect {
      try author.setValue(70_000, for: "age")
    } throws: { error in
      (error as? StoreError)?.description.contains("Author.age is Integer 16") == true
    }
    try author.setValue("ann", for: "alias")
    #expect {
      _ = try author.value(for: "alias", as: Int.self)
    } throws: { error in
      (error as? StoreError)?.description.contains("which is not a Int") == true
    }
  }

  /// A class registered for an entity makes its objects, and those of its sub-entities without
  /// a class of their own; typed inserts and fetches give that class.
  @Test func anEntityClassMakesItsObjects() throws {
    try context.register(LibraryBook.self)
    let dune = try context.insert(LibraryBook.self)
    dune.title = "Dune"
    let novel = try context.insert("GraphicNovel")
    try novel.setValue("Watchmen", for: "title")
    try context.save()
    #expect(novel is LibraryBook)
    let other = try ObjectContext(
      storePath: directory.path("Library.sqlite").path, model: try LibraryModel.make())
    let books = try other.fetch(
      LibraryBook.self,
      FetchRequest(entity: "Book", sortDescriptors: [ObjectStore.SortDescriptor("title")]))
    #expect(books.map(\.title) == ["Dune", "Watchmen"])
    #expect(try other.fetch(FetchRequest(entity: "Tag")).isEmpty)
    #expect(throws: StoreError.self) { try other.register(LibraryBook.self, for: "Nothing") }
  }
}
