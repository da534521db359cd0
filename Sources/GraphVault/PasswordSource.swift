import Foundation

/// Where an archive's password comes from: a file, or the standard output of a command, as
/// restic takes them. Never an argument: arguments are visible to every user of the machine.
public enum PasswordSource: Sendable, Equatable {
  /// The password is the file's first line.
  case file(String)
  /// The password is what the shell command prints (its first line).
  case command(String)

  /// The source the command line and environment name: `--password-file` first, then
  /// `GRAPHVAULT_PASSWORD_FILE`, then `GRAPHVAULT_PASSWORD_COMMAND`; nil when none is set.
  public static func resolve(file: String?, environment: [String: String]) -> PasswordSource? {
    if let file { return .file(file) }
    if let file = environment["GRAPHVAULT_PASSWORD_FILE"], !file.isEmpty { return .file(file) }
    if let command = environment["GRAPHVAULT_PASSWORD_COMMAND"], !command.isEmpty {
      return .command(command)
    }
    return nil
  }

  /// Reads the password: the first line, without its line ending.
  /// - Throws: ``VaultError`` (``VaultError/Kind/accessDenied``) when the file cannot be read,
  ///   the command fails, or the password is empty. Messages never include the password.
  public func read() throws(VaultError) -> [UInt8] {
    let bytes: [UInt8]
    switch self {
    case .file(let path):
      guard let data = FileManager.default.contents(atPath: path) else {
        let reason = String(cString: strerror(access(path, R_OK) == 0 ? EIO : errno))
        throw VaultError(.accessDenied, "cannot read the password file (\(path)): \(reason)")
      }
      bytes = Array(data)
    case .command(let command):
      bytes = try Self.run(command)
    }
    let line = Array(bytes.prefix { $0 != 0x0A })
    let password = line.last == 0x0D ? Array(line.dropLast()) : line
    guard !password.isEmpty else {
      throw VaultError(.accessDenied, "the password is empty (\(whence))")
    }
    return password
  }

  /// Why the password file may not be as private as a password should be (restic and ssh
  /// warn likewise): others may read it (its mode gives group or others any access), or it
  /// belongs to another user than the one running (root excepted). Nil when it is private,
  /// missing, or the password comes from a command.
  public var exposure: String? {
    guard case .file(let path) = self else { return nil }
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    let mode = status.st_mode & 0o777
    if mode & 0o077 != 0 {
      return
        "the password file \(path) can be read by others (mode \(String(mode, radix: 8))): chmod 600 it"
    }
    if status.st_uid != geteuid() && status.st_uid != 0 {
      return "the password file \(path) belongs to another user (uid \(status.st_uid))"
    }
    return nil
  }

  /// What messages call the source (never its content).
  var whence: String {
    switch self {
    case .file(let path): return "password file \(path)"
    case .command: return "GRAPHVAULT_PASSWORD_COMMAND"
    }
  }

  private static func run(_ command: String) throws(VaultError) -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let output = Pipe()
    process.standardOutput = output
    process.standardInput = FileHandle.nullDevice
    do {
      try process.run()
    } catch {
      throw VaultError(.accessDenied, "cannot run GRAPHVAULT_PASSWORD_COMMAND: \(error)")
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      let how =
        process.terminationReason == .exit
        ? "exit status \(process.terminationStatus)" : "signal \(process.terminationStatus)"
      throw VaultError(.accessDenied, "GRAPHVAULT_PASSWORD_COMMAND failed (\(how))")
    }
    return Array(data)
  }
}
