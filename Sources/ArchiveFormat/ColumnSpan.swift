/// Where one column's values lie in a chunk's encoded bytes: the payload of its `values` data
/// (no marker, no count). A framed archive gives each such span of a large column a frame of
/// its own (``MemberFrames``), so that a reader of some columns skips the others' bytes.
package struct ColumnSpan: Sendable, Equatable {
  /// The column's key (``ColumnLayout``: an attribute, `NAME@entity`, `@columns/NAME`, …).
  package let key: String
  /// The bytes, as offsets into the chunk's content.
  package let range: Range<Int>

  package init(key: String, range: Range<Int>) {
    self.key = key
    self.range = range
  }
}
