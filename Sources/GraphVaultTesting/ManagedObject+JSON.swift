import GraphVault
import ObjectStore

extension ManagedObject {
  /// The object as pretty-printed JSON, as `graphvault export` writes it: `"class"`, `"pk"`,
  /// attributes and relationships as references, keys sorted. Handy in expectations:
  /// `#expect(try book.json() == expected)`.
  public func json() throws -> String {
    ObjectJSON(model: managedObjectContext.model).text(try dictionary())
  }

  /// Sets what JSON text names (see ``ManagedObject/populate(from:)``):
  /// `try book.populate(json: #"{"class": "Book", "title": "Dune"}"#)`.
  public func populate(json text: String) throws {
    try populate(from: ObjectJSON(model: managedObjectContext.model).dictionary(fromText: text))
  }
}

extension ObjectContext {
  /// Creates an object from JSON text, as `graphvault import` reads it (a reference may use a
  /// natural key): `try context.insert(json: #"{"class": "Tag", "name": "classic"}"#)`.
  @discardableResult
  public func insert(json text: String) throws -> ManagedObject {
    try insert(ObjectJSON(model: model).dictionary(fromText: text))
  }
}
