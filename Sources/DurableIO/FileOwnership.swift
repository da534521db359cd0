import Foundation

/// Who may read or write a file, in words, for messages about permissions.
public enum FileOwnership {
  /// "owned by USER, mode 640" (the user's number when it has no name), or a sentence saying
  /// the file cannot be examined.
  public static func describe(_ path: String) -> String {
    var info = stat()
    guard stat(path, &info) == 0 else { return "it cannot be examined" }
    let name =
      getpwuid(info.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "\(info.st_uid)"
    return "owned by \(name), mode \(String(info.st_mode & 0o777, radix: 8))"
  }
}
