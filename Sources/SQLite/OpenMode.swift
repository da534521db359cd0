/// How a database file is opened.
public enum OpenMode: Sendable, Equatable {
  /// Read-only. The file must exist. Nothing is written to the main file or its `-wal`, and
  /// closing the connection neither checkpoints nor deletes the write-ahead log.
  case readOnly
  /// Read-write. The file must exist.
  case readWrite
  /// Read-write, creating the file when it does not exist.
  case readWriteCreate
}
