/// The keys of a format-2 object chunk and of its columns (`graphvault(1)`, ARCHIVE FORMAT).
///
/// A chunk is one dictionary: `class` (the entity of every object in it), `count`, `pk` and
/// `opt` (every object's primary key and version as ``Varint`` differences) and `columns`, an
/// array of column dictionaries (`key`, `type`, `present`, `lengths`, `values`) ordered by key
/// and type. Record `i` of the chunk is `class`, `pk[i]`, `opt[i]` and, for every column whose
/// `present` bit `i` is set (or that has no `present`), `key` → its next value; a key
/// `@columns/NAME` is the stored column `NAME` inside the record's `@columns` dictionary.
package enum ColumnLayout {
  /// The prefix of a column holding one stored column the model does not describe
  /// (`@columns/Z_FOK_BOOK`): format 1's `@columns` dictionary, one column per stored column.
  package static let storedColumnPrefix = RecordKey.columns + "/"
  /// The number of objects in the chunk.
  package static let count = "count"
  /// The array of columns.
  package static let columns = "columns"
  /// A column's record key.
  package static let key = "key"
  /// A column's kind (`ColumnBuilder.Kind`).
  package static let type = "type"
  /// A column's bitmap of the records that have a value (absent when all have one).
  package static let present = "present"
  /// A column's varint byte lengths (strings, data) or element counts (lists).
  package static let lengths = "lengths"
  /// A column's values.
  package static let values = "values"
  /// A text column's distinct words, when its values are their numbers (``WordCoding``;
  /// archive format 4).
  package static let words = "words"
  /// The size from which a column's values get a frame of their own in a framed archive
  /// (``MemberFrames``): a title's or a cover's, not an integer column's few KiB, whose frame
  /// would cost more to fetch apart than to read along.
  package static let framedValuesBytes = 32 << 10
}
