import Foundation

/// The `graphvault` binary that `swift build` put beside the test bundle (or the one named by
/// `GRAPHVAULT_BIN`), for tests that run the real tool.
public enum BuiltTool {
  /// The binary's path.
  public static let path: String = {
    if let override = ProcessInfo.processInfo.environment["GRAPHVAULT_BIN"], !override.isEmpty {
      return override
    }
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    // On Linux the test runner is `<products>/<package>PackageTests.xctest`; on macOS it runs
    // from inside the bundle's Contents/MacOS.
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent("graphvault")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
      directory.deleteLastPathComponent()
    }
    return SharedFixtures.packageRoot.appendingPathComponent(".build/debug/graphvault").path
  }()

  /// Runs the tool with `arguments`, with `environment` added to the test's own, in
  /// `directory` (the test's own when nil).
  public static func run(
    _ arguments: [String], input: [UInt8] = [], environment: [String: String] = [:],
    directory: String? = nil
  ) throws -> ProcessResult {
    try Subprocess.run(
      path, arguments, input: input,
      environment: environment.isEmpty
        ? nil
        : ProcessInfo.processInfo.environment.merging(environment) { $1 }, directory: directory)
  }

  /// Starts the tool with `arguments` without waiting for it.
  public static func start(_ arguments: [String]) throws -> RunningProcess {
    try RunningProcess(path, arguments)
  }
}
