import ObjectModel

/// An object stream's sink that makes a new store at `path` (a private file its caller
/// publishes): the schema's tables, then the objects (a chunk of columns bound as it is,
/// records and object values row by row, links where the layout keeps them), then the
/// bookkeeping, indexes and triggers.
///
/// When the head says that the objects come in key order, the entity tables' pages are
/// written without SQLite (``StoreLoader/writeTablesDirectly()``) until one cannot be.
package final class StoreSink: ObjectSink {
  private let path: String
  private var head: StoreHead?
  private var loader: StoreLoader?
  private var writer: ObjectValueWriter?

  /// A sink making the store at `path`.
  package init(path: String) { self.path = path }

  package func begin(_ head: StoreHead) throws {
    self.head = head
    let loader = try StoreLoader(making: head, at: path)
    if head.comesInKeyOrder { try loader.writeTablesDirectly(indexes: head.schemaObjects) }
    self.loader = loader
  }

  package func take(_ chunk: ObjectChunk, from place: String) throws {
    guard let loader else { return }
    switch chunk {
    case .columns(let batch):
      try loader.insert(batch)
    case .records(let records):
      for (record, manyToMany) in records { try loader.insert(record, manyToMany: manyToMany) }
    case .objects(let objects, let links):
      let writer = try writer ?? ObjectValueWriter(loader: loader)
      self.writer = writer
      for object in objects { try writer.write(object) }
      for link in links { try writer.write(link) }
    case .encoded(let encoded):
      try take(encoded.decoded(), from: place)
    }
  }

  package func take(rows: [[String: AttributeValue]], of table: String, from place: String)
    throws
  {
    for row in rows { try loader?.insertRow(into: table, row) }
  }

  package func finish() throws {
    guard let head, let loader else { return }
    try loader.finish(making: head)
  }
}
