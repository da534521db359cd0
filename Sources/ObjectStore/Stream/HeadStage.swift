/// A stage that passes every object on as it is and tells the next one what its head means
/// to it (an archive's head as the store its objects make, say).
package final class HeadStage<Input, Output>: ObjectStage {
  private let transform: (Input) throws -> Output

  /// A stage giving `transform(head)` on.
  package init(_ transform: @escaping (Input) throws -> Output) { self.transform = transform }

  package func begin(_ head: Input) throws -> Output { try transform(head) }

  package func pass(_ chunk: ObjectChunk) throws -> [ObjectChunk] { [chunk] }
}
