import ObjectModel

/// Two stages one after the other, as one stage.
package final class StageChain<First: ObjectStage, Second: ObjectStage>: ObjectStage
where Second.Input == First.Output {
  private let first: First
  private let second: Second

  /// `first`, then `second`.
  package init(_ first: First, _ second: Second) {
    self.first = first
    self.second = second
  }

  package func begin(_ head: First.Input) throws -> Second.Output {
    try second.begin(try first.begin(head))
  }

  package func pass(_ chunk: ObjectChunk) throws -> [ObjectChunk] {
    try first.pass(chunk).flatMap { try second.pass($0) }
  }

  package func pass(rows: [[String: AttributeValue]], of table: String) throws
    -> [[String: AttributeValue]]
  {
    let kept = try first.pass(rows: rows, of: table)
    return kept.isEmpty ? [] : try second.pass(rows: kept, of: table)
  }

  package func finish() throws -> [ObjectChunk] {
    var held = try first.finish().flatMap { try second.pass($0) }
    held += try second.finish()
    return held
  }
}

extension ObjectStage {
  /// This stage, then `next`.
  package func then<Next: ObjectStage>(_ next: Next) -> StageChain<Self, Next>
  where Next.Input == Output {
    StageChain(self, next)
  }
}
