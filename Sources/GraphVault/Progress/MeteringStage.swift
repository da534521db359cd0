import ObjectModel
import ObjectStore

/// A stage that counts an object stream on a progress meter as it passes: the total its head
/// expects, each chunk's objects under their entity, each table's rows under its name.
final class MeteringStage<Head>: ObjectStage {
  private let meter: ProgressMeter?
  private let total: (Head) -> Int?

  /// Counting on `meter` (nothing when nil), out of `total(head)` objects.
  init(_ meter: ProgressMeter?, total: @escaping (Head) -> Int?) {
    self.meter = meter
    self.total = total
  }

  func begin(_ head: Head) throws -> Head {
    meter?.setTotal(objects: total(head))
    return head
  }

  func pass(_ chunk: ObjectChunk) throws -> [ObjectChunk] {
    if let entity = chunk.entity { meter?.begin(entity) }
    meter?.add(objects: chunk.count)
    return [chunk]
  }

  func pass(rows: [[String: AttributeValue]], of table: String) throws
    -> [[String: AttributeValue]]
  {
    meter?.begin("table \(table)")
    return rows
  }
}
