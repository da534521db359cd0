internal import CArchive

/// libarchive's warnings that leave an entry intact.
enum ArchiveWarning {
  /// Whether the last warning only says a name could not be converted between UTF-8 and the
  /// process's locale (under the C locale, any non-ASCII name). The name's bytes are still
  /// stored and read back exactly, so this is not damage.
  static func isLocaleConversion(_ archive: OpaquePointer) -> Bool {
    guard let message = archive_error_string(archive).map({ String(cString: $0) }) else {
      return false
    }
    return message.contains("Can't translate") || message.contains("can't be converted")
  }
}
