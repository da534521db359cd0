internal import CSQLite

/// The current row of a statement, each column read from SQLite once (``load()``): its storage
/// class and its integer, real, or text or blob bytes in place. A reader that both hashes a row
/// (``hash(_:into:)``) and reads it typed asks SQLite for each value once instead of twice:
/// every `sqlite3_column_*` call finds the column again.
///
/// Each accessor answers as the ``Statement`` accessor of the same name does: a value asked for
/// in its own storage class (or an integer asked for as a real, which is exact) comes from what
/// was loaded; any other conversion is left to SQLite, on the statement. The bytes of text and
/// blobs are SQLite's, valid until the statement moves (load again after every step) or until
/// a conversion of that column (a blob read as text may move its bytes): read a column's bytes
/// before converting it.
public final class RowColumns {
  @usableFromInline struct Column {
    @usableFromInline var type = StorageType.null
    /// An integer's or a real's bits.
    @usableFromInline var number: UInt64 = 0
    @usableFromInline var pointer: UnsafeRawPointer?
    @usableFromInline var count = 0
  }

  // The accessors are inlined into their callers in other modules (a reader calls them for
  // every value); the loading, which calls SQLite, is not. The columns are a buffer this object
  // owns, not an array in a `var`, whose every read would be checked for exclusive access.
  @usableFromInline let statement: Statement
  @usableFromInline let columns: UnsafeMutableBufferPointer<Column>

  /// A row of `statement`'s columns; nothing is loaded yet.
  public init(of statement: Statement) {
    self.statement = statement
    columns = .allocate(capacity: statement.columnCount)
    columns.initialize(repeating: Column())
  }

  deinit { columns.deallocate() }

  /// Reads every column of the statement's current row.
  public func load() {
    let handle = statement.handle
    for index in columns.indices {
      columns[index] = Column(sqlite3_column_value(handle, Int32(index)))
    }
  }

  /// The storage class of column `index`.
  @inlinable
  public func storageType(at index: Int) -> StorageType { columns[index].type }

  /// Whether column `index` is `NULL`.
  @inlinable
  public func isNull(at index: Int) -> Bool { columns[index].type == .null }

  /// Column `index` as an integer (SQLite's conversion rules apply).
  @inlinable
  public func int64(at index: Int) -> Int64 {
    let column = columns[index]
    if column.type == .integer { return Int64(bitPattern: column.number) }
    return statement.int64(at: index)
  }

  /// Column `index` as a double (SQLite's conversion rules apply).
  @inlinable
  public func double(at index: Int) -> Double {
    let column = columns[index]
    switch column.type {
    case .real: return Double(bitPattern: column.number)
    case .integer: return Double(Int64(bitPattern: column.number))
    default: return statement.double(at: index)
    }
  }

  /// Column `index` as text (SQLite's conversion rules apply).
  @inlinable
  public func text(at index: Int) -> String {
    withText(at: index) { String(decoding: $0, as: UTF8.self) }
  }

  /// Column `index` as bytes.
  @inlinable
  public func blob(at index: Int) -> [UInt8] {
    withBlob(at: index) { Array($0) }
  }

  /// Calls `body` with column `index` as UTF-8 text (SQLite's conversion rules apply) without
  /// copying it. The buffer is valid only inside `body`.
  @inlinable
  public func withText<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows
    -> R
  {
    let column = columns[index]
    guard column.type == .text else { return try statement.withText(at: index, body) }
    return try body(UnsafeRawBufferPointer(start: column.pointer, count: column.count))
  }

  /// Calls `body` with the bytes of column `index` (a text's UTF-8) without copying them. The
  /// buffer is valid only inside `body`.
  @inlinable
  public func withBlob<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
  {
    let column = columns[index]
    guard column.type == .blob || column.type == .text else {
      return try statement.withBlob(at: index, body)
    }
    return try body(UnsafeRawBufferPointer(start: column.pointer, count: column.count))
  }

  /// Feeds columns `order` (indices, in the order given) into `hasher`, each with its storage
  /// class: what ``Statement/hashColumns(from:into:)`` feeds for the same columns.
  public func hash(_ order: [Int32], into hasher: inout RowHasher) {
    for index in order { columns[Int(index)].hash(into: &hasher) }
  }
}

extension RowColumns.Column {
  /// A column's value as SQLite gives it (`sqlite3_column_value`), read by its storage class:
  /// how a row is read once (``RowColumns/load()``) and how a statement hashes a column
  /// (``Statement/hashColumns(from:into:)``).
  @inline(__always)
  init(_ value: OpaquePointer?) {
    let type = sqlite3_value_type(value)
    self.init()
    self.type = StorageType(rawValue: type) ?? .null
    switch type {
    case SQLITE_INTEGER: number = UInt64(bitPattern: sqlite3_value_int64(value))
    case SQLITE_FLOAT: number = sqlite3_value_double(value).bitPattern
    case SQLITE_TEXT:
      pointer = UnsafeRawPointer(sqlite3_value_text(value))
      count = pointer == nil ? 0 : Int(sqlite3_value_bytes(value))
    case SQLITE_BLOB:
      pointer = sqlite3_value_blob(value)
      count = pointer == nil ? 0 : Int(sqlite3_value_bytes(value))
    default: break
    }
  }

  /// Feeds the value into `hasher` with its storage class (``RowHasher``).
  @inline(__always)
  func hash(into hasher: inout RowHasher) {
    switch type {
    case .integer: hasher.add(integer: Int64(bitPattern: number))
    case .real: hasher.add(real: Double(bitPattern: number))
    case .text, .blob:
      hasher.add(bytes: UnsafeRawBufferPointer(start: pointer, count: count), isText: type == .text)
    case .null: hasher.addNull()
    }
  }
}
