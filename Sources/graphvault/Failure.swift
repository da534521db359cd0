import ArgumentParser
import Foundation
import GraphVault

/// Turns a failure into a message on standard error and the documented exit status.
enum Failure {
  static func exitOnError(_ body: () throws -> Void) throws {
    do {
      try body()
    } catch let error as VaultError {
      FileHandle.standardError.write(Data("graphvault: \(error)\n".utf8))
      throw ExitCode(ExitStatus(error).rawValue)
    }
  }
}

/// Writes JSON documents on standard output.
enum Output {
  static func json<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    FileHandle.standardOutput.write(try encoder.encode(value))
    FileHandle.standardOutput.write(Data("\n".utf8))
  }
}

/// Progress lines on standard error, only when it is a terminal (never in logs or pipes).
enum Progress {
  static func reporter(quiet: Bool) -> (@Sendable (String) -> Void)? {
    guard !quiet, isatty(STDERR_FILENO) == 1 else { return nil }
    return { line in FileHandle.standardError.write(Data("  \(line)\n".utf8)) }
  }
}
