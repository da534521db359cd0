import ObjectModel
import SQLite

/// Which objects of a batch a selection's predicate (``FixtureCutter/Selection/predicate``)
/// chooses, decided by SQLite with the condition a store's selection query uses: each batch's
/// primary keys and the attributes the predicate reads are put in a private temporary database
/// laid out as the model's store, queried, and cleared. For reading part of an archive: the
/// rows that may be selected, without loading every object.
///
/// Only a predicate on the object's own attributes can be decided this way (a key path, a
/// to-one compared or a count read other objects): ``init(_:model:)`` is nil for any other.
package final class SelectionFilter {
  private let loader: StoreLoader
  private let query: Statement
  private let bindings: [SQLiteValue]
  private let clear: Statement
  /// The attributes the predicate reads; nil for every attribute (an extended attribute's
  /// bucket).
  private let attributes: Set<String>?
  private let predicate: ResolvedPredicate

  /// A filter for `selection`'s predicate on objects of `model`; nil when the selection has no
  /// predicate or it reads other objects than the one tested.
  /// - Throws: ``StoreError`` for a predicate that does not parse or fit the model.
  package init?(_ selection: FixtureCutter.Selection, model: ObjectModel) throws(StoreError) {
    guard let text = selection.predicate else { return nil }
    let resolved: ResolvedPredicate
    do {
      resolved = try ResolvedPredicate.resolve(
        PredicateParser.parse(text), text: text, model: model, entity: selection.entity)
    } catch {
      throw StoreError(.invalidPredicate, error.description, underlying: error)
    }
    guard !resolved.followsRelationships else { return nil }
    attributes = resolved.hasExtendedTest ? nil : Set(resolved.attributeNames)
    predicate = resolved
    let schema = try StoreSchema(model: model)
    loader = try StoreLoader(path: StoreLoader.privateTemporary)
    try loader.createTables(schema.schemaObjects.filter { $0.type == "table" })
    try loader.prepare(model: model, entityRows: schema.entityRows(maxima: [:]))
    guard let layout = loader.layout, let table = layout.table(for: selection.entity) else {
      throw StoreError(.invalidValue, "the model has no entity \(selection.entity)")
    }
    var bindings: [SQLiteValue] = []
    let condition = try PredicateSQL.condition(
      text, entity: selection.entity, layout: layout, alias: table.name, bindings: &bindings,
      path: nil)
    self.bindings = bindings
    do {
      try PredicateSQL.registerFunctions(on: loader.database)
      query = try loader.database.prepare(
        "SELECT Z_PK FROM \(table.name) WHERE Z_ENT IN (\(layout.entityNumberList(selection.entity))) AND (\(condition))"
      )
      clear = try loader.database.prepare("DELETE FROM \(table.name)")
    } catch {
      throw StoreError(.database, "cannot prepare the selection's query", underlying: error)
    }
  }

  /// The attributes the predicate reads (what ``matches(_:)`` needs of a batch); nil for
  /// every attribute.
  package var testedAttributes: Set<String>? { attributes }

  /// Whether objects whose attributes lie within `bounds` (by attribute name: a chunk's, as
  /// its index entry gives them) may be chosen: false only when none can, so that the chunk
  /// need not be read.
  package func mayMatch(within bounds: [String: ValueBounds]) -> Bool {
    predicate.mayMatch(within: bounds)
  }

  /// The positions (ascending) of `batch`'s objects the predicate chooses.
  /// - Throws: ``StoreError`` when SQLite fails.
  package func matches(_ batch: ObjectBatch) throws(StoreError) -> [Int] {
    var tested = ObjectBatch(
      entity: batch.entity, primaryKeys: batch.primaryKeys, versions: batch.versions)
    tested.attributes = batch.attributes.filter { attributes?.contains($0.name) ?? true }
    try loader.insert(tested)
    var position: [Int64: Int] = [:]
    for (index, key) in batch.primaryKeys.enumerated() { position[key] = index }
    do {
      defer {
        query.reset(clearBindings: false)
        clear.reset(clearBindings: false)
      }
      try query.bind(bindings)
      let chosen = try query.allRows().compactMap { $0[0].integerValue.flatMap { position[$0] } }
      try clear.run()
      return chosen.sorted()
    } catch {
      throw StoreError(.database, "cannot test \(batch.entity) objects", underlying: error)
    }
  }
}

extension ResolvedPredicate {
  /// The names of the attributes its tests read on the tested object.
  var attributeNames: [String] {
    switch self {
    case .constant: return []
    case .test(let test):
      if case .attribute(let attribute) = test.target { return [attribute.name] }
      return []
    case .and(let parts), .or(let parts): return parts.flatMap(\.attributeNames)
    case .not(let inner): return inner.attributeNames
    }
  }
}
