import ObjectModel

/// A step between an object stream's source and its sink: objects in, objects out (a
/// migration, a selection). It may change what the stream's head says (a migration's
/// objects make a store of another model) and the chunks' shape.
package protocol ObjectStage<Input, Output>: AnyObject {
  /// The head the stage is given.
  associatedtype Input
  /// The head it gives on.
  associatedtype Output
  /// Receives the source's head (or the previous stage's); gives the head the next one gets.
  func begin(_ head: Input) throws -> Output
  /// One chunk in; the chunks it becomes out (none when every object is dropped).
  func pass(_ chunk: ObjectChunk) throws -> [ObjectChunk]
  /// Rows of a table the model does not describe in; those kept out.
  func pass(rows: [[String: AttributeValue]], of table: String) throws -> [[String: AttributeValue]]
  /// Called when the source ended sound: the chunks the stage still holds.
  func finish() throws -> [ObjectChunk]
}

extension ObjectStage {
  /// Passes rows on as they are.
  package func pass(rows: [[String: AttributeValue]], of table: String) throws
    -> [[String: AttributeValue]]
  { rows }

  /// Holds nothing back.
  package func finish() throws -> [ObjectChunk] { [] }
}
