internal import CSQLite

/// The arguments an SQL function is called with.
public struct FunctionArguments {
  let count: Int
  let values: UnsafeMutablePointer<OpaquePointer?>?

  /// The number of arguments.
  public var countOfArguments: Int { count }

  /// Argument `index` (0-based) as a typed value.
  public subscript(index: Int) -> SQLiteValue {
    guard index >= 0, index < count, let value = values?[index] else { return .null }
    switch sqlite3_value_type(value) {
    case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
    case SQLITE_FLOAT: return .real(sqlite3_value_double(value))
    case SQLITE_TEXT:
      let count = Int(sqlite3_value_bytes(value))
      guard let pointer = sqlite3_value_text(value) else { return .text("") }
      return .text(
        String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self))
    case SQLITE_BLOB:
      let count = Int(sqlite3_value_bytes(value))
      guard let pointer = sqlite3_value_blob(value) else { return .blob([]) }
      return .blob(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
    default: return .null
    }
  }
}

/// An error a custom SQL function reports; SQLite turns it into a failed statement whose
/// message is ``message``.
public struct FunctionError: Error, Sendable {
  /// The message SQLite reports for the failed statement.
  public let message: String
  /// Creates an error with the message SQLite should report.
  public init(_ message: String) { self.message = message }
}

final class FunctionBox {
  let name: String
  let body: (FunctionArguments) throws(FunctionError) -> SQLiteValue
  init(name: String, body: @escaping (FunctionArguments) throws(FunctionError) -> SQLiteValue) {
    self.name = name
    self.body = body
  }
}

extension Database {
  /// Registers a scalar SQL function; wraps `sqlite3_create_function_v2`.
  ///
  /// Core Data's derived-attribute triggers call functions that Core Data registers at run time
  /// (`NSCoreDataDATriggerUpdatedAffectedObjectValue` and friends); registering stand-ins with
  /// this method lets those triggers run here.
  ///
  /// - Parameters:
  ///   - name: the SQL name of the function.
  ///   - argumentCount: the number of arguments, or `-1` for any number.
  ///   - deterministic: whether the result depends only on the arguments (lets SQLite use it in
  ///     indexes and factor calls out).
  ///   - innocuous: whether the function has no side effects and reveals nothing, so that
  ///     triggers may call it on a connection whose schema is not trusted (``harden()``).
  ///   - body: computes the result; a thrown ``FunctionError`` fails the statement with its
  ///     message.
  /// - Throws: ``SQLiteError`` when SQLite refuses the registration.
  public func createFunction(
    _ name: String, argumentCount: Int = -1, deterministic: Bool = false,
    innocuous: Bool = false,
    _ body: @escaping (FunctionArguments) throws(FunctionError) -> SQLiteValue
  ) throws(SQLiteError) {
    let box = FunctionBox(name: name, body: body)
    var flags = SQLITE_UTF8
    if deterministic { flags |= SQLITE_DETERMINISTIC }
    if innocuous { flags |= SQLITE_INNOCUOUS }
    let rc = sqlite3_create_function_v2(
      handle, name, Int32(argumentCount), flags, Unmanaged.passUnretained(box).toOpaque(),
      { context, argc, argv in
        let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context))
          .takeUnretainedValue()
        let arguments = FunctionArguments(count: Int(argc), values: argv)
        do throws(FunctionError) {
          let result = try box.body(arguments)
          switch result {
          case .null: sqlite3_result_null(context)
          case .integer(let v): sqlite3_result_int64(context, v)
          case .real(let v): sqlite3_result_double(context, v)
          case .text(var v):
            v.withUTF8 { buffer in
              buffer.withMemoryRebound(to: CChar.self) {
                guard let base = $0.baseAddress else {
                  return gv_sqlite3_result_text_copy(context, "", 0)
                }
                gv_sqlite3_result_text_copy(context, base, Int32(buffer.count))
              }
            }
          case .blob(let v):
            v.withUnsafeBytes { buffer in
              gv_sqlite3_result_blob_copy(
                context, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!,
                Int32(buffer.count))
            }
          }
        } catch {
          sqlite3_result_error(context, error.message, -1)
        }
      }, nil, nil, nil)
    guard rc == SQLITE_OK else { throw self.error(code: rc, sql: nil) }
    // The connection keeps the box alive as long as SQLite may call it.
    functions.removeAll { $0.name == name }
    functions.append(box)
  }
}
