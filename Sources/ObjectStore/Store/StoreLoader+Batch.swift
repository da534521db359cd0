import ObjectModel
import SQLite

extension StoreLoader {
  /// Inserts a batch of objects of one entity, with their many-to-many rows: the same rows as
  /// ``insert(_:manyToMany:)`` for each of ``ObjectBatch/records``, bound column by column
  /// from the batch's buffers, several to a statement (``BatchInsertion``).
  /// - Throws: ``StoreError`` naming the object that could not be inserted.
  package func insert(_ batch: ObjectBatch) throws(StoreError) {
    guard let layout else {
      throw StoreError(.unsupported, "prepare(model:entityRows:) first", path: path)
    }
    var insertion: BatchInsertion?
    do {
      insertion = try BatchInsertion(batch, into: self, layout: layout)
      try insertion?.run()
    } catch let error as StoreError {
      throw error
    } catch {
      let current = insertion?.current ?? 0
      let reference =
        current < batch.count
        ? ObjectReference(entity: batch.entity, primaryKey: batch.primaryKeys[current])
          .description : batch.entity
      throw StoreError(
        .database, "cannot insert \(reference)", path: path, underlying: error as? SQLiteError)
    }
  }
}
