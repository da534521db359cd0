/// The values of a current row, column by column: a ``Statement`` on a row, or the same row
/// loaded once (``RowColumns``). Each answers as SQLite does.
public protocol ColumnValues {
  /// The storage class of column `index`.
  func storageType(at index: Int) -> StorageType
  /// Column `index` as an integer (SQLite's conversion rules apply).
  func int64(at index: Int) -> Int64
  /// Column `index` as a double (SQLite's conversion rules apply).
  func double(at index: Int) -> Double
  /// Column `index` as text (SQLite's conversion rules apply).
  func text(at index: Int) -> String
  /// Column `index` as bytes.
  func blob(at index: Int) -> [UInt8]
}

extension Statement: ColumnValues {}
extension RowColumns: ColumnValues {}
