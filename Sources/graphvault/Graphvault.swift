import ArgumentParser
import Foundation
import GraphVault

#if os(Linux)
  import CMalloc
#endif

/// The `graphvault` command: backs up, restores and migrates Core Data object graphs.
@main
struct Graphvault: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "graphvault",
    abstract: "Back up, restore and migrate Core Data object graphs (SQLite stores).",
    discussion: """
      graphvault reads Core Data SQLite stores (the files macOS and iOS apps keep), writes their \
      object graphs into compressed, verifiable archives, and restores an archive into a fresh \
      store, migrating data from older model versions on the way in.

      EXIT STATUS
      \(ExitStatus.helpTable)
      """,
    version: ToolInfo.version,
    subcommands: [
      BackupCommand.self, RestoreCommand.self, VerifyCommand.self, ListCommand.self,
      DiffCommand.self, MergeCommand.self, FindCommand.self,
      PruneCommand.self, CompactCommand.self, FixtureCommand.self, ExportCommand.self,
      ImportCommand.self,
      ModelCommand.self, MigrateCommand.self, GenerateCommand.self,
      CreateCommand.self, SampleCommand.self,
    ]
  )

  /// Runs the command, with glibc's allocator told to keep large blocks out of its arenas.
  ///
  /// glibc raises its mmap threshold each time a large block is freed (up to 32 MiB), after
  /// which the 4 MiB chunks and 8 MiB upload parts come from per-thread arenas and fragment
  /// them; pinning the threshold keeps peak memory flat as archives grow (measured on an S3
  /// backup of 1M objects: 116 → 88 MiB).
  static func main() {
    #if os(Linux)
      mallopt(M_MMAP_THRESHOLD, 1 << 20)
      FatalSignals.install()
    #endif
    StopSignals.install()
    do {
      var command = try parseAsRoot()
      try command.run()
    } catch {
      exit(withError: error, json: CommandLine.arguments.contains("--json"))
    }
  }

  /// Ends the run as argument-parser would for `error` (help, version, usage errors, exit
  /// codes); with `--json`, a usage error also prints the failure document on standard output,
  /// as every other failure does.
  static func exit(withError error: any Error, json: Bool) -> Never {
    let code = exitCode(for: error)
    // An ExitCode was thrown by a command that has reported its failure already.
    if json && !(error is ExitCode) && code.rawValue == ExitStatus.usage.rawValue {
      FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
      try? Output.json(Failure.Document(status: code.rawValue, error: message(for: error)))
      Foundation.exit(code.rawValue)
    }
    exit(withError: error)
  }
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
  @Flag(help: "Print one JSON document on standard output (messages go to standard error).")
  var json = false

  @Flag(name: .shortAndLong, help: "Print nothing but errors.")
  var quiet = false
}

/// The password of encrypted archives, for every command that reads or writes archives.
struct PasswordOptions: ParsableArguments {
  @Option(
    name: .customLong("password-file"),
    help: ArgumentHelp(
      "A file whose first line is the archives' password (else GRAPHVAULT_PASSWORD_FILE, or GRAPHVAULT_PASSWORD_COMMAND's output).",
      valueName: "file"))
  var passwordFile: String?

  /// The source named by the option or the environment.
  var source: PasswordSource? {
    PasswordSource.resolve(file: passwordFile, environment: ProcessInfo.processInfo.environment)
  }

  /// Warns (once, as the command line is parsed) about a password file others may read.
  func validate() throws {
    if let exposure = source?.exposure { Warnings.add(exposure) }
  }
}

/// Warnings of the run: each printed on standard error as it comes, and listed under
/// `"warnings"` in the `--json` document.
enum Warnings {
  /// The warnings so far. Written while the command line is parsed, before any other thread.
  nonisolated(unsafe) private(set) static var all: [String] = []

  /// Prints `warning` on standard error and keeps it for the JSON document.
  static func add(_ warning: String) {
    all.append(warning)
    FileHandle.standardError.write(Data("graphvault: warning: \(warning)\n".utf8))
  }
}

/// Reading archives' content (restore, verify, export, fixture): the password, and whether an
/// archive that is not encrypted may stand where a password was given.
struct ReadingOptions: ParsableArguments {
  @OptionGroup var password: PasswordOptions

  @Flag(
    name: .customLong("allow-unencrypted"),
    help:
      "Read an archive that is not encrypted although a password was given (refused otherwise with 77: anyone can write a plain archive)."
  )
  var allowUnencrypted = false
}

/// Waiting for another run's lock.
struct LockOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "Wait up to this many seconds for another run's lock, or for an app that has the store to be replaced open to close it (default: fail at once with 75).",
      valueName: "seconds"))
  var wait: Double?

  func validate() throws { try Self.check(wait: wait) }

  /// Refuses a `--wait` that is not a number of seconds, 0 or more.
  static func check(wait: Double?) throws {
    if let wait, !(wait >= 0) || !wait.isFinite {
      throw ValidationError("--wait must be a number of seconds, 0 or more")
    }
  }
}

/// What a migration cannot infer: `--mapping` (repeatable) and `--mappings DIR`.
struct MappingOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "A JSON mapping file, or one of the app's mapping models (.xcmappingmodel, .cdm); repeatable.",
      valueName: "file"))
  var mapping: [String] = []

  @Option(
    help: ArgumentHelp(
      "A folder whose .xcmappingmodel and .cdm files are used for the hops they map.",
      valueName: "dir"))
  var mappings: String?

  /// Whether any was given.
  var isEmpty: Bool { mapping.isEmpty && mappings == nil }
}
