import ObjectModel

/// What an object source gives, in order: its head once, then chunks of objects and the rows
/// of tables the model does not describe.
///
/// `place` names where in the source an event comes from (an archive's member, a store's
/// table): what a collecting reader's messages name.
package enum StreamEvent<Head> {
  /// What the stream holds before its objects.
  case begin(Head)
  /// One chunk of objects.
  case objects(ObjectChunk, place: String)
  /// Rows of a table the model does not describe (persistent history, an app's own tables).
  case rows([[String: AttributeValue]], table: String, place: String)
}
