/// A link in the object stream that travels apart from the object whose relationship it is:
/// one a migration made for an object it already gave, stored by the sink where the
/// relationship's layout keeps it.
package struct LooseLink: Sendable {
  /// The object whose relationship it is.
  package var from: ObjectReference
  /// The relationship.
  package var relationship: String
  /// The link.
  package var link: ObjectLink

  /// A link of `from`'s `relationship`.
  package init(from: ObjectReference, relationship: String, link: ObjectLink) {
    self.from = from
    self.relationship = relationship
    self.link = link
  }
}
