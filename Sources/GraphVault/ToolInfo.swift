/// The tool's version, recorded in every archive and printed by `graphvault --version`.
public enum ToolInfo {
  /// The version.
  public static let version = "0.4.0"
}
